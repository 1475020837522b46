"""The exact coverage grid of the suite-target intervals at one common pass rate p: T <= 10 tasks, n <= 10
repetitions, every k <= n, all four metrics (Mean@k, pass^k, pass@k, the gap), each one-sided miss separately.

Run on demand (about half an hour on one core at the defaults; needs numpy and scipy, which the package itself never
imports):

    .venv/bin/python tests/unit/stats/coverage_grid.py [--t 1-10] [--n 1-10] [--steps 2000] [--confidence 0.95]

or ``CONSISTENCY_FULL_GRID=1 .venv/bin/pytest tests/unit/stats/test_stats_suite_exact_coverage.py``. Unequal pass
rates are two_rate_coverage.py's (T1 tasks at one rate, T2 at another).

Exact, like suite_coverage.py: the C(n + T, T) histograms of T counts out of n are generated with numpy in chunks,
and each one's intervals come from ``suite_intervals`` itself (an earlier version recomputed them with numpy from
per-count tables; the bounds of issue 40 are no closed formula of a few tables, and one implementation is one less
to keep in step). Up to n = 20 the histograms number 129 million: out of reach that way, so the default stops at 10.

Coverage at every p of a grid comes from one pass over the histograms: a histogram's interval for a metric that is
monotone in p misses below the truth f(p) exactly for the grid points with f(p) < low, so each histogram adds its
probability given its total passes S (which does not depend on p) to one cell of a table indexed by (S, first grid
point it covers); a cumulative sum along the grid and the Binomial(T n, p) probability of S give the missed mass at
every grid point, below and above separately. The gap p - p^k is concave, so it is monotone on each side of its
peak and handled on each side separately.

The grid: ``steps`` uniform steps on [0, 1], plus 80 geometric points from 1e-7 to 0.02 at each end (2,159 values
of p with the default 2,000 steps); then, for the ``--refine`` worst cells of each metric, a local grid of 400
points on the two steps around each of their ten worst grid points (coverage is piecewise smooth in p and jumps
where an interval end meets the truth, so its infimum is approached next to a jump).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from pytest_consistency.stats import suite as suite_module
from pytest_consistency.stats.metrics import TaskCounts
from pytest_consistency.stats.suite import suite_intervals

METRICS: tuple[str, ...] = ("mean", "pass^k", "pass@k", "gap")
TOLERANCE = 1e-12
CONFIDENCE = 0.95


def truth(metric: str, p: np.ndarray, k: int) -> np.ndarray:
    if metric == "mean":
        return p
    if metric == "pass^k":
        return np.asarray(p**k)
    if metric == "pass@k":
        return np.asarray(1.0 - (1.0 - p) ** k)
    return np.asarray((p - p**k) * 100.0)


def default_grid(steps: int, end_points: int = 80) -> np.ndarray:
    uniform = np.arange(steps + 1) / steps
    ends = np.geomspace(1e-7, 0.02, end_points)
    return np.unique(np.concatenate([uniform, ends, 1.0 - ends]))


# --- histograms ------------------------------------------------------------------------------------------------------


def chunks(t: int, n: int) -> Iterator[np.ndarray]:
    """Every multiset of t counts out of n as sorted rows, in chunks that share their first two counts."""
    if t <= 2:
        yield np.array(list(itertools.combinations_with_replacement(range(n + 1), t)), dtype=np.int16).reshape(-1, t)
        return
    for first in range(n + 1):
        for second in range(first, n + 1):
            rest = itertools.combinations_with_replacement(range(second, n + 1), t - 2)
            tail = np.fromiter(itertools.chain.from_iterable(rest), dtype=np.int16).reshape(-1, t - 2)
            head = np.broadcast_to(np.array([first, second], dtype=np.int16), (len(tail), 2))
            yield np.concatenate([head, tail], axis=1)


def histogram_counts(rows: np.ndarray, n: int) -> np.ndarray:
    """m_j, how many tasks have count j, for each row (rows x (n + 1))."""
    counts = np.zeros((len(rows), n + 1), dtype=np.float64)
    for j in range(n + 1):
        counts[:, j] = (rows == j).sum(axis=1)
    return counts


def log_weights(counts: np.ndarray, t: int, n: int) -> np.ndarray:
    """log(T! / prod m_j!) + sum_j m_j log C(n, j): log P(histogram) without the factor p^S (1 - p)^(T n - S)."""
    from scipy.special import gammaln  # type: ignore[import-untyped]

    log_comb = np.array([math.log(math.comb(n, j)) for j in range(n + 1)])
    return np.asarray(math.lgamma(t + 1) - gammaln(counts + 1.0).sum(axis=1) + counts @ log_comb)


# --- the package's intervals ------------------------------------------------------------------------------------


def real_intervals(rows: np.ndarray, n: int, k: int, confidence: float = CONFIDENCE) -> np.ndarray:
    """(rows, 4, 2): each histogram's (low, high) of Mean@k, pass^k, pass@k and the gap (pp), from suite_intervals."""
    out = np.empty((len(rows), 4, 2))
    for i, row in enumerate(rows.tolist()):
        result = suite_intervals([TaskCounts(c, n, k) for c in row], confidence)
        assert result is not None
        for metric, iv in enumerate((result.mean_at_k, result.pass_hat_k, result.pass_at_k, result.gap_pp)):
            out[i, metric] = (iv.low, iv.high)
    return out


