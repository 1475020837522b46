"""One-sided exact tests for "the current run passes a task less often than the baseline did", and FDR control.

It exists so a CI gate can tell a real per-task regression from repetition noise at n = 3..10, where asymptotic tests
are useless. Assumptions: baseline (c1 of n1) and current (c2 of n2) are independent binomial samples; the
alternative is always one-sided, p_current < p_baseline. Fisher's test conditions on the total passes; Boschloo's
test uses Fisher's p-value as its statistic and maximises the unconditional tail over the common pass rate (the
nuisance parameter), so it is uniformly more powerful. Ties between tables are decided exactly (rational
arithmetic), and the supremum is taken on a dense grid plus local refinement. Across many tasks use
Benjamini-Hochberg; for all-pass flips between two runs of the same tasks use the exact McNemar test.
Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache

from pytest_consistency.stats.binomial import check_counts

TESTS: tuple[str, ...] = ("boschloo", "fisher")

_GRID_POINTS = 1000
_REFINE_STEPS = 60


def _check_pair(c1: int, n1: int, c2: int, n2: int) -> None:
    check_counts(c1, n1)
    check_counts(c2, n2)


@lru_cache(maxsize=512)
def _fisher_statistics(n1: int, n2: int) -> tuple[tuple[Fraction, ...], ...]:
    """Exact one-sided Fisher p-value P(X1 >= x1 | x1 + x2) for every table (x1, x2), as ``table[x1][x2]``."""
    total = n1 + n2
    table = [[Fraction(0)] * (n2 + 1) for _ in range(n1 + 1)]
    for s in range(total + 1):
        lo, hi = max(0, s - n2), min(n1, s)
        denominator = math.comb(total, s)
        tail = 0
        for x1 in range(hi, lo - 1, -1):
            tail += math.comb(n1, x1) * math.comb(n2, s - x1)
            table[x1][s - x1] = Fraction(tail, denominator)
    return tuple(tuple(row) for row in table)


@lru_cache(maxsize=4096, typed=True)
def fisher_one_sided(c1: int, n1: int, c2: int, n2: int) -> float:
    """Fisher's exact one-sided p-value that the current pass rate (c2/n2) is below the baseline's (c1/n1).

    Equals ``scipy.stats.fisher_exact([[c1, n1 - c1], [c2, n2 - c2]], alternative="greater").pvalue``.
    5/5 -> 2/5: 0.083.
    """
    _check_pair(c1, n1, c2, n2)
    return float(_fisher_statistics(n1, n2)[c1][c2])


def fisher_statistics(n1: int, n2: int) -> tuple[tuple[Fraction, ...], ...]:
    """Exact one-sided Fisher p-value of every table, as ``table[x1][x2]`` (x1 baseline passes, x2 current)."""
    check_counts(n1, n1)
    check_counts(n2, n2)
    return _fisher_statistics(n1, n2)


def region_log_weights(n1: int, n2: int, threshold: Fraction) -> list[tuple[int, float]]:
    """Tables whose Fisher p-value is <= ``threshold``: (s, log of the sum of C(n1,x1) C(n2,x2)) per total s."""
    stats = _fisher_statistics(n1, n2)
    weights: dict[int, int] = {}
    for x1 in range(n1 + 1):
        row = stats[x1]
        c_n1 = math.comb(n1, x1)
        for x2 in range(n2 + 1):
            if row[x2] <= threshold:
                weights[x1 + x2] = weights.get(x1 + x2, 0) + c_n1 * math.comb(n2, x2)
    return sorted((s, math.log(w)) for s, w in weights.items())


def _tail_probability(log_weights: list[tuple[int, float]], total: int, pi: float) -> float:
    """P(table in the region) when both runs pass with probability ``pi``."""
    if pi <= 0.0:
        return 1.0 if log_weights and log_weights[0][0] == 0 else 0.0
    if pi >= 1.0:
        return 1.0 if log_weights and log_weights[-1][0] == total else 0.0
    lp = math.log(pi)
    lq = math.log1p(-pi)
    return math.fsum(math.exp(lw + s * lp + (total - s) * lq) for s, lw in log_weights)


def supremum_over_nuisance(log_weights: list[tuple[int, float]], total: int, grid_points: int = _GRID_POINTS) -> float:
    """max over pi in [0, 1] of the region's probability: dense grid, then golden-section around the best point."""
    grid = [i / grid_points for i in range(grid_points + 1)]
    values = [_tail_probability(log_weights, total, pi) for pi in grid]
    best_index = max(range(len(values)), key=values.__getitem__)
    best = values[best_index]
    lo = grid[max(best_index - 1, 0)]
    hi = grid[min(best_index + 1, grid_points)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = _tail_probability(log_weights, total, a), _tail_probability(log_weights, total, b)
    for _ in range(_REFINE_STEPS):
        if fa >= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = _tail_probability(log_weights, total, a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = _tail_probability(log_weights, total, b)
    return min(1.0, max(best, fa, fb))


@lru_cache(maxsize=4096, typed=True)
def boschloo_one_sided(c1: int, n1: int, c2: int, n2: int) -> float:
    """Boschloo's exact one-sided p-value that the current pass rate (c2/n2) is below the baseline's (c1/n1).

    Matches ``scipy.stats.boschloo_exact([[c1, c2], [n1 - c1, n2 - c2]], alternative="greater")`` (which
    searches the nuisance parameter with a coarse optimiser; this takes the supremum on a dense grid). scipy takes
    the table's columns as the two independent samples, so the runs are the columns here.
    5/5 -> 2/5: 0.0309; 5/5 -> 1/5: 11/1024 = 0.0107. (0.035 and 0.0069, quoted elsewhere, come from the transposed
    table, which fixes the totals of passes and failures instead of the run sizes.)
    """
    _check_pair(c1, n1, c2, n2)
    observed = _fisher_statistics(n1, n2)[c1][c2]
    return supremum_over_nuisance(region_log_weights(n1, n2, observed), n1 + n2)


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
    task is equally likely to go either way, so this is P(X >= worse), X ~ Binomial(worse + better, 1/2).
    Five flips, all to worse: 1/32 = 0.031.
    """
    for name, value in (("worse", worse), ("better", better)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an int >= 0, got {value!r}")
    discordant = worse + better
    tail = sum(math.comb(discordant, j) for j in range(worse, discordant + 1))
    return float(Fraction(tail, 2**discordant))


def minimum_detectable_drop(n1: int, n2: int, alpha: float = 0.05, test: str = "boschloo") -> int | None:
    """Smallest drop d from a clean baseline (n1 of n1) to n2 - d of n2 that ``test`` calls significant at ``alpha``.

    ``None`` when even 0 of n2 is not significant. At n1 = n2 = 5 and alpha 0.05: Boschloo 3, Fisher 4.
    """
    check_counts(n1, n1)
    check_counts(n2, n2)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    for drop in range(1, n2 + 1):
        if one_sided_p(test, n1, n1, n2 - drop, n2) <= alpha:
            return drop
    return None
