"""The paired change of the consistency gap between two runs of the same tasks (stats.gap_change)."""

from __future__ import annotations

import pytest

from pytest_consistency.stats.gap_change import paired_gap_difference
from pytest_consistency.stats.metrics import TaskCounts
from pytest_consistency.stats.suite import (
    TARGETS,
)


def suite_of(distribution: dict[int, int], n: int = 5, k: int = 5) -> list[TaskCounts]:
    return [TaskCounts(c, n, k) for c, tasks in distribution.items() for _ in range(tasks)]


# One way to split the published totals over 168 tasks at n = k = 5 (any split with the same totals gives the same
# point estimates): 650/840 successful runs and 89 all-pass tasks -> Mean@5 77.4 %, pass^5 53.0 %, gap 24.4 pp;
# with the consistency guidelines 681/840 and 116 all-pass -> pass^5 69.0 %, gap 12.0 pp.
PUBLISHED = suite_of({5: 89, 4: 30, 3: 15, 2: 10, 1: 20, 0: 4})


@pytest.mark.parametrize("target", TARGETS)
def test_identical_runs_difference_contains_zero(target: str) -> None:
    difference = paired_gap_difference(list(zip(PUBLISHED, PUBLISHED, strict=True)), target=target)
    assert difference.contains(0.0)


@pytest.mark.parametrize("t", [1, 2, 3, 4, 10])
def test_paired_difference_few_tasks(t: int) -> None:
    pairs = [(TaskCounts(5, 5, 5), TaskCounts(3, 5, 5))] * t
    difference = paired_gap_difference(pairs)
    assert difference.contains(60.0)  # 0 -> 3/5 gap of 60 pp per task
    assert -100.0 <= difference.low <= difference.high <= 100.0
