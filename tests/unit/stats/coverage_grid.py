"""The full exact coverage grid of the suite-target intervals: every task at one true pass rate p, T <= 10 tasks,
n <= 20 repetitions, every k <= n, all four metrics (Mean@k, pass^k, pass@k, the gap), at 95 %.

Run on demand (about an hour on one core; needs numpy and scipy, which the package itself never imports):

    .venv/bin/python tests/unit/stats/coverage_grid.py [--t 1-10] [--n 1-20] [--steps 2000]

or ``CONSISTENCY_FULL_GRID=1 .venv/bin/pytest tests/unit/stats/test_stats_suite_exact_coverage.py``.

Exact, like suite_coverage.py, but vectorised: the C(n + T, T) histograms of T counts out of n (30 million at
T = 10, n = 20) are generated with numpy in chunks, and for T >= 4 each histogram's intervals are computed from
per-count tables that are the package's own (the unbiased estimates, the worst variances, the lattice steps, the
pooled Clopper-Pearson interval of every total and the dispersion test of every (total, sum of squares)); the
arithmetic that combines them mirrors ``suite._suite_target`` and is checked against the real function on a sample
of histograms of every cell (``--check``). Up to three tasks (the Sidak box) the real function is called for every
histogram.

Coverage at every p of a grid comes from one pass over the histograms: a histogram's interval for a metric that is
monotone in p misses below the truth f(p) exactly for the grid points with f(p) < low, so each histogram adds its
probability given its total passes S (which does not depend on p) to one cell of a table indexed by (S, first grid
point it covers); a cumulative sum along the grid and the Binomial(T n, p) probability of S give the missed mass at
every grid point. The gap p - p^k is concave, so it is monotone on each side of its peak and handled on each side
separately.

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
from fractions import Fraction
from statistics import NormalDist

import numpy as np

from pytest_consistency.stats import suite as suite_module
from pytest_consistency.stats.binomial import clopper_pearson
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


# --- the package's intervals, vectorised (T >= 4, one n and k) ------------------------------------------------------


@dataclass
class Tables:
    """Per-count and per-total tables of one (t, n, k), all taken from the package."""

    estimates: np.ndarray  # (4, n + 1)
    variances: np.ndarray  # (4, n + 1)
    half_steps: np.ndarray  # (4,)
    ceilings: np.ndarray  # (4,)
    pooled: np.ndarray  # (t n + 1, 2)
    image: np.ndarray  # (t n + 1, 3, 2): pass^k, pass@k, gap over the pooled interval


def tables(t: int, n: int, k: int) -> Tables:
    values = suite_module._estimator_values(n, k)
    estimates = np.array([[float(v) for v in metric] for metric in values])
    variances = np.array([suite_module._worst_variances(c, n, k, CONFIDENCE) for c in range(n + 1)], dtype=np.float64).T
    steps = suite_module._lattice_steps(n, k)
    half_steps = np.array([float(Fraction(step) / 2 / t) for step in steps])
    ceilings = np.array([1.0, 1.0, 1.0, suite_module._g_max(k)])
    pooled_list = [clopper_pearson(s, t * n, CONFIDENCE) for s in range(t * n + 1)]
    pooled = np.array([(iv.low, iv.high) for iv in pooled_list])
    image = np.array(
        [[(iv.low, iv.high) for iv in suite_module._pooled_image(pooled_iv, k)] for pooled_iv in pooled_list]
    )
    return Tables(estimates, variances, half_steps, ceilings, pooled, image)


class Alike:
    """rates_look_alike of the package for each (total, sum of squares), computed once on a representative."""

    def __init__(self, t: int, n: int) -> None:
        self.t, self.n = t, n
        self.width = t * n * n + 1
        self.known: dict[int, bool] = {}

    def __call__(self, rows: np.ndarray, totals: np.ndarray, squares: np.ndarray) -> np.ndarray:
        keys = totals.astype(np.int64) * self.width + squares.astype(np.int64)
        unique, first = np.unique(keys, return_index=True)
        for key, index in zip(unique.tolist(), first.tolist(), strict=True):
            if key not in self.known:
                tasks = [TaskCounts(int(c), self.n, 1) for c in rows[index]]
                self.known[key] = suite_module.rates_look_alike(tasks)
        lookup = np.array([self.known[key] for key in unique.tolist()])
        return lookup[np.searchsorted(unique, keys)]


def hull(low: np.ndarray, high: np.ndarray, estimate: np.ndarray, floor: float, ceiling: float) -> np.ndarray:
    low = np.minimum(np.maximum(low, floor), ceiling)
    high = np.maximum(np.minimum(high, ceiling), floor)
    return np.stack([np.minimum(low, estimate), np.maximum(high, estimate)], axis=-1)


def vector_intervals(
    rows: np.ndarray, counts: np.ndarray, totals: np.ndarray, alike: np.ndarray, t: int, k: int, tab: Tables
) -> np.ndarray:
    """(rows, 4, 2): each histogram's (low, high) of Mean@k, pass^k, pass@k and the gap (pp), as suite_intervals."""
    z = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2.0)
    out = np.empty((len(rows), 4, 2))
    estimates = counts @ tab.estimates.T / t
    spreads = z * np.sqrt(counts @ tab.variances.T) / t + tab.half_steps
    for metric in range(4):
        est = estimates[:, metric]
        out[:, metric] = hull(est - spreads[:, metric], est + spreads[:, metric], est, 0.0, tab.ceilings[metric])
    pooled = tab.pooled[totals]
    out[:, 0] = hull(pooled[:, 0], pooled[:, 1], estimates[:, 0], 0.0, 1.0)
    if k == 1:
        out[:, 1] = out[:, 0]
        out[:, 2] = out[:, 0]
    else:
        image = tab.image[totals]
        for metric in (1, 2, 3):
            joined = alike
            out[joined, metric, 0] = np.minimum(out[joined, metric, 0], image[joined, metric - 1, 0])
            out[joined, metric, 1] = np.maximum(out[joined, metric, 1], image[joined, metric - 1, 1])
    out[:, 3] *= 100.0
    return out


