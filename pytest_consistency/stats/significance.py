"""One-sided exact tests for "the current run passes a task less often than the baseline did", and FDR control.

It exists so a CI gate can tell a real per-task regression from repetition noise at n = 3..10, where asymptotic tests
are useless, and still answer in a fraction of a second when a long soak or a merged history reaches n in the
thousands. Assumptions: baseline (c1 of n1) and current (c2 of n2) are independent binomial samples; the alternative
is always one-sided, p_current < p_baseline. Across many tasks use Benjamini-Hochberg; for all-pass flips between
two runs of the same tasks use the exact McNemar test. Standard library only.

**Fisher** conditions on the total passes s = c1 + c2: its p-value is the hypergeometric tail P(X >= c1 | s). It is
summed in exact integer arithmetic from c1 outwards (or, below the mode, as one minus the other tail), with the
binomial coefficients updated by exact integer recurrences, and the sum stops once the terms left cannot change it
by 2^-64 of itself (they decrease geometrically away from the mode): O(sqrt(n)) big-integer steps, not the O(n1 n2)
table of every outcome an earlier version built (n1 = n2 = 2000 took over 15 minutes and 1 GB; now milliseconds).

**Boschloo** uses Fisher's p-value as its statistic and maximises the unconditional tail over the common pass rate pi
(the nuisance parameter), so it is uniformly more powerful and never above Fisher's p. Its rejection region
{Fisher p <= observed} is found exactly with integer arithmetic and no table: for a fixed baseline count x the
conditional tail P(X >= x | s) only grows with s (P(X_{s+1} >= x) = P(X_s >= x) + P(X_s = x - 1) (n1 - x + 1) /
(N - s)), so the region's first x in each total s never decreases, and one walk over s = 0..N (N = n1 + n2) with
exact tail weights updated by that identity gives every total's part of the region (ties included exactly). The
region's probability at pi is then sum_s Binomial(N, pi)(s) T_s, T_s the region's conditional mass at total s; the
supremum is taken on a grid of 1000 values of pi plus golden-section refinement around the best one, as before, with
each binomial pmf normalised over its window (relative error about 1e-13). Up to N = ``BOSCHLOO_MAX_TOTAL`` (20,000
repetitions in both runs together) that costs well under a second; above it ``boschloo_one_sided`` returns Fisher's
exact p-value instead, which is never smaller, so the test keeps its level and only loses the little power
Boschloo adds at that size. A p-value below 1e-290 is reported as Fisher's too (both are 0 to double precision).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import accumulate, repeat
from operator import mul

from pytest_consistency.stats.binomial import check_counts
from pytest_consistency.stats.choices import TESTS

BOSCHLOO_MAX_TOTAL = 20_000
"""Above this many repetitions in both runs together, Boschloo's p-value is replaced by Fisher's (never smaller)."""

_GRID_POINTS = 1000
_REFINE_STEPS = 60
_TINY = 1e-290
_TRUNCATE_BITS = 64


def _check_pair(c1: int, n1: int, c2: int, n2: int) -> None:
    check_counts(c1, n1)
    check_counts(c2, n2)


def _leading(value: int) -> tuple[float, int]:
    """(m, e) with value = m * 2^e approximately, m in [2^63, 2^64) as a float (relative error 2^-53)."""
    shift = value.bit_length() - 64
    return (float(value >> shift), shift) if shift > 0 else (float(value), 0)


def _log2_ratio(num: int, den: int) -> float:
    """log2(num / den) for positive integers of any size, to about 1e-15 absolute."""
    m1, e1 = _leading(num)
    m2, e2 = _leading(den)
    return math.log2(m1 / m2) + (e1 - e2)


def _ratio(num: int, den: int) -> float:
    """num / den as a float for non-negative integers of any size (0.0 below the smallest double)."""
    if num == 0:
        return 0.0
    m1, e1 = _leading(num)
    m2, e2 = _leading(den)
    return math.ldexp(m1 / m2, e1 - e2)


# --- Fisher: the hypergeometric tail ---------------------------------------------------------------------------------


def _tail_weight(x: int, n1: int, n2: int, s: int, exact: bool) -> tuple[int, int]:
    """(W, C(n1 + n2, s)) with W / C = P(X >= x | s), X the baseline's passes given s passes in all.

    W = sum_{y >= x} C(n1, y) C(n2, s - y), summed from x upwards when x is above the mode, else as C minus the sum
    below x (taken downwards from x - 1). The terms fall away from the mode (the law is log-concave), so unless
    ``exact`` the sum stops once the remaining terms, at most the current one times how many are left, are below
    2^-64 of the sum: the result is then low by less than 2^-64 of itself (upper tail) or of the other tail.
    """
    lo, hi = max(0, s - n2), min(n1, s)
    total = math.comb(n1 + n2, s)
    if x <= lo:
        return total, total
    if x > hi:
        return 0, total
    mode = (s + 1) * (n1 + 1) // (n1 + n2 + 2)
    acc = 0
    if x > mode:
        y = x
        term = math.comb(n1, y) * math.comb(n2, s - y)
        while True:
            acc += term
            if y == hi:
                break
            term = term * (n1 - y) * (s - y) // ((y + 1) * (n2 - s + y + 1))
            y += 1
            if not exact and term * (hi - y + 1) < acc >> _TRUNCATE_BITS:
                break
        return acc, total
    y = x - 1
    term = math.comb(n1, y) * math.comb(n2, s - y)
    while True:
        acc += term
        if y == lo:
            break
        term = term * y * (n2 - s + y) // ((n1 - y + 1) * (s - y + 1))
        y -= 1
        if not exact and term * (y - lo + 1) < acc >> _TRUNCATE_BITS:
            break
    return total - acc, total


def fisher_tail(x: int, n1: int, n2: int, s: int) -> Fraction:
    """Exact P(X >= x | s): the one-sided Fisher p-value of the table with x baseline passes and s passes in all."""
    weight, total = _tail_weight(x, n1, n2, s, exact=True)
    return Fraction(weight, total)


@lru_cache(maxsize=4096, typed=True)
def fisher_one_sided(c1: int, n1: int, c2: int, n2: int) -> float:
    """Fisher's exact one-sided p-value that the current pass rate (c2/n2) is below the baseline's (c1/n1).

    Equals ``scipy.stats.fisher_exact([[c1, n1 - c1], [c2, n2 - c2]], alternative="greater").pvalue``.
    5/5 -> 2/5: 0.083.
    """
    _check_pair(c1, n1, c2, n2)
    weight, total = _tail_weight(c1, n1, n2, c1 + c2, exact=False)
    return weight / total


# --- Boschloo: the exact region and the supremum over the nuisance parameter ---------------------------------------


@dataclass(frozen=True)
class Region:
    """Fisher's rejection region {P(X >= x | s) <= threshold} of a design (n1, n2), one part per total s.

    ``first[s]`` is the smallest baseline count x in the region at total s (above the largest possible count when
    that total has none); ``mass[s]`` the region's conditional probability there, P(X >= first[s] | s), as a float
    (0.0 when empty, or below 1e-308).
    """

    n1: int
    n2: int
    first: tuple[int, ...]
    mass: tuple[float, ...]

    @property
    def total(self) -> int:
        return self.n1 + self.n2


@lru_cache(maxsize=32)
def fisher_region(n1: int, n2: int, threshold: Fraction) -> Region:
    """The tables whose one-sided Fisher p-value is at most ``threshold``, found by one exact walk over s.

    At total s the region is {x >= first[s]} (the tail shrinks as x grows). For fixed x the tail only grows with s,
    so first[s + 1] >= first[s]: the walk keeps the exact integer tail weight W = sum_{y >= x} C(n1, y) C(n2, s - y)
    of the current x, moves from s to s + 1 with W' = (W (N - s) + C(n1, x - 1) C(n2, s - x + 1) (n1 - x + 1)) /
    (s + 1), and raises x while W / C(N, s) exceeds the threshold. O(N + n1) steps on N-bit integers.
    """
    n = n1 + n2
    first = [n1 + 1] * (n + 1)
    mass = [0.0] * (n + 1)
    if threshold >= 1:
        for s in range(n + 1):
            first[s] = max(0, s - n2)
            mass[s] = 1.0
        return Region(n1, n2, tuple(first), tuple(mass))
    a, b = threshold.numerator, threshold.denominator
    log_threshold = _log2_ratio(a, b)
    x = 1  # slice 0 holds only (0, 0), whose p-value is 1: empty
    weight = 0  # W(x | s)
    below = 1  # C(n1, x - 1) C(n2, s - x + 1)
    at = 0  # C(n1, x) C(n2, s - x)
    total = 1  # C(N, s)
    first[0] = 1

    def above_threshold() -> bool:
        """W / C(N, s) > threshold, from the leading bits of each, exactly only when they are too close to tell."""
        if weight == 0:
            return False
        gap = _log2_ratio(weight, total) - log_threshold
        if abs(gap) > 1e-9:
            return gap > 0
        return weight * b > a * total

    for s in range(n):
        weight = (weight * (n - s) + below * (n1 - x + 1)) // (s + 1)
        at = below * (n1 - x + 1) // x
        below = below * (n2 - s + x - 1) // (s - x + 2)
        total = total * (n - s) // (s + 1)
        s1 = s + 1
        hi = min(n1, s1)
        while x <= hi and above_threshold():
            weight -= at
            below, at = at, at * (n1 - x) * (s1 - x) // ((x + 1) * (n2 - s1 + x + 1))
            x += 1
        first[s1] = x
        if x <= hi:
            mass[s1] = _ratio(weight, total)
        if x > n1:  # no baseline count is left: the region is empty from here on
            break
    return Region(n1, n2, tuple(first), tuple(mass))


@lru_cache(maxsize=16)
def _binomial_steps(n: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """C(n, s + 1) / C(n, s) and C(n, s - 1) / C(n, s), for s = 0..n (the second is 0 at s = 0)."""
    up = tuple((n - s) / (s + 1) for s in range(n + 1))
    down = tuple(s / (n - s + 1) for s in range(n + 1))
    return up, down


def region_probability(region: Region, pi: float) -> float:
    """P(the table is in ``region``) when both runs pass with probability ``pi``: sum_s Binomial(N, pi)(s) mass[s].

    The binomial pmf is taken relative to its mode by the ratio recurrence and normalised over a window of
    12 standard deviations + 40 on each side (widened until its ends are below 1e-17 of the mode), so no term needs a
    huge binomial coefficient (relative error about 1e-13).
    """
    n, mass = region.total, region.mass
    if pi <= 0.0:
        return mass[0]
    if pi >= 1.0:
        return mass[n]
    odds = pi / (1.0 - pi)
    mode = min(n, int((n + 1) * pi))
    up, down = _binomial_steps(n)
    reach = int(12.0 * math.sqrt(n * pi * (1.0 - pi))) + 40
    while True:
        high = min(n, mode + reach)
        low = max(0, mode - reach)
        above: list[float] = list(accumulate(map(mul, up[mode:high], repeat(odds)), mul))
        under: list[float] = list(accumulate(map(mul, down[mode:low:-1], repeat(1.0 / odds)), mul))
        if (high == n or not above or above[-1] < 1e-17) and (low == 0 or not under or under[-1] < 1e-17):
            break
        reach *= 2
    norm: float = 1.0 + sum(above) + sum(under)
    hit: float = mass[mode]
    hit += sum(map(mul, above, mass[mode + 1 : high + 1]))
    hit += sum(map(mul, under, mass[mode - 1 : low - 1 if low else None : -1]))
    return hit / norm


def supremum(func: Callable[[float], float], grid_points: int = _GRID_POINTS) -> float:
    """max over pi in [0, 1] of ``func``: a grid of ``grid_points`` steps, then golden-section around the best point."""
    grid = [i / grid_points for i in range(grid_points + 1)]
    values = [func(pi) for pi in grid]
    best_index = max(range(len(values)), key=values.__getitem__)
    best = values[best_index]
    lo = grid[max(best_index - 1, 0)]
    hi = grid[min(best_index + 1, grid_points)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = func(a), func(b)
    for _ in range(_REFINE_STEPS):
        if fa >= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = func(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = func(b)
    return min(1.0, max(best, fa, fb))


def region_size(region: Region, grid_points: int = _GRID_POINTS) -> float:
    """Boschloo's p-value of a region: the supremum over the common pass rate of its probability."""
    return supremum(lambda pi: region_probability(region, pi), grid_points)


