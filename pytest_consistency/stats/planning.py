"""How many repetitions a user needs: to decide an undecided gate in a fresh run, or to see a given drop at all.

It exists so an undecided verdict comes with an actionable number instead of "rerun and hope". The number is for
a FRESH run planned at that n: adding repetitions to the run that was undecided and looking again is optional
stopping (users who follow such advice end in a wrong PASS about 6 % of the time where one look allows 2.5 %).
``fresh_run_repetitions`` assumes the interval's half-width on the threshold's side shrinks like 1/sqrt(n) when
every task gets more repetitions and the estimate stays where it is; that is the large-sample rate, so the answer is
a planning figure ("likely enough"), not a guarantee. ``repetitions_for_drop`` is exact: the rejection region of the
exact one-sided test (Boschloo or Fisher) is found exactly (significance.fisher_region: for each baseline count, the
current counts it rejects are 0..b), and its probability under the two pass rates is summed row by row, O(n) per
region. Boschloo's region is the largest Fisher region {Fisher p <= t} whose size (supremum over the common pass
rate) stays within alpha; t is found by bisection on log t to 1e-9 relative, which separates every pair of Fisher
p-values at small n (so the region is exact there) and at most leaves out tables whose p-value is within 1e-9 of the
boundary at large n. Standard library only.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from itertools import accumulate

from pytest_consistency.stats.binomial import binomial_pmf, check_positive_int
from pytest_consistency.stats.choices import TESTS
from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.significance import Region, fisher_region, region_size

_PLANNING_GRID = 400


def _check_real(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")


def fresh_run_repetitions(n: int, estimate: float, interval: Interval, threshold: float) -> int | None:
    """The repetitions per task a FRESH run would likely need for ``interval`` to exclude ``threshold``.

    ``n`` is this run's repetitions per task. Uses the half-width on the threshold's side, h, and assumes it shrinks
    like 1/sqrt(n): ceil(n * (h / |estimate - threshold|)^2), at least n + 1 while the threshold is inside. ``n``
    when the interval already excludes the threshold; ``None`` when estimate == threshold (then no number of
    repetitions decides it: the estimate itself sits on the threshold). Not a number to add to this run.
    """
    check_positive_int("n", n)
    _check_real("estimate", estimate)
    _check_real("threshold", threshold)
    if not isinstance(interval, Interval):
        raise ValueError(f"interval must be an Interval, got {interval!r}")
    if not interval.contains(threshold):
        return n
    distance = abs(estimate - threshold)
    if distance == 0.0:
        return None
    half_width = interval.high - estimate if threshold > estimate else estimate - interval.low
    total = math.ceil(n * (half_width / distance) ** 2 - 1e-9)
    return max(n + 1, total)


@lru_cache(maxsize=256)
def _rejection_region(n1: int, n2: int, alpha: float, test: str) -> Region | None:
    """The largest region {Fisher p <= t} that ``test`` rejects at ``alpha``; None when it rejects no table."""
    fisher = fisher_region(n1, n2, Fraction(alpha))
    if test == "fisher":
        return None if _is_empty(fisher) else fisher

    # Boschloo's size sup_pi P(Fisher p <= t) is at most t and grows with t: find the largest t whose size is at
    # most alpha. Start at t = alpha (valid), step towards the boundary with the secant of log size against log t,
    # then bisect on log t.
    def size(t: float) -> float:
        return region_size(fisher_region(n1, n2, Fraction(t)), _PLANNING_GRID)

    low, high = float(alpha), 1.0
    guess = low
    for _ in range(6):
        value = size(guess)
        if value <= alpha:
            low = max(low, guess)
        else:
            high = min(high, guess)
        if value <= 0.0 or not low < high:
            break
        guess = min(max(guess * alpha / value, low), high)
        if guess in (low, high):
            break
    while high / low - 1.0 > 1e-9:
        middle = math.sqrt(low * high)
        if size(middle) <= alpha:
            low = middle
        else:
            high = middle
    region = fisher_region(n1, n2, Fraction(low))
    return None if _is_empty(region) else region


def _is_empty(region: Region) -> bool:
    return all(x > min(region.n1, s) for s, x in enumerate(region.first))


def power(n: int, p_baseline: float, p_current: float, alpha: float = 0.05, test: str = "boschloo") -> float:
    """Exact probability that ``test`` flags a drop when both runs have ``n`` repetitions and the true pass rate
    falls from ``p_baseline`` to ``p_current``."""
    check_positive_int("n", n)
    _check_probability("p_baseline", p_baseline)
    _check_probability("p_current", p_current)
    _check_alpha(alpha)
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    region = _rejection_region(n, n, float(alpha), test)
    if region is None:
        return 0.0
    baseline = binomial_pmf(n, p_baseline)
    cumulative = list(accumulate(binomial_pmf(n, p_current)))
    # (x1, x2) is rejected when x1 >= first[x1 + x2]; first never decreases, so row x1 rejects x2 = 0..last - x1,
    # last the largest total whose first count is at most x1.
    terms = []
    last = -1
    for x1 in range(n + 1):
        while last + 1 <= 2 * n and region.first[last + 1] <= x1:
            last += 1
        top = min(n, last - x1)
        if top >= 0:
            terms.append(baseline[x1] * cumulative[top])
    return math.fsum(terms)


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
