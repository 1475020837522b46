"""How many repetitions a user needs: to settle an inconclusive gate, or to be able to see a given drop at all.

It exists so an inconclusive verdict comes with an actionable number instead of "rerun and hope".
``repetitions_to_decide`` assumes the interval's half-width on the threshold's side shrinks like 1/sqrt(n) when
every task gets more repetitions and the estimate stays where it is; that is the large-sample rate, so the answer is
a planning figure ("likely enough"), not a guarantee. ``repetitions_for_drop`` is exact: it enumerates every
outcome of two runs of n repetitions and the rejection region of the exact one-sided test (Boschloo or Fisher).
Standard library only.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from pytest_consistency.stats.binomial import binomial_pmf, check_positive_int
from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.significance import TESTS, fisher_statistics, region_log_weights, supremum_over_nuisance

_PLANNING_GRID = 400


def _check_real(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")


def repetitions_to_decide(n: int, estimate: float, interval: Interval, threshold: float) -> int | None:
    """How many MORE repetitions per task would likely make ``interval`` exclude ``threshold``.

    ``n`` is the current repetitions per task. Uses the half-width on the threshold's side, h, and assumes it shrinks
    like 1/sqrt(n): n' = ceil(n * (h / |estimate - threshold|)^2) - n (at least 1 while the threshold is inside).
    0 when the interval already excludes the threshold; ``None`` when estimate == threshold (then no number of
    repetitions decides it: the estimate itself sits on the threshold).
    """
    check_positive_int("n", n)
    _check_real("estimate", estimate)
    _check_real("threshold", threshold)
    if not isinstance(interval, Interval):
        raise ValueError(f"interval must be an Interval, got {interval!r}")
    if not interval.contains(threshold):
        return 0
    distance = abs(estimate - threshold)
    if distance == 0.0:
        return None
    half_width = interval.high - estimate if threshold > estimate else estimate - interval.low
    total = math.ceil(n * (half_width / distance) ** 2 - 1e-9)
    return max(1, total - n)


@lru_cache(maxsize=256)
def _rejection_threshold(n1: int, n2: int, alpha: float, test: str) -> Fraction | None:
    """Largest Fisher statistic at which ``test`` still rejects at ``alpha`` (the region is {Fisher p <= it})."""
    values = sorted({value for row in fisher_statistics(n1, n2) for value in row})
    if test == "fisher":
        accepted = [v for v in values if v <= alpha]
        return accepted[-1] if accepted else None

    # Boschloo's p-value is sup_pi P(Fisher p <= t), increasing in t: binary search the largest t with it <= alpha.
    def p_value(t: Fraction) -> float:
        return supremum_over_nuisance(region_log_weights(n1, n2, t), n1 + n2, _PLANNING_GRID)

    if p_value(values[0]) > alpha:
        return None
    lo, hi = 0, len(values) - 1  # invariant: values[lo] rejects; everything above values[hi] does not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if p_value(values[mid]) <= alpha:
            lo = mid
        else:
            hi = mid - 1
    return values[lo]


def power(n: int, p_baseline: float, p_current: float, alpha: float = 0.05, test: str = "boschloo") -> float:
    """Exact probability that ``test`` flags a drop when both runs have ``n`` repetitions and the true pass rate
    falls from ``p_baseline`` to ``p_current``."""
    check_positive_int("n", n)
    _check_probability("p_baseline", p_baseline)
    _check_probability("p_current", p_current)
    _check_alpha(alpha)
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    threshold = _rejection_threshold(n, n, float(alpha), test)
    if threshold is None:
        return 0.0
    stats = fisher_statistics(n, n)
    baseline = binomial_pmf(n, p_baseline)
    current = binomial_pmf(n, p_current)
    return math.fsum(
        baseline[x1] * current[x2] for x1 in range(n + 1) for x2 in range(n + 1) if stats[x1][x2] <= threshold
    )


def repetitions_for_drop(
    p_baseline: float,
    p_current: float,
    target_power: float = 0.8,
    alpha: float = 0.05,
    test: str = "boschloo",
    max_n: int = 40,
) -> int | None:
    """Smallest n (repetitions in each run) at which ``test`` detects a drop p_baseline -> p_current for one task
    with at least ``target_power`` at one-sided level ``alpha``; ``None`` if no n up to ``max_n`` does.

    Exact power of discrete tests is not monotone in n (it saw-tooths), so a slightly larger n can have slightly
    less power; this returns the first n that reaches the target.
    """
    _check_probability("p_baseline", p_baseline)
    _check_probability("p_current", p_current)
    if not p_current < p_baseline:
        raise ValueError(f"p_current must be below p_baseline, got {p_current} >= {p_baseline}")
    _check_probability("target_power", target_power)
    check_positive_int("max_n", max_n)
    for n in range(1, max_n + 1):
        if power(n, p_baseline, p_current, alpha, test) >= target_power:
            return n
    return None


def _check_probability(name: str, value: float) -> None:
    _check_real(name, value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be within [0, 1], got {value!r}")


def _check_alpha(alpha: float) -> None:
    _check_real("alpha", alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