# --- coverage on a grid of p -----------------------------------------------------------------------------------------


class SegmentAccumulator:
    """Missed weight for one monotone segment of the truth: tables indexed by (S, position along the segment)."""

    def __init__(self, order: np.ndarray, values: np.ndarray, size: int) -> None:
        self.order, self.values, self.size = order, values, size
        m = len(order)
        self.below = np.zeros(size * (m + 1))
        self.above = np.zeros(size * (m + 1))

    def add(self, lows_ends: np.ndarray, highs_ends: np.ndarray, totals: np.ndarray, weights: np.ndarray) -> None:
        m = len(self.order)
        lows = np.searchsorted(self.values, lows_ends - TOLERANCE, side="left")
        highs = np.searchsorted(self.values, highs_ends + TOLERANCE, side="right")
        self.below += np.bincount(totals * (m + 1) + lows, weights=weights, minlength=self.size * (m + 1))
        self.above += np.bincount(totals * (m + 1) + highs, weights=weights, minlength=self.size * (m + 1))

    def missed(self, grid: np.ndarray, t: int, n: int, shift: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Missed probability below and above at each grid point of the segment (in the segment's order)."""
        m = len(self.order)
        below = self.below.reshape(self.size, m + 1)
        above = self.above.reshape(self.size, m + 1)
        # grid position i (0-based) misses below for histograms with lows > i; above for highs <= i
        below_tail = np.cumsum(below[:, ::-1], axis=1)[:, ::-1][:, 1:]  # sum over lows >= i + 1
        above_head = np.cumsum(above, axis=1)[:, :m]  # sum over highs <= i
        p = grid[self.order]
        totals = np.arange(self.size)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            log_p = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), -np.inf)
            log_q = np.where(p < 1, np.log1p(-np.where(p < 1, p, 0.0)), -np.inf)
            exponent = totals * log_p[None, :] + (t * n - totals) * log_q[None, :] + shift[:, None]
            exponent = np.where((totals == 0) & (p[None, :] == 0), shift[:, None], exponent)
            exponent = np.where((totals == t * n) & (p[None, :] == 1), shift[:, None], exponent)
            factor = np.exp(exponent)
        return (below_tail * factor).sum(axis=0), (above_head * factor).sum(axis=0)


@dataclass
class CellResult:
    t: int
    n: int
    k: int
    coverage: dict[str, np.ndarray]  # per metric, coverage at each grid point
    below: dict[str, np.ndarray]  # per metric, P(truth < low) at each grid point
    above: dict[str, np.ndarray]  # per metric, P(truth > high) at each grid point
    total: np.ndarray  # total probability at each grid point (1 up to rounding)