@lru_cache(maxsize=4096, typed=True)
def boschloo_one_sided(c1: int, n1: int, c2: int, n2: int) -> float:
    """Boschloo's exact one-sided p-value that the current pass rate (c2/n2) is below the baseline's (c1/n1).

    Matches ``scipy.stats.boschloo_exact([[c1, c2], [n1 - c1, n2 - c2]], alternative="greater")`` (which
    searches the nuisance parameter with a coarse optimiser; this takes the supremum on a dense grid). scipy takes
    the table's columns as the two independent samples, so the runs are the columns here.
    5/5 -> 2/5: 0.0309; 5/5 -> 1/5: 11/1024 = 0.0107. (0.035 and 0.0069, quoted elsewhere, come from the transposed
    table, which fixes the totals of passes and failures instead of the run sizes.)
    Above ``BOSCHLOO_MAX_TOTAL`` repetitions in all, and below a p-value of 1e-290, this is Fisher's p-value (see the
    module docstring).
    """
    _check_pair(c1, n1, c2, n2)
    if n1 + n2 > BOSCHLOO_MAX_TOTAL:
        return fisher_one_sided(c1, n1, c2, n2)
    observed = fisher_tail(c1, n1, n2, c1 + c2)
    if observed >= 1:
        return 1.0
    if observed < _TINY:
        return float(observed)
    return region_size(fisher_region(n1, n2, observed))


