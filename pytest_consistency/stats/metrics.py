"""Consistency metrics as pure functions of success counts.

The definitions follow tau-bench (pass^k) and IBM's "Closing the Consistency Gap" (gap = Mean@k - pass^k).
Counts are combined with exact integer binomials and ``Fraction`` so that pass^k and pass@k are the unbiased
estimators even when n > k, and no cancellation creeps in for large n.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import comb


@dataclass(frozen=True)
class TaskCounts:
    """Successes ``c`` out of ``n`` scored repetitions of one task, scored at ``k``."""

    c: int
    n: int
    k: int

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if not 0 <= self.c <= self.n:
            raise ValueError(f"c must be within 0..n={self.n}, got {self.c}")
        if not 1 <= self.k <= self.n:
            raise ValueError(f"k must be within 1..n={self.n}, got {self.k}")


def mean_at_k(task: TaskCounts) -> Fraction:
    """Average success rate of one task (c / n); k does not change it."""
    return _mean_at_k(task.c, task.n)


def pass_hat_k(task: TaskCounts) -> Fraction:
    """Probability that k repetitions drawn without replacement all succeed: C(c, k) / C(n, k)."""
    return _pass_hat_k(task.c, task.n, task.k)


def pass_at_k(task: TaskCounts) -> Fraction:
    """Probability that at least one of k repetitions drawn without replacement succeeds."""
    return _pass_at_k(task.c, task.n, task.k)


def gap_pp(task: TaskCounts) -> float:
    """Consistency gap of one task in percentage points: (Mean@k - pass^k) x 100."""
    return _gap_pp(task.c, task.n, task.k)


# A suite's tasks share a handful of (c, n, k): each exact figure is worked out once (fractions are immutable).
@lru_cache(maxsize=4096)
def _mean_at_k(c: int, n: int) -> Fraction:
    return Fraction(c, n)


@lru_cache(maxsize=4096)
def _pass_hat_k(c: int, n: int, k: int) -> Fraction:
    return Fraction(comb(c, k), comb(n, k))


@lru_cache(maxsize=4096)
def _pass_at_k(c: int, n: int, k: int) -> Fraction:
    return 1 - Fraction(comb(n - c, k), comb(n, k))


@lru_cache(maxsize=4096)
def _gap_pp(c: int, n: int, k: int) -> float:
    return float((_mean_at_k(c, n) - _pass_hat_k(c, n, k)) * 100)


@dataclass(frozen=True)
class Overall:
    """Session-level figures: each task weighs the same, as in the published definitions."""

    task_count: int
    mean_at_k: float
    pass_hat_k: float
    pass_at_k: float
    consistency_gap_pp: float


def overall(tasks: Sequence[TaskCounts]) -> Overall | None:
    """Average the per-task estimators over tasks; ``None`` when there is nothing to score."""
    if not tasks:
        return None
    t = len(tasks)
    # Tasks with the same counts add the same fraction: summed once per distinct (c, n, k), times how many share it
    # (exactly the per-task sum; a suite holds a handful of distinct counts, and a Fraction addition is ~15 calls).
    groups = Counter((x.c, x.n, x.k) for x in tasks)
    mean = sum((_mean_at_k(c, n) * m for (c, n, _), m in groups.items()), Fraction(0)) / t
    hat = sum((_pass_hat_k(c, n, k) * m for (c, n, k), m in groups.items()), Fraction(0)) / t
    at = sum((_pass_at_k(c, n, k) * m for (c, n, k), m in groups.items()), Fraction(0)) / t
    return Overall(
        task_count=t,
        mean_at_k=float(mean),
        pass_hat_k=float(hat),
        pass_at_k=float(at),
        consistency_gap_pp=float((mean - hat) * 100),
    )


def disagreement_pp(disagreeing: int, with_answers: int) -> float | None:
    """Share of tasks whose answers are not all equivalent, in percentage points."""
    if with_answers == 0:
        return None
    return disagreeing * 100 / with_answers