def cell_coverage(
    t: int, n: int, grids: dict[int, np.ndarray] | None, grid: np.ndarray, confidence: float = CONFIDENCE
) -> list[CellResult]:
    """Coverage and one-sided misses of every metric at every grid point for each k = 1..n (``grids`` may give a k
    its own grid)."""
    ks = list(range(1, n + 1)) if grids is None else sorted(grids)
    size = t * n + 1
    accs: dict[tuple[int, str], list[SegmentAccumulator]] = {}
    grid_of = {k: grid if grids is None else grids[k] for k in ks}
    assert all(np.all(np.diff(g) > 0) for g in grid_of.values()), "grids must be strictly increasing"
    for k in ks:
        for metric in METRICS:
            values = truth(metric, grid_of[k], k)
            if metric == "gap" and k > 1:
                rising = grid_of[k] <= suite_module._g_peak(k)
            else:
                rising = np.ones(len(grid_of[k]), dtype=bool)
            segs = []
            for mask, sign in ((rising, 1), (~rising, -1)):
                index = np.flatnonzero(mask)
                if len(index):
                    order = index if sign > 0 else index[::-1]
                    segs.append(SegmentAccumulator(order, values[order], size))
            accs[(k, metric)] = segs
    # Weights are P(histogram | total S), which does not depend on p: the histograms of one total S weigh
    # C(T n, S) in all (Vandermonde), so the factor at p is the binomial pmf of S, Binomial(T n, p).
    shift = -np.array([math.log(math.comb(t * n, s)) for s in range(size)])
    mass = np.zeros(size)
    for rows in chunks(t, n):
        counts = histogram_counts(rows, n)
        totals = rows.sum(axis=1).astype(np.int64)
        weights = np.exp(log_weights(counts, t, n) + shift[totals])
        mass += np.bincount(totals, weights=weights, minlength=size)
        for k in ks:
            ends = real_intervals(rows, n, k, confidence)
            for metric_index, metric in enumerate(METRICS):
                for seg in accs[(k, metric)]:
                    seg.add(ends[:, metric_index, 0], ends[:, metric_index, 1], totals, weights)
    results = []
    for k in ks:
        g = grid_of[k]
        coverage: dict[str, np.ndarray] = {}
        belows: dict[str, np.ndarray] = {}
        aboves: dict[str, np.ndarray] = {}
        total = _total_mass(mass, g, t, n, -shift)
        for metric in METRICS:
            below = np.zeros(len(g))
            above = np.zeros(len(g))
            for seg in accs[(k, metric)]:
                b, a = seg.missed(g, t, n, -shift)
                below[seg.order] = b
                above[seg.order] = a
            coverage[metric] = total - below - above
            belows[metric], aboves[metric] = below, above
        results.append(CellResult(t, n, k, coverage, belows, aboves, total))
    return results


def _total_mass(mass: np.ndarray, grid: np.ndarray, t: int, n: int, shift: np.ndarray) -> np.ndarray:
    seg = SegmentAccumulator(np.arange(len(grid)), grid, len(mass))
    m = len(grid)
    table = np.zeros((len(mass), m + 1))
    table[:, m] = mass  # lows = m: every grid point "misses below", so `below` sums the whole mass
    seg.below = table.reshape(-1)
    below, _ = seg.missed(grid, t, n, shift)
    return below


