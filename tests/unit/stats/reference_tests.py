"""The exact tests as they were before they were made fast at large n, kept as the reference the fast ones must equal.

Fisher's one-sided p-value of every table as a ``Fraction`` (the whole (n1 + 1) x (n2 + 1) table: n1 = n2 = 2000 took
over 15 minutes and 1 GB), Boschloo's p-value from the region of tables at most as likely by that statistic, found by
comparing every table's Fraction, and McNemar's binomial tail from ``math.comb``. Only for small n.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

_GRID_POINTS = 1000
_REFINE_STEPS = 60


@lru_cache(maxsize=256)
def fisher_statistics(n1: int, n2: int) -> tuple[tuple[Fraction, ...], ...]:
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


def fisher_one_sided(c1: int, n1: int, c2: int, n2: int) -> float:
    return float(fisher_statistics(n1, n2)[c1][c2])


def region_log_weights(n1: int, n2: int, threshold: Fraction) -> list[tuple[int, float]]:
    """Tables whose Fisher p-value is <= ``threshold``: (s, log of the sum of C(n1,x1) C(n2,x2)) per total s."""
    stats = fisher_statistics(n1, n2)
    weights: dict[int, int] = {}
    for x1 in range(n1 + 1):
        row = stats[x1]
        c_n1 = math.comb(n1, x1)
        for x2 in range(n2 + 1):
            if row[x2] <= threshold:
                weights[x1 + x2] = weights.get(x1 + x2, 0) + c_n1 * math.comb(n2, x2)
    return sorted((s, math.log(w)) for s, w in weights.items())


def _tail_probability(log_weights: list[tuple[int, float]], total: int, pi: float) -> float:
    if pi <= 0.0:
        return 1.0 if log_weights and log_weights[0][0] == 0 else 0.0
    if pi >= 1.0:
        return 1.0 if log_weights and log_weights[-1][0] == total else 0.0
    lp = math.log(pi)
    lq = math.log1p(-pi)
    return math.fsum(math.exp(lw + s * lp + (total - s) * lq) for s, lw in log_weights)


def supremum_over_nuisance(log_weights: list[tuple[int, float]], total: int, grid_points: int = _GRID_POINTS) -> float:
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


def boschloo_one_sided(c1: int, n1: int, c2: int, n2: int) -> float:
    observed = fisher_statistics(n1, n2)[c1][c2]
    return supremum_over_nuisance(region_log_weights(n1, n2, observed), n1 + n2)


def mcnemar_one_sided(worse: int, better: int) -> float:
    discordant = worse + better
    tail = sum(math.comb(discordant, j) for j in range(worse, discordant + 1))
    return float(Fraction(tail, 2**discordant))


def minimum_detectable_drop(n1: int, n2: int, alpha: float, test: str) -> int | None:
    one_sided = boschloo_one_sided if test == "boschloo" else fisher_one_sided
    for drop in range(1, n2 + 1):
        if one_sided(n1, n1, n2 - drop, n2) <= alpha:
            return drop
    return None
