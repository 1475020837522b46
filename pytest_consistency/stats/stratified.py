"""A suite-level test of "the current run passes less often than the baseline", exact, over every task at once.

It exists because per-task tests with Benjamini–Hochberg only fire when one task collapses: an agent whose every
task got a little worse (20 tasks at n = 5, every pass rate x 0.8) is flagged about 2 % of the time. Pooling the
evidence of all tasks catches it most of the time while keeping the false-alarm rate at most alpha.

The test is the exact stratified (conditional) test behind Cochran–Mantel–Haenszel: each task is a stratum with
baseline c1 of n1 and current c2 of n2 repetitions passing. Under "no change in any task" (each task keeps its own
pass rate, whatever it is), given the task's total passes s = c1 + c2, the baseline's passes follow the
hypergeometric law C(n1, x) C(n2, s - x) / C(n1 + n2, s), independently across tasks. The statistic is the sum of
the baseline's passes over tasks; the one-sided p-value is the probability, under that null, of a sum at least the
one observed. It is computed exactly: the hypergeometric weights are integers, their convolution is integer
arithmetic, and the p-value is one ``Fraction`` turned into a float at the end. Conditioning removes every task's
unknown pass rate (no nuisance parameter to maximise over), so the level holds for any mix of pass rates; tasks that
passed every repetition in both runs (or failed every one) carry no information and drop out.

The pooled pass-rate change (all current passes / all current repetitions minus the same for the baseline) is
reported with an interval from the two runs' pooled Clopper–Pearson intervals, each at level sqrt(confidence) so that
both hold at once: conservative, and exact in the sense that it never relies on a normal approximation.
Standard library only; pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from pytest_consistency.stats.binomial import check_confidence, check_counts, clopper_pearson
from pytest_consistency.stats.interval import Interval


@dataclass(frozen=True)
class Stratum:
    """One task in both runs: ``c1`` of ``n1`` baseline repetitions passed, ``c2`` of ``n2`` current ones."""

    c1: int
    n1: int
    c2: int
    n2: int

    def __post_init__(self) -> None:
        check_counts(self.c1, self.n1)
        check_counts(self.c2, self.n2)


@dataclass(frozen=True)
class StratifiedDrop:
    """The exact stratified test of a drop, and the pooled pass-rate change with its interval.

    ``observed`` is the baseline's passes summed over the informative tasks and ``expected`` its mean under no
    change; ``informative`` counts the tasks whose total passes leave the baseline's count free (0 < s < n1 + n2).
    Rates are fractions; ``change_pp`` and ``change_interval`` are in percentage points (negative = worse).
    """

    p_value: float
    observed: int
    expected: float
    informative: int
    baseline_rate: float
    current_rate: float
    change_pp: float
    change_interval: Interval


def _weights(n1: int, n2: int, s: int) -> tuple[int, tuple[int, ...]]:
    """The lowest possible baseline count x given the total s, and C(n1, x) C(n2, s - x) for each x from it."""
    lo, hi = max(0, s - n2), min(n1, s)
    return lo, tuple(math.comb(n1, x) * math.comb(n2, s - x) for x in range(lo, hi + 1))


@lru_cache(maxsize=4096)
def _null_distribution(strata: tuple[tuple[int, int, int], ...]) -> tuple[int, tuple[int, ...], int]:
    """(lowest sum, integer weight of each sum from it, total weight) of the summed baseline counts under no change.

    ``strata`` is a sorted tuple of (n1, n2, s); sorting lets equal suites share one cached distribution.
    """
    offset, total = 0, 1
    weights: tuple[int, ...] = (1,)
    for n1, n2, s in strata:
        lo, task = _weights(n1, n2, s)
        combined = [0] * (len(weights) + len(task) - 1)
        for i, w in enumerate(weights):
            if w:
                for j, v in enumerate(task):
                    combined[i + j] += w * v
        offset += lo
        weights = tuple(combined)
        total *= math.comb(n1 + n2, s)
    return offset, weights, total


def stratified_p_value(strata: Sequence[Stratum]) -> Fraction:
    """Exact one-sided p-value P(sum of baseline passes >= observed | every task's total passes), no change.

    1 when no task is informative. One task alone gives Fisher's one-sided exact test: 5/5 -> 2/5 is 0.0833.
    """
    informative = [t for t in strata if 0 < t.c1 + t.c2 < t.n1 + t.n2]
    if not informative:
        return Fraction(1)
    key = tuple(sorted((t.n1, t.n2, t.c1 + t.c2) for t in informative))
    offset, weights, total = _null_distribution(key)
    observed = sum(t.c1 for t in informative)
    return Fraction(sum(weights[observed - offset :]), total)


def _expected(strata: Sequence[Stratum]) -> float:
    return float(sum((Fraction(t.n1 * (t.c1 + t.c2), t.n1 + t.n2) for t in strata), Fraction(0)))


def stratified_drop(strata: Sequence[Stratum], confidence: float = 0.95) -> StratifiedDrop | None:
    """The suite-level test of a drop over ``strata`` (one per task in both runs); ``None`` when there are none."""
    check_confidence(confidence)
    for stratum in strata:
        if not isinstance(stratum, Stratum):
            raise ValueError(f"expected Stratum, got {stratum!r}")
    if not strata:
        return None
    informative = [t for t in strata if 0 < t.c1 + t.c2 < t.n1 + t.n2]
    c1, n1 = sum(t.c1 for t in strata), sum(t.n1 for t in strata)
    c2, n2 = sum(t.c2 for t in strata), sum(t.n2 for t in strata)
    before, after = Fraction(c1, n1), Fraction(c2, n2)
    joint = math.sqrt(confidence)
    base, cur = clopper_pearson(c1, n1, joint), clopper_pearson(c2, n2, joint)
    change = float((after - before) * 100)
    low = min((cur.low - base.high) * 100.0, change)
    high = max((cur.high - base.low) * 100.0, change)
    return StratifiedDrop(
        p_value=float(stratified_p_value(strata)),
        observed=sum(t.c1 for t in informative),
        expected=_expected(informative),
        informative=len(informative),
        baseline_rate=float(before),
        current_rate=float(after),
        change_pp=change,
        change_interval=Interval(low, high),
    )
