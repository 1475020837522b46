"""Source code of inner test suites whose outcomes follow a known pattern, for ``pytester``."""

from __future__ import annotations

import json
from typing import Any


def pattern_suite(
    patterns: dict[str, str],
    answers: dict[str, list[Any]] | None = None,
    marker: str = "",
) -> str:
    """One parametrized task per key; repetition i passes when ``patterns[task][i-1] == "P"``."""
    n = len(next(iter(patterns.values())))
    args = f"n={n}" + (f", {marker}" if marker else "")
    return f"""
import json
import pytest

PATTERNS = json.loads({json.dumps(json.dumps(patterns))})
ANSWERS = json.loads({json.dumps(json.dumps(answers or {}))})

@pytest.mark.parametrize("task", list(PATTERNS))
@pytest.mark.repeat_consistency({args})
def test_task(task, consistency):
    if task in ANSWERS:
        consistency.record(ANSWERS[task][consistency.repeat - 1])
    assert PATTERNS[task][consistency.repeat - 1] == "P"
"""


def published_patterns(all_pass: int = 89, successes: int = 650, tasks: int = 168) -> dict[str, str]:
    """AppWorld-shaped outcomes: ``all_pass`` tasks pass 5/5, the rest share the remaining successes."""
    patterns = {f"t{i:03d}": "PPPPP" for i in range(all_pass)}
    flaky = tasks - all_pass
    base, extra = divmod(successes - 5 * all_pass, flaky)
    for j in range(flaky):
        c = base + (1 if j < extra else 0)
        patterns[f"t{all_pass + j:03d}"] = "P" * c + "F" * (5 - c)
    return patterns


def run_recorded(pytester: Any, base_url: str, mode: str, *args: str) -> Any:
    """An inner session on the loopback route in cassette mode ``mode``, writing ``report.json``."""
    return pytester.runpytest(
        f"--consistency-base-url={base_url}",
        "--consistency-model=fake-model",
        f"--consistency-record={mode}",
        "--consistency-report=report.json",
        *args,
    )


def without_timings(report: dict[str, Any]) -> dict[str, Any]:
    """The report without wall-clock figures (durations, latencies), which differ run to run."""
    for task in report["tasks"]:
        for rep in task["repetitions"]:
            rep.pop("duration_s")
            for call in rep["calls"]:
                call.pop("latency_ms")
    return report
