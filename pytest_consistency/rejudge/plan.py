"""Which re-judging item is which, and where its cassette lives.

A rejudge session runs each marked task's n recorded repetitions M times each: item i (1-based, the repetition
parameter) is judge sample j of repetition r, i = (r - 1) M + j, shown as ``rep<r>@judge<j>``. Its cassette is
``<task's cassette dir>/rejudge/rep-<r>/judge-<j>.yaml`` (``.json`` with the JSON cassette format), beside the
repetition ``rep-<r>.yaml`` it replays. Pure: no pytest, no vcrpy.
"""

from __future__ import annotations

from pathlib import Path

#: The folder under a task's cassette directory that holds its judge samples.
SAMPLES_DIR = "rejudge"


def split(index: int, samples: int) -> tuple[int, int]:
    """(repetition r, judge sample j) of item ``index`` (1-based) when each repetition is judged ``samples`` times."""
    if index < 1 or samples < 1:
        raise ValueError(f"item {index} of {samples} judge sample(s) per repetition")
    return (index - 1) // samples + 1, (index - 1) % samples + 1


def index_of(repeat: int, sample: int, samples: int) -> int:
    """The item index of judge sample ``sample`` of repetition ``repeat`` (the inverse of :func:`split`)."""
    return (repeat - 1) * samples + sample


def sample_cassette(task_directory: Path, repeat: int, sample: int, suffix: str, role: str = "judge") -> Path:
    """``<task dir>/rejudge/rep-<r>/judge-<j><suffix>``; ``agent-<j>`` for the samples of the agent
    (``--consistency-rejudge-role=agent``)."""
    return task_directory / SAMPLES_DIR / f"rep-{repeat}" / f"{role}-{sample}{suffix}"


def source_cassette(task_directory: Path, repeat: int, suffix: str) -> Path:
    """The repetition a sample replays: ``<task dir>/rep-<r><suffix>``, as every repetition is recorded."""
    return task_directory / f"rep-{repeat}{suffix}"
