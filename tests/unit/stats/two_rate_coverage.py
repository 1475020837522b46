"""Exact one-sided misses of the suite-target intervals when the tasks have two pass rates (no Monte Carlo error).

A suite of T1 tasks at pass rate p1 and T2 tasks at p2 (T1 + T2 = T; T2 = 0 is the one-rate suite), each task run n
times and scored at k. The intervals depend on the counts only through their multiset, so every outcome is a pair
(multiset of the T1 counts, multiset of the T2 counts), with probability P1 * P2, each the multinomial probability of
its multiset; the interval of the combined multiset is computed once, by ``suite_intervals`` itself, and reused for
every pair of rates and every split of T. The truth is the suite's figure: Mean = mean p_i, pass^k = mean p_i^k,
pass@k = mean 1 - (1 - p_i)^k, gap = mean (p_i - p_i^k) (in pp). For each metric the two one-sided misses are summed
separately: below (truth < low) and above (truth > high). A truth within ``TOLERANCE`` of an end counts as inside.

The paired gap change is checked the same way at no change (both runs have the same rates): its sign-flip interval
depends on the multiset of the tasks' gap changes D_i = G(c'_i) - G(c_i) only, so the outcomes are the multisets of
D values, each with its multinomial probability; the truth is 0.

Used by test_stats_two_rate_coverage.py (a representative subset, in the normal run) and by ``main`` here, the
fuller grid on demand (numpy needed; the package itself never imports it):

    .venv/bin/python tests/unit/stats/two_rate_coverage.py [--t 1-6] [--n 3,4,5,8,10] [--confidence 0.95,0.9]
    .venv/bin/python tests/unit/stats/two_rate_coverage.py --t 7-10 --n 3,4,5  # more tasks where it is cheap

or ``CONSISTENCY_FULL_GRID=1 .venv/bin/pytest tests/unit/stats/test_stats_two_rate_coverage.py``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from pytest_consistency.stats.gap_change import _sign_flip_ends
from pytest_consistency.stats.metrics import TaskCounts
from pytest_consistency.stats.suite import _estimator_values, suite_intervals

METRICS: tuple[str, ...] = ("mean", "pass^k", "pass@k", "gap")
TOLERANCE = 1e-12
RATES: tuple[float, ...] = (
    1e-4, 0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.928, 0.95, 0.98, 0.99, 0.999,
)  # fmt: skip
"""Rates dense near 0 and 1, where one task's outcome is nearly certain and a few tasks carry the whole law."""