def one_sided_p(test: str, c1: int, n1: int, c2: int, n2: int) -> float:
    """The one-sided p-value of ``test`` (one of ``TESTS``) for a drop from c1/n1 (baseline) to c2/n2 (current)."""
    if test == "boschloo":
        return boschloo_one_sided(c1, n1, c2, n2)
    if test == "fisher":
        return fisher_one_sided(c1, n1, c2, n2)
    raise ValueError(f"test must be one of {TESTS}, got {test!r}")


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), in input order, monotone and capped at 1.

    Flag q <= 0.05 to keep the expected share of false regressions among flagged tasks at 5 % (independent tests).
    Same as ``scipy.stats.false_discovery_control(p, method="bh")``.
    """
    m = len(pvalues)
    for p in pvalues:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must be numbers in [0, 1], got {p!r}")
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        index = order[rank - 1]
        running = min(running, pvalues[index] * m / rank)
        adjusted[index] = running
    return adjusted


def mcnemar_one_sided(worse: int, better: int) -> float:
    """Exact one-sided McNemar p-value that tasks flip to worse more often than to better between two runs.

    ``worse``: tasks all-pass in the baseline but not now; ``better``: the reverse. Under no change each discordant
    task is equally likely to go either way, so this is P(X >= worse), X ~ Binomial(worse + better, 1/2): the Fisher
    tail above with a second "run" of one repetition per task is not needed, the binomial tail is summed the same
    way (integer recurrence, stopping at 2^-64 of the sum). Five flips, all to worse: 1/32 = 0.031.
    """
    for name, value in (("worse", worse), ("better", better)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an int >= 0, got {value!r}")
    discordant = worse + better
    if worse == 0:
        return 1.0
    # C(d, j) summed from j = worse up (above the mode d/2) or one minus the sum below worse (at or below it).
    acc = 0
    if 2 * worse > discordant:
        j, term = worse, math.comb(discordant, worse)
        while True:
            acc += term
            if j == discordant:
                break
            term = term * (discordant - j) // (j + 1)
            j += 1
            if term * (discordant - j + 1) < acc >> _TRUNCATE_BITS:
                break
        return acc / (1 << discordant)
    j, term = worse - 1, math.comb(discordant, worse - 1)
    while True:
        acc += term
        if j == 0:
            break
        term = term * j // (discordant - j + 1)
        j -= 1
        if term * (j + 1) < acc >> _TRUNCATE_BITS:
            break
    return ((1 << discordant) - acc) / (1 << discordant)


def minimum_detectable_drop(n1: int, n2: int, alpha: float = 0.05, test: str = "boschloo") -> int | None:
    """Smallest drop d from a clean baseline (n1 of n1) to n2 - d of n2 that ``test`` calls significant at ``alpha``.

    ``None`` when even 0 of n2 is not significant. At n1 = n2 = 5 and alpha 0.05: Boschloo 3, Fisher 4.
    The p-value falls as d grows (the observed table's Fisher p-value C(n2, d) / C(n1 + n2, d) falls, and Boschloo's
    region shrinks with it), so d is found by bisection: O(log n2) tests. Boschloo's p is never above Fisher's, so
    Fisher's drop bounds the search.
    """
    check_counts(n1, n1)
    check_counts(n2, n2)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")

    def first_significant(name: str, high: int) -> int | None:
        if one_sided_p(name, n1, n1, n2 - high, n2) > alpha:
            return None
        low = 0  # a drop of 0 has p-value 1: never significant
        while high - low > 1:
            mid = (low + high) // 2
            if one_sided_p(name, n1, n1, n2 - mid, n2) <= alpha:
                high = mid
            else:
                low = mid
        return high

    fisher = first_significant("fisher", n2)
    if test == "fisher":
        return fisher
    return first_significant(test, n2 if fisher is None else fisher)
