"""Exact coverage of the suite-target intervals when every task shares one true pass rate p (no Monte Carlo error).

The suite intervals depend on the tasks' counts only through their multiset (the histogram of counts), and when all
T tasks pass with probability p the histogram is multinomial: P(histogram) = T! / prod(m_j!) * prod(pmf_j^m_j),
pmf_j = C(n, j) p^j (1 - p)^(n - j). So the coverage of an interval is the sum of the probabilities of the
histograms whose interval holds the true figure: Mean = p, pass^k = p^k, pass@k = 1 - (1 - p)^k,
gap = (p - p^k) in pp. Each histogram's interval is computed once and reused for every p of a scan.

This module calls the real :func:`suite_intervals` for every histogram, so it is exact but only fast enough for small
cells (C(n + T, T) histograms: 1,001 at T = 4, n = 10). The full grid (T <= 10, n <= 20, every k) is
``coverage_grid.py`` beside it.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pytest_consistency.stats.metrics import TaskCounts
from pytest_consistency.stats.suite import suite_intervals

METRICS: tuple[str, ...] = ("mean", "pass^k", "pass@k", "gap")
TOLERANCE = 1e-12
"""A truth within this of an end counts as inside (float rounding of ends such as 1 - (1 - U)^k)."""


def truth(metric: str, p: float, k: int) -> float:
    """The suite's true figure when every task passes with probability p (rates as fractions, the gap in pp)."""
    if metric == "mean":
        return p
    if metric == "pass^k":
        return p**k
    if metric == "pass@k":
        return 1.0 - (1.0 - p) ** k
    return (p - p**k) * 100.0


@dataclass(frozen=True)
class Histogram:
    """One multiset of T counts out of n: its log multinomial weight without p (log T!/prod m_j! + sum log C(n, c))
    and its total passes S, so that log P = log_weight + S log p + (T n - S) log(1 - p)."""

    counts: tuple[int, ...]
    log_weight: float
    passes: int


@lru_cache(maxsize=64)
def histograms(t: int, n: int) -> tuple[Histogram, ...]:
    """Every multiset of t counts out of n."""
    log_comb = [math.log(math.comb(n, j)) for j in range(n + 1)]
    out = []
    for combo in itertools.combinations_with_replacement(range(n + 1), t):
        log_ways = math.lgamma(t + 1) - sum(math.lgamma(m + 1) for m in Counter(combo).values())
        out.append(Histogram(combo, log_ways + sum(log_comb[c] for c in combo), sum(combo)))
    return tuple(out)


@lru_cache(maxsize=64)
def intervals(t: int, n: int, k: int, confidence: float = 0.95) -> tuple[tuple[tuple[float, float], ...], ...]:
    """For each histogram of :func:`histograms`, (low, high) of each metric of :data:`METRICS`."""
    out = []
    for h in histograms(t, n):
        result = suite_intervals([TaskCounts(c, n, k) for c in h.counts], confidence)
        assert result is not None
        shown = (result.mean_at_k, result.pass_hat_k, result.pass_at_k, result.gap_pp)
        out.append(tuple((iv.low, iv.high) for iv in shown))
    return tuple(out)


def probability(h: Histogram, t: int, n: int, p: float) -> float:
    if p <= 0.0:
        return 1.0 if h.passes == 0 else 0.0
    if p >= 1.0:
        return 1.0 if h.passes == t * n else 0.0
    return math.exp(h.log_weight + h.passes * math.log(p) + (t * n - h.passes) * math.log1p(-p))


@dataclass(frozen=True)
class Coverage:
    """Exact coverage of one metric at one p, with the probability of missing below (truth < low) and above."""

    coverage: float
    below: float
    above: float


def exact_coverage(t: int, n: int, k: int, p: float, confidence: float = 0.95) -> dict[str, Coverage]:
    """Coverage of each metric's suite interval when all t tasks (n repetitions, scored at k) pass with rate p."""
    below = dict.fromkeys(METRICS, 0.0)
    above = dict.fromkeys(METRICS, 0.0)
    truths = {metric: truth(metric, p, k) for metric in METRICS}
    terms: dict[str, list[float]] = {metric: [] for metric in METRICS}
    for h, ends in zip(histograms(t, n), intervals(t, n, k, confidence), strict=True):
        weight = probability(h, t, n, p)
        if weight == 0.0:
            continue
        for metric, (low, high) in zip(METRICS, ends, strict=True):
            x = truths[metric]
            if x < low - TOLERANCE:
                below[metric] += weight
            elif x > high + TOLERANCE:
                above[metric] += weight
            else:
                terms[metric].append(weight)
    return {m: Coverage(math.fsum(terms[m]), below[m], above[m]) for m in METRICS}


def p_grid(steps: int = 400, end_points: int = 40) -> list[float]:
    """p in [0, 1]: a uniform grid of ``steps`` steps, plus a geometric grid from 1e-6 towards 0.05 at each end
    (coverage changes fastest near 0 and 1, where the outcome is nearly deterministic)."""
    uniform = {i / steps for i in range(steps + 1)}
    ends = {1e-6 * (0.05 / 1e-6) ** (i / (end_points - 1)) for i in range(end_points)}
    return sorted(uniform | ends | {1.0 - e for e in ends})


def worst(
    cells: Iterable[tuple[int, int, int]], ps: Sequence[float], confidence: float = 0.95
) -> dict[str, tuple[float, tuple[int, int, int, float]]]:
    """For each metric, the lowest coverage over the cells (t, n, k) and the p values, and where it is."""
    out: dict[str, tuple[float, tuple[int, int, int, float]]] = {m: (2.0, (0, 0, 0, 0.0)) for m in METRICS}
    for t, n, k in cells:
        for p in ps:
            for metric, cov in exact_coverage(t, n, k, p, confidence).items():
                if cov.coverage < out[metric][0]:
                    out[metric] = (cov.coverage, (t, n, k, p))
    return out
