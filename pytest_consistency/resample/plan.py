"""What a resample session was asked to do, and whether it can: ``TASK@STEP``, M samples, from repetition REP.

Why here and pure: the three options are parsed by the option table (:mod:`..options`), which must not import
pytest, and every check a user can trip (an unknown task, a step beyond the recording, a repetition beyond n)
must be a sentence that names the option and the fix, tested without a session.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from pytest_consistency.config.parse import Target

#: Where the samples of ``TASK@STEP`` resampled from repetition REP live, under the task's cassette directory.
SAMPLES_DIR = "resample"


#: How the refusals about TASK itself begin, after the option (the bisection command names TASK for them).
NOT_COLLECTED = "no marked task "
NOT_MARKED = "is not a @pytest.mark.repeat_consistency task"


class ResampleError(ValueError):
    """A resample option cannot be carried out; the message names the option and the fix."""


@dataclass(frozen=True)
class Plan:
    """A resample session: the target, the number of samples M, and the repetition whose prefix is replayed."""

    target: Target
    samples: int
    source: int = 1

    @property
    def task(self) -> str:
        return self.target.task

    @property
    def step(self) -> int:
        return self.target.step

    def covers(self, task_id: str | None) -> bool:
        return task_id == self.task

    def samples_dir(self, source_cassette: Path) -> Path:
        """``<task's cassette dir>/resample/rep<REP>@<STEP>/``: beside the repetitions it was resampled from."""
        return source_cassette.parent / SAMPLES_DIR / f"rep{self.source}@{self.step}"

    def sample_cassette(self, source_cassette: Path, sample: int) -> Path:
        return self.samples_dir(source_cassette) / f"sample-{sample}.yaml"


def close_ids(task: str, known: list[str], limit: int = 5) -> list[str]:
    """The known task ids closest to ``task``: same-function ids first, then difflib's nearest."""
    close = difflib.get_close_matches(task, known, n=limit, cutoff=0.5)
    head = task.split("[", 1)[0]
    same = [t for t in known if t.split("[", 1)[0] == head and t not in close]
    return (close + same)[:limit]


def unknown_task(plan: Plan, marked: list[str], unmarked: list[str]) -> str | None:
    """Why the target task cannot be resampled (not collected, not a marked task), or None when it can."""
    if plan.task in marked:
        return None
    flag = f"--consistency-resample={plan.target}"
    if plan.task in unmarked:
        return (
            f"{flag}: {plan.task} {NOT_MARKED} (it has no repetitions, so no "
            "cassette per repetition to replay a prefix from); mark it, record it, then resample it"
        )
    return f"{flag}: {NOT_COLLECTED}{plan.task!r} was collected (TASK is the task id as the report prints it); " + (
        known_ids(plan.task, marked)
    )


def known_ids(task: str, marked: list[str], limit: int = 5) -> str:
    """What to choose from instead of ``task``: the closest marked ids, else the first ones collected, else none."""
    near = close_ids(task, marked, limit)
    if near:
        return "the closest task ids: " + ", ".join(near)
    if not marked:
        return "no marked task was collected (are the paths that hold it among the arguments?)"
    more = f" (and {len(marked) - limit} more)" if len(marked) > limit else ""
    return "none is close; the marked tasks collected: " + ", ".join(marked[:limit]) + more


def source_problem(plan: Plan, n: int) -> str | None:
    """REP beyond the task's repetitions."""
    if plan.source > n:
        return (
            f"--consistency-resample-from={plan.source}: {plan.task} has {n} repetition(s); choose a repetition "
            f"from 1 to {n}"
        )
    return None


def step_problem(plan: Plan, steps: int, cassette: str) -> str | None:
    """STEP beyond the steps REP recorded (a step is one answered model call, in the order the agent made them)."""
    if steps == 0:
        return (
            f"--consistency-resample={plan.target}: repetition {plan.source}'s cassette {cassette} holds no recorded "
            "model call; record the task first (--consistency-record=all)"
        )
    if plan.step > steps:
        return (
            f"--consistency-resample={plan.target}: step {plan.step} is out of range; repetition {plan.source} of "
            f"{plan.task} made {steps} model call(s) ({cassette}), so STEP is 1 to {steps}"
        )
    return None
