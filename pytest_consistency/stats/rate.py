"""A task's pass rate against a bar (``min_rate``): PASS, FAIL or UNDECIDED, each decided by an exact test.

It exists because a rule on the observed counts (``min_pass``) is a coin flip near its threshold: at min_pass 0.8 and
n = 5 a task whose true rate is 0.7 passes 53 % of the time. Here a task PASSES only when its repetitions show that
its rate is at least the bar, FAILS only when they show it is below, and is UNDECIDED otherwise:

- PASS when the exact one-sided test of "the rate is below ``rate``" rejects at ``alpha``: P(X >= c | rate) <= alpha,
  X ~ Binomial(n, rate). Equivalently the one-sided Clopper-Pearson lower bound at 1 - alpha is at least the rate
  (5/5 at 95 %: 0.05^(1/5) = 0.549);
- FAIL when the test of "the rate is at least ``rate``" rejects: P(X <= c | rate) <= alpha (the one-sided upper
  bound is below the rate; 0/5 at 95 %: 0.451).

So a task whose true rate is below the bar PASSES with probability at most alpha, and one whose rate is at least the
bar FAILS with probability at most alpha, whatever n and the rate (each is a level-alpha test; the binomial's
discreteness only makes it conservative). These are per-task promises: with T tasks the chance that some task errs
can reach T x alpha.

Planning figures for a fresh run (:func:`planning_n`) are exact binomial sums too. They are for the NEXT run: adding
repetitions to this run and looking again is optional stopping, whose error rate is no longer alpha.
Standard library only.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Literal

from pytest_consistency.stats.binomial import binomial_cdf, binomial_sf, check_counts, clopper_pearson
from pytest_consistency.stats.interval import Interval

RateVerdict = Literal["pass", "fail", "undecided"]
#: The most repetitions a planning figure looks at (the marker's own maximum).
PLAN_MAX = 1000
#: The chance of a decided verdict a planning figure aims at.
PLAN_POWER = 0.8
#: A p-value equal to alpha rejects; its float may be a few ulps above (P(X >= 1 | n = 1, p = 0.05) is
#: 0.05000000000000001 summed): within this relative margin it counts as equal.
_ULPS = 1e-12


def check_bar(rate: float, alpha: float) -> None:
    """A bar strictly between 0 and 1 and a level strictly between 0 and 0.5, else ``ValueError`` naming the value."""
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0.0 < rate < 1.0:
        raise ValueError(f"rate must be strictly between 0 and 1, got {rate!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be strictly between 0 and 0.5, got {alpha!r}")


def rate_bounds(c: int, n: int, alpha: float) -> Interval:
    """The one-sided exact bounds the verdict is read on: [lower at 1 - alpha, upper at 1 - alpha]."""
    check_counts(c, n)
    return clopper_pearson(c, n, 1.0 - 2.0 * alpha)


@lru_cache(maxsize=4096)
def pass_from(n: int, rate: float, alpha: float) -> int | None:
    """The fewest passes out of n that PASS the bar (None: no count does, n is too small)."""
    check_bar(rate, alpha)
    low, high = 0, n + 1  # binomial_sf(c) falls with c: the first c with sf <= alpha
    while low < high:
        middle = (low + high) // 2
        if binomial_sf(middle, n, rate) <= alpha * (1 + _ULPS):
            high = middle
        else:
            low = middle + 1
    return low if low <= n else None


@lru_cache(maxsize=4096)
def fail_to(n: int, rate: float, alpha: float) -> int | None:
    """The most passes out of n that FAIL the bar (None: no count does)."""
    check_bar(rate, alpha)
    low, high = -1, n  # binomial_cdf(c) grows with c: the last c with cdf <= alpha
    while low < high:
        middle = (low + high + 1) // 2
        if binomial_cdf(middle, n, rate) <= alpha * (1 + _ULPS):
            low = middle
        else:
            high = middle - 1
    return low if low >= 0 else None


def rate_verdict(c: int, n: int, rate: float, alpha: float) -> RateVerdict:
    """PASS, FAIL or UNDECIDED for c passes out of n against the bar ``rate`` at level ``alpha`` (module docstring)."""
    check_counts(c, n)
    need = pass_from(n, rate, alpha)
    if need is not None and c >= need:
        return "pass"
    most = fail_to(n, rate, alpha)
    if most is not None and c <= most:
        return "fail"
    return "undecided"


def settled(passes: int, failures: int, n: int, rate: float, alpha: float) -> RateVerdict | None:
    """The verdict at n when the repetitions still to run cannot change it (curtailment), else None: the verdict is
    monotone in the passes, so both ends of what the remaining repetitions can give must agree."""
    low, high = passes, n - failures
    if high < low:
        return None
    first = rate_verdict(low, n, rate, alpha)
    return first if first == rate_verdict(high, n, rate, alpha) else None


def n_to_pass(rate: float, alpha: float) -> int:
    """The fewest repetitions at which n/n PASSES: alpha^(1/n) >= rate (0.8 at 95 %: 14)."""
    check_bar(rate, alpha)
    n = max(1, math.ceil(math.log(alpha) / math.log(rate) - 1e-9))
    while pass_from(n, rate, alpha) is None:
        n += 1
    while n > 1 and pass_from(n - 1, rate, alpha) is not None:
        n -= 1
    return n


def n_to_fail(rate: float, alpha: float) -> int:
    """The fewest repetitions at which 0/n FAILS: (1 - rate)^n <= alpha (0.8 at 95 %: 2)."""
    check_bar(rate, alpha)
    n = max(1, math.ceil(math.log(alpha) / math.log1p(-rate) - 1e-9))
    while fail_to(n, rate, alpha) is None:
        n += 1
    while n > 1 and fail_to(n - 1, rate, alpha) is not None:
        n -= 1
    return n


def decided_probability(n: int, p: float, rate: float, alpha: float) -> float:
    """The chance that a fresh run of n repetitions of a task whose true rate is ``p`` reaches the right verdict
    (PASS when p >= rate, FAIL when p < rate)."""
    if p >= rate:
        need = pass_from(n, rate, alpha)
        return 0.0 if need is None else binomial_sf(need, n, p)
    most = fail_to(n, rate, alpha)
    return 0.0 if most is None else binomial_cdf(most, n, p)


#: The sizes and margin of :func:`planning_n`'s early answer.
_TOOTH = 20
_TOOTH_MARGIN = 0.05


def planning_n(c: int, n: int, rate: float, alpha: float, power: float = PLAN_POWER) -> int | None:
    """The repetitions a FRESH run needs to decide the bar with probability ``power`` if the true rate is what this
    run saw (c / n); None when that is the bar itself (no n decides it) or beyond :data:`PLAN_MAX`.

    A planning figure for the next run, not a number of repetitions to add to this one (optional stopping).
    """
    check_counts(c, n)
    check_bar(rate, alpha)
    p = c / n
    if p == rate:
        return None
    first = n_to_pass(rate, alpha) if p > rate else n_to_fail(rate, alpha)
    # Near the bar no n up to PLAN_MAX decides, and the walk below would try every one (seconds per task at the
    # session end). The chance grows with n but for a saw-tooth of a few hundredths (one count's probability at
    # most, 0.05 only for n below about 60): where the last _TOOTH sizes all stay _TOOTH_MARGIN below ``power``, so
    # does every smaller n (tests/unit/stats: the same answers as the whole walk).
    last = range(max(first, PLAN_MAX - _TOOTH), PLAN_MAX + 1)
    if max(decided_probability(size, p, rate, alpha) for size in last) < power - _TOOTH_MARGIN:
        return None
    for size in range(first, PLAN_MAX + 1):
        if decided_probability(size, p, rate, alpha) >= power:
            return size
    return None