def real_intervals(rows: np.ndarray, n: int, k: int) -> np.ndarray:
    out = np.empty((len(rows), 4, 2))
    for i, row in enumerate(rows.tolist()):
        result = suite_intervals([TaskCounts(c, n, k) for c in row], CONFIDENCE)
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
    total: np.ndarray  # total probability at each grid point (1 up to rounding)


def cell_coverage(
    t: int, n: int, grids: dict[int, np.ndarray] | None, grid: np.ndarray, check: int
) -> list[CellResult]:
    """Coverage of every metric at every grid point for each k = 1..n (``grids`` may give a k its own grid)."""
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
    tabs = {k: tables(t, n, k) for k in ks} if t > suite_module.FEW_TASKS_FOR_BOX else {}
    alike_of = Alike(t, n)
    mass = np.zeros(size)
    rng = np.random.default_rng(t * 1000 + n)
    for rows in chunks(t, n):
        counts = histogram_counts(rows, n)
        totals = rows.sum(axis=1).astype(np.int64)
        weights = np.exp(log_weights(counts, t, n) + shift[totals])
        mass += np.bincount(totals, weights=weights, minlength=size)
        if t > suite_module.FEW_TASKS_FOR_BOX:
            squares = (rows.astype(np.int64) ** 2).sum(axis=1)
            alike = alike_of(rows, totals, squares)
        for k in ks:
            if t > suite_module.FEW_TASKS_FOR_BOX:
                ends = vector_intervals(rows, counts, totals, alike, t, k, tabs[k])
                if check:
                    sample = rng.choice(len(rows), size=min(check, len(rows)), replace=False)
                    real = real_intervals(rows[sample], n, k)
                    if not np.allclose(real, ends[sample], rtol=0, atol=1e-9):
                        bad = np.argmax(np.abs(real - ends[sample]).reshape(len(sample), -1).max(axis=1))
                        raise AssertionError(
                            f"vectorised intervals differ at t={t} n={n} k={k} counts={rows[sample][bad].tolist()}: "
                            f"{ends[sample][bad].tolist()} != {real[bad].tolist()}"
                        )
            else:
                ends = real_intervals(rows, n, k)
            for metric_index, metric in enumerate(METRICS):
                for seg in accs[(k, metric)]:
                    seg.add(ends[:, metric_index, 0], ends[:, metric_index, 1], totals, weights)
    results = []
    for k in ks:
        g = grid_of[k]
        coverage: dict[str, np.ndarray] = {}
        total = None
        for metric in METRICS:
            below = np.zeros(len(g))
            above = np.zeros(len(g))
            for seg in accs[(k, metric)]:
                b, a = seg.missed(g, t, n, -shift)
                below[seg.order] = b
                above[seg.order] = a
            if total is None:
                total = _total_mass(mass, g, t, n, -shift)
            coverage[metric] = total - below - above
        assert total is not None
        results.append(CellResult(t, n, k, coverage, total))
    return results