def ks_for(n: int) -> list[int]:
    """k in {1, 2, n // 2, n - 1, n} (as far as they exist)."""
    return sorted({k for k in (1, 2, n // 2, n - 1, n) if 1 <= k <= n})


def truths(groups: Sequence[tuple[int, float]], k: int) -> np.ndarray:
    """The four true figures of a suite of groups (tasks, rate); the gap in pp."""
    t = sum(size for size, _ in groups)
    mean = sum(size * p for size, p in groups) / t
    hat = sum(size * p**k for size, p in groups) / t
    at = sum(size * (1.0 - (1.0 - p) ** k) for size, p in groups) / t
    return np.array([mean, hat, at, (mean - hat) * 100.0])


@lru_cache(maxsize=256)
def multisets(t: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every multiset of t counts out of n: (rows, log multinomial weight without p, total passes)."""
    if t == 0:
        return np.zeros((1, 0), dtype=np.int64), np.zeros(1), np.zeros(1, dtype=np.int64)
    rows = np.array(list(itertools.combinations_with_replacement(range(n + 1), t)), dtype=np.int64)
    log_comb = np.array([math.log(math.comb(n, j)) for j in range(n + 1)])
    weights = np.empty(len(rows))
    for i, row in enumerate(rows.tolist()):
        ways = math.lgamma(t + 1) - sum(math.lgamma(m + 1) for m in Counter(row).values())
        weights[i] = ways + log_comb[row].sum()
    return rows, weights, rows.sum(axis=1)


def probabilities(t: int, n: int, p: float) -> np.ndarray:
    """P(multiset) for each multiset of :func:`multisets` when every one of the t tasks passes with rate p."""
    _, weights, passes = multisets(t, n)
    if t == 0:
        return np.ones(1)
    if p <= 0.0:
        return (passes == 0).astype(float)
    if p >= 1.0:
        return (passes == t * n).astype(float)
    return np.exp(weights + passes * math.log(p) + (t * n - passes) * math.log1p(-p))


class Intervals:
    """suite_intervals of every multiset of T counts out of n, scored at k, at one confidence: (m, 4, 2) ends."""

    def __init__(self, t: int, n: int, k: int, confidence: float) -> None:
        self.t, self.n, self.k, self.confidence = t, n, k, confidence
        rows, _, _ = multisets(t, n)
        self.index = {tuple(row): i for i, row in enumerate(rows.tolist())}
        ends = np.empty((len(rows), 4, 2))
        for i, row in enumerate(rows.tolist()):
            result = suite_intervals([TaskCounts(c, n, k) for c in row], confidence)
            assert result is not None
            shown = (result.mean_at_k, result.pass_hat_k, result.pass_at_k, result.gap_pp)
            ends[i] = [(iv.low, iv.high) for iv in shown]
        self.ends = ends

    @lru_cache(maxsize=64)  # noqa: B019 - a handful of instances, each kept for a whole grid
    def pairs(self, t1: int) -> np.ndarray:
        """For the split (t1, T - t1): the index of the combined multiset of each (first, second) pair."""
        first, _, _ = multisets(t1, self.n)
        second, _, _ = multisets(self.t - t1, self.n)
        out = np.empty((len(first), len(second)), dtype=np.int64)
        for i, a in enumerate(first.tolist()):
            for j, b in enumerate(second.tolist()):
                out[i, j] = self.index[tuple(sorted(a + b))]
        return out


@dataclass(frozen=True)
class Misses:
    """One-sided miss probabilities of the four metrics: below[m] = P(truth < low), above[m] = P(truth > high)."""

    below: np.ndarray
    above: np.ndarray

    def worst(self) -> float:
        return float(max(self.below.max(), self.above.max()))


def misses(table: Intervals, t1: int, p1: float, p2: float) -> Misses:
    """Exact misses of a suite of t1 tasks at p1 and T - t1 tasks at p2."""
    t, n, k = table.t, table.n, table.k
    index = table.pairs(t1)
    weight = np.outer(probabilities(t1, n, p1), probabilities(t - t1, n, p2))
    truth = truths([(t1, p1), (t - t1, p2)] if t1 < t else [(t, p1)], k)
    ends = table.ends[index]  # (m1, m2, 4, 2)
    below = np.array([weight[truth[m] < ends[..., m, 0] - TOLERANCE].sum() for m in range(4)])
    above = np.array([weight[truth[m] > ends[..., m, 1] + TOLERANCE].sum() for m in range(4)])
    return Misses(below, above)


@dataclass(frozen=True)
class Worst:
    miss: float
    side: str
    metric: str
    where: tuple[int, int, int, int, float, float]  # (t, t1, n, k, p1, p2)
    coverage: float = 2.0  # the lowest coverage (1 - below - above) of any metric in the cell
    suites: int = 0  # how many (split, k, p1, p2) were checked
    per_metric: tuple[float, ...] = ()  # the worst one-sided miss of each metric in the cell (k >= 2 but Mean@k)


def scan(
    ts: Sequence[int], ns: Sequence[int], confidence: float, rates: Sequence[float] = RATES, verbose: bool = False
) -> tuple[Worst, list[Worst]]:
    """Every two-rate suite of the grid; returns the worst one-sided miss overall and per (T, n) cell."""
    overall = Worst(-1.0, "", "", (0, 0, 0, 0, 0.0, 0.0))
    cells = []
    for t in ts:
        for n in ns:
            start = time.time()
            cell = Worst(-1.0, "", "", (0, 0, 0, 0, 0.0, 0.0))
            lowest, suites = 2.0, 0
            per_metric = np.zeros(4)
            for k in ks_for(n):
                table = Intervals(t, n, k, confidence)
                for t1 in range(1, t + 1):
                    seconds = rates if t1 < t else [rates[0]]
                    for p1 in rates:
                        for p2 in seconds:
                            if t1 < t and p2 == p1:
                                continue
                            result = misses(table, t1, p1, p2)
                            suites += 1
                            lowest = min(lowest, float((1.0 - result.below - result.above).min()))
                            worst_here = np.maximum(result.below, result.above)
                            if k == 1:  # pass^1 and pass@1 are Mean@k, the gap is 0: count them as Mean@k's
                                worst_here[1:] = 0.0
                            per_metric = np.maximum(per_metric, worst_here)
                            for side, values in (("below", result.below), ("above", result.above)):
                                m = int(np.argmax(values))
                                if values[m] > cell.miss:
                                    where = (t, t1, n, k, p1, p2 if t1 < t else p1)
                                    cell = Worst(float(values[m]), side, METRICS[m], where)
            cell = Worst(cell.miss, cell.side, cell.metric, cell.where, lowest, suites, tuple(per_metric.tolist()))
            cells.append(cell)
            if cell.miss > overall.miss:
                overall = cell
            if verbose:
                print(f"T={t} n={n:2d} c={confidence}: worst {cell} ({time.time() - start:.1f}s)", flush=True)
    return overall, cells


# --- the paired gap change at no change -------------------------------------------------------------------------


def change_law(n: int, k: int, p: float) -> dict[float, tuple[float, tuple[int, int]]]:
    """Law of one task's gap change D = G(c') - G(c) when both runs pass with rate p: D -> (probability, a pair of
    counts giving it)."""
    gaps = [float(v) for v in _estimator_values(n, k)[3]]
    pmf = [math.comb(n, j) * p**j * (1.0 - p) ** (n - j) for j in range(n + 1)]
    law: dict[float, tuple[float, tuple[int, int]]] = {}
    for before, after in itertools.product(range(n + 1), repeat=2):
        d = round(gaps[after] - gaps[before], 12)
        weight, pair = law.get(d, (0.0, (before, after)))
        law[d] = (weight + pmf[before] * pmf[after], pair)
    return law


def paired_misses(groups: Sequence[tuple[int, float]], n: int, k: int, confidence: float) -> tuple[float, float]:
    """Exact P(low > 0) and P(high < 0) of the sign-flip interval of the gap change (``suite._sign_flip_ends``)
    when both runs have the rates of ``groups``. That interval depends only on the multiset of the changes D_i, so
    the outcomes are those multisets with their multinomial probabilities. paired_gap_difference contains it
    wherever it uses it (test_stats_two_rate_coverage.py checks so), and is the Bonferroni difference of the suite
    intervals elsewhere, so these bound its misses at no change."""
    t = sum(size for size, _ in groups)
    confidence_tail = (1.0 - confidence) / 2.0
    if 2.0**-t > confidence_tail:
        return 0.0, 0.0  # the sign-flip interval is not used
    per_group = []
    for size, p in groups:
        law = change_law(n, k, p)
        values = sorted(law)
        outcomes = []
        for combo in itertools.combinations_with_replacement(range(len(values)), size):
            ways = math.factorial(size)
            for repeats in Counter(combo).values():
                ways //= math.factorial(repeats)
            weight = ways * math.prod(law[values[i]][0] for i in combo)
            if weight > 0.0:
                outcomes.append(([law[values[i]][1] for i in combo], weight))
        per_group.append(outcomes)
    gaps = _estimator_values(n, k)[3]
    below = above = 0.0
    for parts in itertools.product(*per_group):
        weight = math.prod(w for _, w in parts)
        changes = [gaps[after] - gaps[before] for chosen, _ in parts for before, after in chosen]
        low, high = _sign_flip_ends(changes, confidence)
        if low > TOLERANCE:
            below += weight  # the truth, 0, is below the interval
        elif high < -TOLERANCE:
            above += weight
    return below, above


def itemgetter_metric(m: int) -> Callable[[Worst], float]:
    return lambda cell: cell.per_metric[m]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--t", default="1-6", help="task counts, e.g. 1-6 or 4,5")
    parser.add_argument("--n", default="3,4,5,8,10", help="repetition counts")
    parser.add_argument("--confidence", default="0.95,0.9", help="confidence levels")
    args = parser.parse_args(argv)
    from coverage_grid import counts_of as parse  # the one-rate grid's command line reads counts the same way

    for confidence in (float(c) for c in args.confidence.split(",")):
        start = time.time()
        worst, cells = scan(parse(args.t), parse(args.n), confidence, verbose=True)
        nominal = (1.0 - confidence) / 2.0
        failing = [c for c in cells if c.miss > nominal]
        for m, metric in enumerate(METRICS):
            top = max(cells, key=itemgetter_metric(m))
            print(f"  {metric}: worst one-sided miss {top.per_metric[m]:.5f} in the (T, n) cell {top.where[0::2][:2]}")
        print(
            f"confidence {confidence}: {sum(c.suites for c in cells)} suites in {len(cells)} (T, n) cells, lowest "
            f"coverage {min(c.coverage for c in cells):.5f}, worst one-sided miss {worst.miss:.5f} (nominal "
            f"{nominal:.4f}) {worst.side} on {worst.metric} at (T, T1, n, k, p1, p2) = {worst.where}; "
            f"{len(failing)} cell(s) above nominal; {time.time() - start:.0f}s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
