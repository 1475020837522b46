"""Suite-level intervals for Mean@k, pass^k, pass@k and the consistency gap, each computed jointly over tasks.

It exists because a session gate on the gap needs an honest error bar, and the gap's interval can be neither two
per-metric intervals subtracted (far too wide) nor a per-task posterior averaged (biased: see below). Two targets,
because they answer different questions:

``"suite"`` -- the tasks are fixed; only repetition noise counts (each task i has its own pass rate p_i, its n_i
repetitions are independent Bernoulli trials). The truth is e.g. Gap = mean_i(p_i - p_i^k_i).

* T <= 3 tasks: the image of a simultaneous box of exact Clopper-Pearson intervals, one per task at level
  confidence^(1/T) (Sidak): [min, max] of the metric over the box. Its coverage holds for any pass rates (all p_i
  are in their intervals at once with probability >= confidence); with T = 1 it is the exact per-task interval.
* T >= 4 tasks: the unbiased estimate (metrics.py) +- (z * SE+ + half a lattice step), where SE+ uses for each task
  the largest variance its estimator can have while p_i stays inside the task's Clopper-Pearson interval, and the
  half step is the continuity correction for the lattice the estimate lives on. Clipped to the metric's range. This
  is a normal approximation: its coverage is not guaranteed, and where the estimate's law is far from normal it fell
  short (all tasks at p = 0.08, T = 4, n = 10, k = 5: pass@k covered 0.941; p = 0.928, T = 5, n = k = 10: the gap
  0.947; five tasks at 9/10 gave a gap of [50.8, 90.0] pp while the truth at p = 0.928 is 45.4).
* Every T, when all tasks share n and k: Mean@k is the exact Clopper-Pearson interval of all passes pooled (valid
  for any pass rates, by Hoeffding), and while the counts do not contradict equal pass rates each of pass^k, pass@k
  and the gap is joined with its exact range when every task has the pooled rate (:func:`_with_pooled_bounds`):
  [L^k, U^k], [1 - (1 - L)^k, 1 - (1 - U)^k] and the range of p - p^k over [L, U]. When every task has one pass
  rate that makes the interval exact (coverage >= confidence whatever T, n, k and p, up to the chance that the
  dispersion test wrongly rejects equal rates, at most about 0.001); the per-task bound keeps it wide enough for
  unequal rates. Three of those six ends hold for unequal rates too (Jensen): pass^k's bottom, pass@k's top, the
  gap's top.

Coverage was computed exactly (every histogram of counts with its multinomial probability, no Monte Carlo error)
at one common pass rate over T <= 10, n <= 20, every k <= n and a grid of p dense near 0 and 1
(tests/unit/stats/coverage_grid.py; the result is in docs/metrics.md): no cell is below 0.95. With unequal rates
it is checked by seeded simulation (tests/unit/stats/test_stats_coverage.py). The joined intervals are wider only
where the per-task bound fell short: the mean width of pass@k at T = 4, n = 10, k = 5, p = 0.08 went from 58.8 to
62.2 pp, of the gap at T = 5, n = k = 10, p = 0.928 from 57.0 to 58.9 pp; suites whose rates are far from alike
(the published 168 tasks) keep their intervals.

Why not the suggested per-draw posterior p_i ~ Beta(c_i + 1/2, n_i - c_i + 1/2) with percentiles: its per-task
bias (about (1/2 - p)/(n + 1) for the rate, much more for p^k when k = n) is the same sign for every task, so it adds
up while the standard error shrinks like 1/sqrt(T). In seeded simulations (n = 5, T = 10, even with the usual
boundary fix: upper bound 1 for c = n) it covered the Mean at 0.88 when all p = 0.9, pass^5 at 0.37 and the gap at
0.00 when all p = 0.6; without the fix it never covers an all-pass suite (p = 1). Centring on the unbiased
estimator removes the bias; taking the worst variance within each task's exact interval stops 5/5 tasks from
counting as noise-free; the continuity correction and the exact box for very few tasks handle the discreteness.
The price is conservatism: the mean width is up to 2.2x the central 95 % range of the estimate for Mean@k and 3.1x
for the gap (seeded simulations of 10 and 30 tasks; the README lists them), because five passes in five runs cannot
tell p = 1 from p = 0.87, where the all-pass indicator is noisiest. No resampling is involved, so ``draws`` is
reported as 0.

``"population"`` -- never narrower than the suite interval (task sampling only adds to repetition noise); the tasks
are a sample from a larger population of tasks (E. Miller, "Adding Error Bars to
Evals", arXiv 2411.00640): whole tasks are resampled with replacement (percentile bootstrap of the unbiased
estimators, ``random.Random(seed)``); for pass^k with k = n on every task the all-pass indicators are Bernoulli and
the exact Clopper-Pearson interval on (all-pass tasks) / T is used instead. Below 30 tasks the result carries a
note that the population interval is unreliable: simulated coverage of the 95 % bootstrap interval was 0.915 for
Mean@k and 0.82 for pass@k at 15 tasks, 0.92 and 0.85 at 30, 0.93-0.95 at 100.

Rates are fractions in [0, 1]; gaps are in percentage points. Standard library only; deterministic.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from operator import itemgetter
from statistics import NormalDist

from pytest_consistency.stats.binomial import binomial_pmf, check_confidence, clopper_pearson
from pytest_consistency.stats.choices import TARGETS
from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.metrics import TaskCounts, mean_at_k, pass_at_k, pass_hat_k

FEW_TASKS_FOR_BOX = 3
"""Up to this many tasks the suite target uses the exact simultaneous box instead of the normal approximation."""

FEW_TASKS_FOR_POPULATION = 30
"""Below this many tasks the population (task-bootstrap) interval is flagged as unreliable."""

HOMOGENEITY_LEVEL = 0.001
"""Level of the dispersion test that decides whether the pooled (Jensen) bounds widen pass^k and the gap."""

_VARIANCE_GRID = 64
_REFINE_STEPS = 40

# Index of each metric in the per-task tuples below.
_MEAN, _HAT, _AT, _GAP = 0, 1, 2, 3


@dataclass(frozen=True)
class SuiteIntervals:
    """Intervals for one suite; rates as fractions, ``gap_pp`` in percentage points.

    ``draws`` is the number of resamples actually used (0 when the interval is computed in closed form).
    """

    target: str
    confidence: float
    mean_at_k: Interval
    pass_hat_k: Interval
    pass_at_k: Interval
    gap_pp: Interval
    draws: int
    seed: int
    note: str | None = None


def _check_common(confidence: float, target: str, seed: int, draws: int) -> None:
    check_confidence(confidence)
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int, got {seed!r}")
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise ValueError(f"draws must be an int >= 1, got {draws!r}")


def _check_tasks(tasks: Sequence[TaskCounts]) -> None:
    for task in tasks:
        if not isinstance(task, TaskCounts):
            raise ValueError(f"expected TaskCounts, got {task!r}")


def _g(p: float, k: int) -> float:
    """Per-task gap p - p^k as a function of the true pass rate."""
    return p - p**k


def _g_peak(k: int) -> float:
    """Where p - p^k is largest on [0, 1] (it is concave): k^(-1/(k-1)); 0 for k = 1 (the gap is then 0)."""
    return 0.0 if k == 1 else float(k ** (-1.0 / (k - 1)))


def _g_max(k: int) -> float:
    return _g(_g_peak(k), k)


def _gap_range(p_low: float, p_high: float, k: int) -> tuple[float, float]:
    """min and max of p - p^k over [p_low, p_high] (concave: the minimum is at an end)."""
    peak = min(max(_g_peak(k), p_low), p_high)
    return min(_g(p_low, k), _g(p_high, k)), _g(peak, k)


@lru_cache(maxsize=256)
def _estimator_values(n: int, k: int) -> tuple[tuple[Fraction, ...], ...]:
    """For each metric, the unbiased per-task estimate when j of n repetitions pass, j = 0..n."""
    values = [(mean_at_k(t), pass_hat_k(t), pass_at_k(t)) for t in (TaskCounts(c=j, n=n, k=k) for j in range(n + 1))]
    means = tuple(v[0] for v in values)
    hats = tuple(v[1] for v in values)
    ats = tuple(v[2] for v in values)
    gaps = tuple(m - h for m, h in zip(means, hats, strict=True))
    return means, hats, ats, gaps


def _fraction_gcd(a: Fraction, b: Fraction) -> Fraction:
    return Fraction(math.gcd(a.numerator * b.denominator, b.numerator * a.denominator), a.denominator * b.denominator)


@lru_cache(maxsize=256)
def _lattice_steps(n: int, k: int) -> tuple[Fraction, ...]:
    """For each metric, the gcd of the differences between the values one task's estimate can take."""
    steps = []
    for values in _estimator_values(n, k):
        step = Fraction(0)
        for v in values:
            step = _fraction_gcd(step, abs(v - values[0]))
        steps.append(step)
    return tuple(steps)