def _total_mass(mass: np.ndarray, grid: np.ndarray, t: int, n: int, shift: np.ndarray) -> np.ndarray:
    seg = SegmentAccumulator(np.arange(len(grid)), grid, len(mass))
    m = len(grid)
    table = np.zeros((len(mass), m + 1))
    table[:, m] = mass  # lows = m: every grid point "misses below", so `below` sums the whole mass
    seg.below = table.reshape(-1)
    below, _ = seg.missed(grid, t, n, shift)
    return below


def refine(t: int, n: int, k: int, metric: str, coarse: np.ndarray, cov: np.ndarray) -> tuple[float, float]:
    """The lowest coverage on local grids of 400 points around the ten worst coarse grid points: (coverage, p)."""
    worst = np.argsort(cov)[:10]
    best = (float(cov.min()), float(coarse[int(np.argmin(cov))]))
    local = []
    for i in worst.tolist():
        lo = coarse[max(i - 1, 0)]
        hi = coarse[min(i + 1, len(coarse) - 1)]
        local.append(np.linspace(lo, hi, 400))
    fine = np.unique(np.concatenate(local))
    (result,) = cell_coverage(t, n, {k: fine}, fine, check=0)
    values = result.coverage[metric]
    i = int(np.argmin(values))
    if values[i] < best[0]:
        best = (float(values[i]), float(fine[i]))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--t", default="1-10", help="task counts, e.g. 1-10 or 4,5")
    parser.add_argument("--n", default="1-20", help="repetition counts, e.g. 1-20")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--check", type=int, default=20, help="histograms per chunk and k checked against the package")
    parser.add_argument("--refine", type=int, default=3, help="refine the worst cells of each metric")
    parser.add_argument("--out", help="write every cell's lowest coverage per metric to this JSON file")
    args = parser.parse_args(argv)

    def parse(spec: str) -> list[int]:
        out: list[int] = []
        for part in spec.split(","):
            a, _, b = part.partition("-")
            out.extend(range(int(a), int(b or a) + 1))
        return out

    grid = default_grid(args.steps)
    cells: list[tuple[str, float, int, int, int, float]] = []  # (metric, coverage, t, n, k, p)
    start = time.time()
    for t in parse(args.t):
        for n in parse(args.n):
            cell_start = time.time()
            for result in cell_coverage(t, n, None, grid, args.check):
                assert np.all(np.abs(result.total - 1.0) < 1e-9), (t, n, result.k, result.total.min())
                for metric, cov in result.coverage.items():
                    i = int(np.argmin(cov))
                    cells.append((metric, float(cov[i]), t, n, result.k, float(grid[i])))
            here = [c for c in cells if c[2] == t and c[3] == n]
            parts = []
            for metric in METRICS:
                mine = [c for c in here if c[0] == metric and (c[4] > 1 or metric == "mean")]
                if not mine:
                    parts.append(f"{metric} n/a (k = 1 only)")
                    continue
                low = min(mine, key=lambda c: c[1])
                parts.append(f"{metric} {low[1]:.4f} (k={low[4]}, p={low[5]:.6g})")
            print(f"T={t:2d} n={n:2d} {time.time() - cell_start:7.1f}s  " + "  ".join(parts), flush=True)
    print(f"grid of {len(grid)} values of p done in {time.time() - start:.0f}s", flush=True)
    if args.out:
        with open(args.out, "w") as handle:
            json.dump([dict(zip(("metric", "coverage", "t", "n", "k", "p"), c, strict=True)) for c in cells], handle)
    for metric in METRICS:
        for label, chosen in (("every k", cells), ("k >= 2", [c for c in cells if c[4] > 1])):
            mine = [c for c in chosen if c[0] == metric]
            if not mine or (metric == "mean" and label == "k >= 2"):
                continue
            _, lowest, t, n, k, p = min(mine, key=lambda c: c[1])
            print(f"{metric} ({label}): lowest coverage on the grid {lowest:.5f} at T={t}, n={n}, k={k}, p={p:.6g}")
            if not args.refine:
                continue
            found = []
            for _, _, t, n, k, _ in sorted(mine, key=lambda c: c[1])[: args.refine]:
                (result,) = cell_coverage(t, n, {k: grid}, grid, check=0)
                found.append((*refine(t, n, k, metric, grid, result.coverage[metric]), t, n, k))
            c, p, t, n, k = min(found)
            where = f"T={t}, n={n}, k={k}, p={p:.6g}"
            print(f"{metric} ({label}): refined around the {args.refine} worst cells: {c:.5f} at {where}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