def refine(
    t: int, n: int, k: int, metric: str, coarse: np.ndarray, cov: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The lowest coverage on local grids of 400 points around the ten worst coarse grid points: (coverage, p)."""
    worst = np.argsort(cov)[:10]
    best = (float(cov.min()), float(coarse[int(np.argmin(cov))]))
    local = []
    for i in worst.tolist():
        lo = coarse[max(i - 1, 0)]
        hi = coarse[min(i + 1, len(coarse) - 1)]
        local.append(np.linspace(lo, hi, 400))
    fine = np.unique(np.concatenate(local))
    (result,) = cell_coverage(t, n, {k: fine}, fine, confidence)
    values = result.coverage[metric]
    i = int(np.argmin(values))
    if values[i] < best[0]:
        best = (float(values[i]), float(fine[i]))
    return best


def counts_of(spec: str) -> list[int]:
    """``1-6`` or ``4,5,8-10`` as the whole numbers it names (the grids' command lines)."""
    out: list[int] = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--t", default="1-10", help="task counts, e.g. 1-10 or 4,5")
    parser.add_argument("--n", default="1-10", help="repetition counts, e.g. 1-10")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--confidence", type=float, default=CONFIDENCE)
    parser.add_argument("--refine", type=int, default=3, help="refine the worst cells of each metric")
    parser.add_argument("--out", help="write every cell's lowest coverage and worst tail per metric to this JSON file")
    args = parser.parse_args(argv)
    parse = counts_of
    grid = default_grid(args.steps)
    tail = (1.0 - args.confidence) / 2.0
    cells: list[tuple[str, float, float, int, int, int, float]] = []  # (metric, coverage, worst tail, t, n, k, p)
    start = time.time()
    for t in parse(args.t):
        for n in parse(args.n):
            cell_start = time.time()
            for result in cell_coverage(t, n, None, grid, args.confidence):
                assert np.all(np.abs(result.total - 1.0) < 1e-9), (t, n, result.k, result.total.min())
                for metric, cov in result.coverage.items():
                    i = int(np.argmin(cov))
                    worst = float(np.maximum(result.below[metric], result.above[metric]).max())
                    cells.append((metric, float(cov[i]), worst, t, n, result.k, float(grid[i])))
            here = [c for c in cells if c[3] == t and c[4] == n]
            parts = []
            for metric in METRICS:
                mine = [c for c in here if c[0] == metric and (c[5] > 1 or metric == "mean")]
                if not mine:
                    parts.append(f"{metric} n/a (k = 1 only)")
                    continue
                low = min(mine, key=lambda c: c[1])
                parts.append(f"{metric} {low[1]:.4f} tail {max(c[2] for c in mine):.4f}")
            print(f"T={t:2d} n={n:2d} {time.time() - cell_start:7.1f}s  " + "  ".join(parts), flush=True)
    print(f"grid of {len(grid)} values of p done in {time.time() - start:.0f}s", flush=True)
    if args.out:
        keys = ("metric", "coverage", "tail", "t", "n", "k", "p")
        with open(args.out, "w") as handle:
            json.dump([dict(zip(keys, c, strict=True)) for c in cells], handle)
    over = [c for c in cells if c[2] > tail + 1e-12]
    print(f"one-sided misses above the nominal {tail:.4f}: {len(over)} of {len(cells)} (cell, metric) pairs")
    for metric in METRICS:
        for label, chosen in (("every k", cells), ("k >= 2", [c for c in cells if c[5] > 1])):
            mine = [c for c in chosen if c[0] == metric]
            if not mine or (metric == "mean" and label == "k >= 2"):
                continue
            _, lowest, _, t, n, k, p = min(mine, key=lambda c: c[1])
            worst = max(mine, key=lambda c: c[2])
            print(
                f"{metric} ({label}): lowest coverage on the grid {lowest:.5f} at T={t}, n={n}, k={k}, p={p:.6g}; "
                f"worst one-sided miss {worst[2]:.5f} at T={worst[3]}, n={worst[4]}, k={worst[5]}"
            )
            if not args.refine:
                continue
            found = []
            for _, _, _, t, n, k, _ in sorted(mine, key=lambda c: c[1])[: args.refine]:
                (result,) = cell_coverage(t, n, {k: grid}, grid, args.confidence)
                found.append((*refine(t, n, k, metric, grid, result.coverage[metric], args.confidence), t, n, k))
            c, p, t, n, k = min(found)
            where = f"T={t}, n={n}, k={k}, p={p:.6g}"
            print(f"{metric} ({label}): refined around the {args.refine} worst cells: {c:.5f} at {where}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