def _variance(pmf: list[float], values: tuple[float, ...]) -> float:
    first = math.fsum(w * v for w, v in zip(pmf, values, strict=True))
    second = math.fsum(w * v * v for w, v in zip(pmf, values, strict=True))
    return max(0.0, second - first * first)


def _maximise(func: Callable[[float], float], lo: float, hi: float) -> float:
    """max of ``func`` on [lo, hi]: a grid with both ends, then golden-section search around the best point."""
    if hi <= lo:
        return func(lo)
    grid = [lo + (hi - lo) * i / _VARIANCE_GRID for i in range(_VARIANCE_GRID + 1)]
    values = [func(p) for p in grid]
    best_index = max(range(len(values)), key=values.__getitem__)
    a = grid[max(best_index - 1, 0)]
    b = grid[min(best_index + 1, _VARIANCE_GRID)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = b - ratio * (b - a), a + ratio * (b - a)
    f1, f2 = func(x1), func(x2)
    for _ in range(_REFINE_STEPS):
        if f1 >= f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - ratio * (b - a)
            f1 = func(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + ratio * (b - a)
            f2 = func(x2)
    return max(values[best_index], f1, f2)


@lru_cache(maxsize=16384)
def _worst_variance(c: int, n: int, k: int, confidence: float, metric: int) -> float:
    """The largest variance of the task's estimator of ``metric`` while p stays in its Clopper-Pearson interval.

    For Mean@k (c / n, variance p (1 - p) / n) in closed form; for the others by a grid and golden-section search,
    which costs O(n) per evaluation.
    """
    ci = clopper_pearson(c, n, confidence)
    if metric == _MEAN:
        p = min(max(0.5, ci.low), ci.high)
        return p * (1.0 - p) / n
    values = tuple(float(v) for v in _estimator_values(n, k)[metric])

    def variance_at(p: float) -> float:
        return _variance(binomial_pmf(n, p), values)

    return _maximise(variance_at, ci.low, ci.high)


def _worst_variances(c: int, n: int, k: int, confidence: float) -> tuple[float, ...]:
    """For each metric, the largest variance of the task's estimator while p stays in its Clopper-Pearson interval."""
    return tuple(_worst_variance(c, n, k, confidence, metric) for metric in range(4))


def _box_ranges(task: TaskCounts, level: float) -> tuple[tuple[float, float], ...]:
    """For each metric, the [min, max] of the task's true value while p is inside its Clopper-Pearson interval."""
    ci = clopper_pearson(task.c, task.n, level)
    lo, hi, k = ci.low, ci.high, task.k
    return (
        (lo, hi),
        (lo**k, hi**k),
        (1.0 - (1.0 - lo) ** k, 1.0 - (1.0 - hi) ** k),
        _gap_range(lo, hi, k),
    )


def _point_estimates(tasks: Sequence[TaskCounts]) -> tuple[float, ...]:
    """The four metrics' unbiased suite estimates, exact (fractions) until the last step. Tasks with the same
    ``(n, k, c)`` share their terms, so a suite adds a handful of fractions, not four per task (each addition of
    two fractions reduces by a gcd: this was most of a large session's suite intervals)."""
    totals = [Fraction(0)] * 4
    for (n, k, c), count in Counter((task.n, task.k, task.c) for task in tasks).items():
        for metric, values in enumerate(_estimator_values(n, k)):
            totals[metric] += values[c] * count
    return tuple(float(total / len(tasks)) for total in totals)


def _half_step(tasks: Sequence[TaskCounts], metric: int) -> float:
    step = Fraction(0)
    for n, k in {(t.n, t.k) for t in tasks}:
        step = _fraction_gcd(step, _lattice_steps(n, k)[metric])
    return float(step / 2 / len(tasks))


def _upper_limits(tasks: Sequence[TaskCounts]) -> tuple[float, ...]:
    return 1.0, 1.0, 1.0, math.fsum(_g_max(t.k) for t in tasks) / len(tasks)


def _hull(low: float, high: float, estimate: float, floor: float, ceiling: float) -> Interval:
    """[low, high] moved into [floor, ceiling] (the values the truth can take), then widened to hold the estimate.

    The unbiased estimate can lie outside the attainable range (a 4/5 task estimates a gap of 0.8 at k = 5, while
    p - p^5 never exceeds 0.535), so the widening can reach past ``ceiling``.
    """
    low = min(max(low, floor), ceiling)
    high = max(min(high, ceiling), floor)
    return Interval(min(low, estimate), max(high, estimate))


def pooled_interval(tasks: Sequence[TaskCounts], confidence: float) -> Interval | None:
    """Clopper–Pearson on all passes pooled (sum c out of sum n) when every task has the same n and k, else None.

    For fixed tasks the pooled count is a sum of independent binomials with mean T n p-bar; by Hoeffding's theorem
    its tails beyond the mean are no heavier than those of Binomial(T n, p-bar), so the interval covers the mean pass
    rate p-bar at least at ``confidence``.
    """
    if len({(task.n, task.k) for task in tasks}) != 1:
        return None
    return clopper_pearson(sum(task.c for task in tasks), sum(task.n for task in tasks), confidence)


def rates_look_alike(tasks: Sequence[TaskCounts], level: float = HOMOGENEITY_LEVEL) -> bool:
    """False when the binomial dispersion test rejects "every task has the same pass rate" at ``level``.

    The statistic is sum (c_i - n p)^2 / (n p (1 - p)) with p the pooled rate, against chi-squared with T - 1
    degrees of freedom (Wilson–Hilferty quantile). Only used to decide whether a widening is worth making, so an
    approximate quantile is enough: the widening never narrows an interval.
    """
    t, n = len(tasks), tasks[0].n
    rate = Fraction(sum(task.c for task in tasks), t * n)
    if t < 2 or rate in (0, 1):
        return True
    statistic = float(sum(((task.c - n * rate) ** 2 for task in tasks), Fraction(0)) / (n * rate * (1 - rate)))
    df = t - 1
    z = NormalDist().inv_cdf(1.0 - level)
    quantile = df * (1.0 - 2.0 / (9.0 * df) + z * math.sqrt(2.0 / (9.0 * df))) ** 3
    return statistic <= quantile


def _pooled_image(pooled: Interval, k: int) -> tuple[Interval, Interval, Interval]:
    """pass^k, pass@k and the gap of one pass rate p, over p in the pooled interval: their exact range."""
    low, high = pooled.low, pooled.high
    gap_low, gap_high = _gap_range(low, high, k)
    return (
        Interval(low**k, high**k),
        Interval(1.0 - (1.0 - low) ** k, 1.0 - (1.0 - high) ** k),
        Interval(gap_low, gap_high),
    )


def _with_pooled_bounds(out: list[Interval], tasks: Sequence[TaskCounts], confidence: float) -> list[Interval]:
    """Mean@k from the pooled interval; pass^k, pass@k and the gap joined with their image of it.

    With one n and k for all tasks, the pooled Clopper-Pearson interval holds the mean pass rate p-bar at
    ``confidence`` (Hoeffding). When every task has the same pass rate p = p-bar, the suite's pass^k, pass@k and gap
    are p^k, 1 - (1 - p)^k and p - p^k, so their range over the pooled interval (:func:`_pooled_image`) covers them
    at ``confidence`` too: exactly, whatever T, n and k. Each interval becomes the hull of the per-task bound (the
    Sidak box or the normal bound, made for unequal pass rates) and that image, while the counts do not contradict
    equal pass rates (:func:`rates_look_alike`); the hull only widens, so its coverage is never below either part's.

    Three of the six ends also hold for unequal rates (Jensen: mean(p_i^k) >= p-bar^k, mean(1 - (1 - p_i)^k) <=
    1 - (1 - p-bar)^k and mean(p_i - p_i^k) <= p-bar - p-bar^k): pass^k's bottom, pass@k's top and the gap's top.
    The other three hold only near equal rates, where the dispersion test keeps them. Without the image the normal
    bound under-covered where the estimate's law is far from normal: all tasks at p = 0.08, T = 4, n = 10, k = 5
    (pass@k covered 0.941), or at p = 0.928, T = 5, n = k = 10 (the gap 0.947); four 10/10 tasks gave a gap of
    [0, 43.9] pp while the true gap at p = 0.93 is 44.6 pp. For the published 168 tasks the image would move the
    gap's top from 30 to 52 pp, but their rates are far from alike, so it is not used there.
    """
    pooled = pooled_interval(tasks, confidence)
    if pooled is None:
        return out
    k = tasks[0].k
    mean, hat, at, gap = out
    estimates = _point_estimates(tasks)
    mean = _hull(pooled.low, pooled.high, estimates[_MEAN], 0.0, 1.0)
    if k == 1:  # pass^1 and pass@1 are the pass rate itself
        return [mean, mean, mean, gap]
    if rates_look_alike(tasks):
        hat, at, gap = (
            Interval(min(a.low, b.low), max(a.high, b.high))
            for a, b in zip((hat, at, gap), _pooled_image(pooled, k), strict=True)
        )
    return [mean, hat, at, gap]


def _per_task_interval(tasks: Sequence[TaskCounts], confidence: float, metric: int) -> Interval:
    """One metric's interval from the tasks' own exact intervals: the Sidak box (T <= 3) or the normal bound."""
    t = len(tasks)
    estimate = _point_estimates(tasks)[metric]
    ceiling = _upper_limits(tasks)[metric]
    if t <= FEW_TASKS_FOR_BOX:
        level = confidence ** (1.0 / t)
        ranges = [_box_ranges(task, level)[metric] for task in tasks]
        low = math.fsum(r[0] for r in ranges) / t
        high = math.fsum(r[1] for r in ranges) / t
        return _hull(low, high, estimate, 0.0, ceiling)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    variance = math.fsum(_worst_variance(task.c, task.n, task.k, confidence, metric) for task in tasks)
    spread = z * math.sqrt(variance) / t + _half_step(tasks, metric)
    return _hull(estimate - spread, estimate + spread, estimate, 0.0, ceiling)


def _suite_target(tasks: Sequence[TaskCounts], confidence: float) -> list[Interval]:
    return _with_pooled_bounds([_per_task_interval(tasks, confidence, m) for m in range(4)], tasks, confidence)


def mean_interval(tasks: Sequence[TaskCounts], confidence: float = 0.95) -> Interval:
    """The suite-target interval of the task-averaged pass rate alone: ``suite_intervals(...).mean_at_k``, without
    the work the other metrics take (their worst variances cost O(n) per evaluation).

    The pooled Clopper-Pearson interval when every task has the same n and k, else the Sidak box (T <= 3) or the
    worst-variance normal bound.
    """
    check_confidence(confidence)
    _check_tasks(tasks)
    if not tasks:
        raise ValueError("mean_interval needs at least one task")
    pooled = pooled_interval(tasks, confidence)
    if pooled is not None:
        return _hull(pooled.low, pooled.high, _point_estimates(tasks)[_MEAN], 0.0, 1.0)
    return _per_task_interval(tasks, confidence, _MEAN)


def _percentile_interval(values: list[float], confidence: float) -> tuple[float, float]:
    """Equal-tailed percentile interval, rounding outwards to whole order statistics."""
    ordered = sorted(values)
    last = len(ordered) - 1
    tail = (1.0 - confidence) / 2.0
    low_index = max(0, math.floor(last * tail + 1e-9))
    high_index = min(last, math.ceil(last * (1.0 - tail) - 1e-9))
    return ordered[low_index], ordered[high_index]


def _resampled_means(columns: Sequence[Sequence[float]], seed: int, draws: int) -> list[list[float]]:
    """Bootstrap whole tasks: per draw, the mean of each column over T task indices drawn with replacement."""
    t = len(columns[0])
    rng = random.Random(seed)
    indices = range(t)
    out: list[list[float]] = [[] for _ in columns]
    for _ in range(draws):
        picked = rng.choices(indices, k=t)
        if t == 1:
            for column, acc in zip(columns, out, strict=True):
                acc.append(column[picked[0]])
            continue
        getter = itemgetter(*picked)
        for column, acc in zip(columns, out, strict=True):
            acc.append(sum(getter(column)) / t)
    return out


def _population_target(
    tasks: Sequence[TaskCounts], confidence: float, seed: int, draws: int
) -> tuple[list[Interval], str | None]:
    t = len(tasks)
    estimates = _point_estimates(tasks)
    columns = [[float(_estimator_values(task.n, task.k)[metric][task.c]) for task in tasks] for metric in range(4)]
    boot = _resampled_means(columns, seed, draws)
    out = []
    for metric in range(4):
        low, high = _percentile_interval(boot[metric], confidence)
        out.append(_hull(low, high, estimates[metric], 0.0, 1.0))
    if all(task.k == task.n for task in tasks):
        all_pass = sum(1 for task in tasks if task.c == task.n)
        out[_HAT] = clopper_pearson(all_pass, t, confidence)
    note = None
    if t < FEW_TASKS_FOR_POPULATION:
        note = (
            f"only {t} task(s): the population (task-bootstrap) interval is unreliable below "
            f"{FEW_TASKS_FOR_POPULATION} tasks; prefer --consistency-interval-target=suite"
        )
    return out, note


def suite_intervals(
    counts: Sequence[TaskCounts],
    confidence: float = 0.95,
    target: str = "suite",
    seed: int = 0,
    draws: int = 2000,
) -> SuiteIntervals | None:
    """Intervals for the suite's Mean@k, pass^k, pass@k and gap (in pp); ``None`` when there are no tasks.

    See the module docstring for what each ``target`` means and how its intervals are built. Each interval holds
    the unbiased point estimate of metrics.py.
    """
    _check_common(confidence, target, seed, draws)
    _check_tasks(counts)
    if not counts:
        return None
    if target == "suite":
        intervals, note, used = _suite_target(counts, confidence), None, 0
    else:
        intervals, note = _population_target(counts, confidence, seed, draws)
        # Never narrower than the suite interval: a bootstrap of thirty all-pass tasks is the point [1, 1], which
        # covers nothing when every p is 0.995; task sampling only adds to the repetition noise.
        suite = _suite_target(counts, confidence)
        intervals = [Interval(min(a.low, b.low), max(a.high, b.high)) for a, b in zip(intervals, suite, strict=True)]
        used = draws
    mean, hat, at, gap = intervals
    return SuiteIntervals(
        target=target,
        confidence=confidence,
        mean_at_k=mean,
        pass_hat_k=hat,
        pass_at_k=at,
        gap_pp=Interval(gap.low * 100.0, gap.high * 100.0),
        draws=used,
        seed=seed,
        note=note,
    )


def paired_gap_difference(
    pairs: Sequence[tuple[TaskCounts, TaskCounts]],
    confidence: float = 0.95,
    target: str = "suite",
    seed: int = 0,
    draws: int = 2000,
) -> Interval:
    """Interval for gap(current) - gap(baseline) in percentage points, over the tasks present in both runs.

    Each pair is ``(baseline, current)`` for one task. Positive means the current run is less consistent.
    ``"suite"``: the two runs are independent samples of the same fixed tasks; the difference of unbiased gap
    estimates +- (z * SE+ + half a lattice step) with each task's worst-case variance inside its exact interval in
    each run (T >= 4), or the image of a Sidak box of exact intervals over all 2T pass rates (T <= 3).
    ``"population"``: paired bootstrap of task indices (E. Miller's paired difference: a task's gap in the two runs
    is correlated, resampling pairs keeps that).
    """
    _check_common(confidence, target, seed, draws)
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise ValueError(f"expected (baseline, current) TaskCounts pairs, got {pair!r}")
        _check_tasks(pair)
    if not pairs:
        raise ValueError("paired_gap_difference needs at least one task present in both runs")
    t = len(pairs)
    baseline = [pair[0] for pair in pairs]
    current = [pair[1] for pair in pairs]
    estimate = _point_estimates(current)[_GAP] - _point_estimates(baseline)[_GAP]
    floor = -_upper_limits(baseline)[_GAP]
    ceiling = _upper_limits(current)[_GAP]
    if target == "population":
        differences = [
            float(_estimator_values(cur.n, cur.k)[_GAP][cur.c] - _estimator_values(base.n, base.k)[_GAP][base.c])
            for base, cur in pairs
        ]
        (boot,) = _resampled_means([differences], seed, draws)
        low, high = _percentile_interval(boot, confidence)
    elif t <= FEW_TASKS_FOR_BOX:
        level = confidence ** (1.0 / (2 * t))
        base_ranges = [_box_ranges(task, level)[_GAP] for task in baseline]
        cur_ranges = [_box_ranges(task, level)[_GAP] for task in current]
        low = (math.fsum(r[0] for r in cur_ranges) - math.fsum(r[1] for r in base_ranges)) / t
        high = (math.fsum(r[1] for r in cur_ranges) - math.fsum(r[0] for r in base_ranges)) / t
    else:
        z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
        variance = math.fsum(
            _worst_variances(task.c, task.n, task.k, confidence)[_GAP] for task in (*baseline, *current)
        )
        step = Fraction(0)
        for n, k in {(task.n, task.k) for task in (*baseline, *current)}:
            step = _fraction_gcd(step, _lattice_steps(n, k)[_GAP])
        spread = z * math.sqrt(variance) / t + float(step / 2 / t)
        low, high = estimate - spread, estimate + spread
    if target == "suite":
        low, high = _paired_pooled_bounds(baseline, current, confidence, low, high)
    result = _hull(low, high, estimate, floor, ceiling)
    return Interval(result.low * 100.0, result.high * 100.0)


def _order(task: TaskCounts) -> tuple[int, int, int]:
    return task.c, task.n, task.k


@lru_cache(maxsize=1024)
def _gap_low(tasks: tuple[TaskCounts, ...], confidence: float) -> float:
    """The suite-target gap interval's lower end (a fraction), for tasks in a canonical order."""
    return _suite_target(tasks, confidence)[_GAP].low


def _paired_pooled_bounds(
    baseline: Sequence[TaskCounts], current: Sequence[TaskCounts], confidence: float, low: float, high: float
) -> tuple[float, float]:
    """The gap change's ends widened by the pooled (Jensen) bound of one run and the suite bound of the other.

    gap(current) - gap(baseline) <= max of p - p^k over the current run's pooled interval - the baseline's lower gap
    bound, each at level sqrt(confidence) so both hold at once (and symmetrically for the lower end). Applied to a run
    whose rates look alike (see :func:`_with_pooled_bounds`): an all-pass current run of tasks at p = 0.93, n = 10
    otherwise leaves a true change of 0 above the interval (exact coverage 0.937 for four tasks).
    """
    level = math.sqrt(confidence)
    for run, other, sign in ((current, baseline, 1), (baseline, current, -1)):
        pooled = pooled_interval(run, level)
        if pooled is None or not rates_look_alike(run):
            continue
        bound = _gap_range(pooled.low, pooled.high, run[0].k)[1] - _gap_low(tuple(sorted(other, key=_order)), level)
        if sign > 0:
            high = max(high, bound)
        else:
            low = min(low, -bound)
    return low, high
