"""Suite-level intervals for Mean@k, pass^k, pass@k and the consistency gap, each computed jointly over tasks.

It exists because a session gate on the gap needs an honest error bar, and the gap's interval can be neither two
per-metric intervals subtracted (far too wide) nor a per-task posterior averaged (biased: see below). Two targets,
because they answer different questions:

``"suite"`` -- the tasks are fixed; only repetition noise counts (each task i has its own pass rate p_i, its n_i
repetitions are independent Bernoulli trials). The truth is e.g. Gap = mean_i(p_i - p_i^k_i). The gates decide on one
end of an interval (a gate at level a asks for ``confidence = 1 - 2a``), so each end is a one-sided bound of its own:
for **every** mix of pass rates, P(truth < low) <= (1 - confidence) / 2 and P(truth > high) <= (1 - confidence) / 2.
Each end below has an argument for that; none rests on a normal approximation.

* **Mean@k** (one n for every task): the exact Clopper-Pearson bounds of all passes pooled (sum c of T n). The
  pooled count is a sum of independent Bernoulli trials with unequal rates; by Hoeffding's theorem (1956, Thm 4) its
  tails beyond mean + 1 are no heavier than the binomial's with the mean rate, which covers every count but the
  first: one pass in T n trials. There the worst case puts the whole mean on one task, so that bound is
  (1 - (1 - tail)^(1/n)) / T instead of 1 - (1 - tail)^(1/(T n)) (and the mirror for the last count). With mixed n:
  the tightest of the bound on the sum below, in blocks of one repetition, and the box.
* **Each end of pass^k, pass@k and the gap is the tightest of a few bounds**, each valid for every mix of rates at
  its share of the tail; the shares add up to the tail (Bonferroni), so the end is valid too (:data:`SHARES`):

  - ``"sum"``, the bound on the suite's sum. With k = n, pass^k's estimate counts the tasks that passed every time
    and pass@k's the tasks that passed at least once: independent Bernoulli trials, so the exact Clopper-Pearson
    bound of that count (T trials), by Hoeffding's theorem as above (at the first and last counts: tail / T).
    Otherwise a task's unbiased estimate is the average, over the orders of its repetitions, of the estimate on
    m = n // k disjoint blocks of k (all passed; one passed; the block's share of passes minus all passed, within
    [0, (k - 1) / k]). Conditional Jensen, then Hoeffding (a variable in [0, b] with mean mu is below the two-point
    {0, b} in convex order, and a sum of independent Bernoulli trials below the binomial with their mean rate) give:
    the suite's estimate is below b J / (T m) in convex order, J ~ Binomial(T m, truth / b). Then, for every s < t,
    P(estimate >= t) <= E(b J / (T m) - s)+ / (t - s) (the stop-loss bound: the sharpest that convex order alone
    allows); the end is the truth where that bound, minimised over s, reaches the tail (and the mirror).
  - ``"box"``: each task's exact Clopper-Pearson bound at a Sidak-adjusted level (all of them hold at once) and the
    figure's range over that box. Strong with few tasks and where one task's count says much (pass@k of tasks that
    pass 9/10).
  - ``"pooled"`` (one n and k): the pooled bounds L, U of the mean rate, then Jensen and order: pass^k >= L^k
    (mean p^k >= p-bar^k), pass@k <= 1 - (1 - U)^k, the gap <= max of p - p^k over [L, U] (mean of a concave
    function), pass^k <= U and pass@k >= L (pass^k <= Mean@k <= pass@k). Tight when the rates are alike.

  With one task every end is the box's: the task's exact interval.

Every interval is then clipped to the values the truth can take ([0, 1]; the gap [0, mean of max p - p^k]) and
widened to hold the unbiased estimate (metrics.py), which can lie outside that range.

Why the normal bound of earlier versions (the estimate +- z times the largest standard error each task's interval
allows) was replaced: when one or a few tasks carry the estimate's spread, its law is far from normal, however many
tasks there are. One task at p = 0.8 among three at 0.0001 (n = 10, k = 5) left pass^5's truth below the lower end
10.7 % of the time at 95 % (computed exactly; 16.8 % at 90 %), the gap 3.5 % below (n = k = 5); the same happens
with 19 tasks beside the one. The shares are fixed in advance and depend only on T and on whether n and k are
common, so no end is chosen by a look at the counts. Checked exactly over every outcome of suites with T1 tasks at
one rate and T2 at another (tests/unit/stats/two_rate_coverage.py; the result is in docs/metrics.md). The price:
the gap's interval is up to 1.4x wider where tasks sit at middling rates and n = 10 (the two-point {0, b} is far
more spread than such a task's estimate, and only the box, weak for many tasks, sees the counts one by one); pass^k's
is narrower on most suites.

Why not the suggested per-draw posterior p_i ~ Beta(c_i + 1/2, n_i - c_i + 1/2) with percentiles: its per-task
bias (about (1/2 - p)/(n + 1) for the rate, much more for p^k when k = n) is the same sign for every task, so it adds
up while the standard error shrinks like 1/sqrt(T). In seeded simulations (n = 5, T = 10, even with the usual
boundary fix: upper bound 1 for c = n) it covered the Mean at 0.88 when all p = 0.9, pass^5 at 0.37 and the gap at
0.00 when all p = 0.6; without the fix it never covers an all-pass suite (p = 1). No resampling is involved, so
``draws`` is reported as 0.


``"population"`` -- never narrower than the suite interval (task sampling only adds to repetition noise); the tasks
are a sample from a larger population of tasks (E. Miller, "Adding Error Bars to Evals", arXiv 2411.00640): whole
tasks are resampled with replacement (percentile bootstrap of the unbiased estimators, ``random.Random(seed)``);
for pass^k with k = n on every task the all-pass indicators are Bernoulli and the exact Clopper-Pearson interval on
(all-pass tasks) / T is used instead. Below 30 tasks the result carries a note that the population interval is
unreliable: simulated coverage of the 95 % bootstrap interval was 0.915 for Mean@k and 0.82 for pass@k at 15 tasks,
0.92 and 0.85 at 30, 0.93-0.95 at 100.

Rates are fractions in [0, 1]; gaps are in percentage points. Standard library only; deterministic.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from operator import itemgetter
from statistics import NormalDist

from pytest_consistency.stats.binomial import check_confidence, clopper_pearson, one_sided_lower, one_sided_upper
from pytest_consistency.stats.choices import TARGETS
from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.metrics import TaskCounts, mean_at_k, pass_at_k, pass_hat_k

FEW_TASKS_FOR_POPULATION = 30
"""Below this many tasks the population (task-bootstrap) interval is flagged as unreliable."""

# Index of each metric in the per-task tuples below, and of each end.
_MEAN, _HAT, _AT, _GAP = 0, 1, 2, 3
_LOW, _HIGH = 0, 1

SHARES: dict[tuple[int, int], tuple[tuple[str, float], ...]] = {
    (_HAT, _LOW): (("sum", 0.8), ("pooled", 0.2)),
    (_HAT, _HIGH): (("sum", 0.8), ("pooled", 0.2)),
    (_AT, _HIGH): (("sum", 0.8), ("pooled", 0.2)),
    (_AT, _LOW): (("sum", 0.8), ("pooled", 0.2)),
    (_GAP, _LOW): (("sum", 1.0),),
    (_GAP, _HIGH): (("sum", 0.8), ("pooled", 0.2)),
}
"""For each (metric, end), the bounds it is the tightest of besides the box, and their shares of the tail the box
leaves. The bound on the suite's sum gets most: it is the one that narrows like 1/sqrt(T). The pooled bounds win by a
wide margin where they win (alike rates), so a small share costs them little. pass@k mirrors pass^k (it is
1 - pass^k of the failures). Without one n and k the pooled share goes to the sum."""

BOX_SHARES: dict[tuple[int, int], float] = {(_HAT, _HIGH): 0.2, (_AT, _LOW): 0.2, (_GAP, _LOW): 0.0, (_GAP, _HIGH): 0.0}
"""The ends the Sidak box takes part in, and the least share of the tail it takes there; it takes at least 1/T (with
one task, all of it: the task's exact interval). The box is strong for few tasks and worthless for many on average
(its per-task level moves by a logarithm, the others' by a normal quantile), except where one task's count says much:
pass@k's bottom when tasks pass 9/10 (pass^k's top when they fail 9/10)."""


def _shares(metric: int, side: int, t: int, one_n_k: bool) -> list[tuple[str, float]]:
    """The bounds of one end with their shares of the tail (adding up to 1); see :data:`SHARES`."""
    if t == 1:
        return [("box", 1.0)]
    box = max(1.0 / t, BOX_SHARES[(metric, side)]) if (metric, side) in BOX_SHARES else 0.0
    out = [("box", box)] if box else []
    table = SHARES[(metric, side)]
    pooled = sum(share for name, share in table if name == "pooled")
    for name, share in table:
        if name == "sum":
            out.append((name, (1.0 - box) * (share if one_n_k else share + pooled)))
        elif one_n_k:
            out.append((name, (1.0 - box) * share))
    return out


BENTKUS_DZINDZALIETA = 1.0 / (4.0 * NormalDist().cdf(-math.sqrt(2.0)))
"""c in P(sum a_i e_i >= x ||a||) <= c P(N(0, 1) >= x) for Rademacher e_i (Bentkus and Dzindzalieta, Bernoulli 21,
2015): 3.1787, the smallest constant that holds for every x and every weights."""

_BISECTIONS = 48
_WINDOW_SDS = 14.0


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


def _truth(metric: int, p: float, k: int) -> float:
    """One task's true figure at pass rate p (monotone metrics only: Mean, pass^k, pass@k)."""
    if metric == _MEAN:
        return p
    if metric == _HAT:
        return p**k
    return 1.0 - (1.0 - p) ** k


@lru_cache(maxsize=256)
def _estimator_values(n: int, k: int) -> tuple[tuple[Fraction, ...], ...]:
    """For each metric, the unbiased per-task estimate when j of n repetitions pass, j = 0..n."""
    values = [(mean_at_k(t), pass_hat_k(t), pass_at_k(t)) for t in (TaskCounts(c=j, n=n, k=k) for j in range(n + 1))]
    means = tuple(v[0] for v in values)
    hats = tuple(v[1] for v in values)
    ats = tuple(v[2] for v in values)
    gaps = tuple(m - h for m, h in zip(means, hats, strict=True))
    return means, hats, ats, gaps


def _point_estimates(tasks: Sequence[TaskCounts]) -> tuple[float, ...]:
    """The four metrics' unbiased suite estimates, exact (fractions) until the last step. Tasks with the same
    ``(n, k, c)`` share their terms, so a suite adds a handful of fractions, not four per task (each addition of
    two fractions reduces by a gcd: this was most of a large session's suite intervals)."""
    totals = [Fraction(0)] * 4
    for (n, k, c), count in Counter((task.n, task.k, task.c) for task in tasks).items():
        for metric, values in enumerate(_estimator_values(n, k)):
            totals[metric] += values[c] * count
    return tuple(float(total / len(tasks)) for total in totals)


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


# --- counts of independent Bernoulli trials with unequal rates (Hoeffding) ---------------------------------------


@lru_cache(maxsize=8192)
def _count_lower(successes: int, tasks: int, per_task: int, tail: float) -> float:
    """One-sided lower bound, missing with probability <= ``tail`` whatever the rates, for the mean success rate of
    ``tasks`` tasks, each adding ``per_task`` independent trials at its own rate, from the total ``successes``.

    Clopper-Pearson on all ``tasks * per_task`` trials: by Hoeffding's theorem the count's tail at s is no heavier
    than the binomial's at the mean rate once s >= mean + 1, which holds wherever that bound is used (the binomial
    tail at s = mean + 1 exceeds 1/4 > tail) except at s = 1. There, P(count >= 1) = 1 - prod (1 - p_i)^per_task is
    largest with the whole mean on one task, 1 - (1 - T p)^per_task, so the bound is (1 - (1 - tail)^(1/per_task)) / T.
    """
    if successes == 0:
        return 0.0
    bound = one_sided_lower(successes, tasks * per_task, 1.0 - tail)
    if successes == 1:
        bound = min(bound, -math.expm1(math.log1p(-tail) / per_task) / tasks)
    return bound


def _count_upper(successes: int, tasks: int, per_task: int, tail: float) -> float:
    """The mirror of :func:`_count_lower`: the failures are such a count too."""
    return 1.0 - _count_lower(tasks * per_task - successes, tasks, per_task, tail)


# --- the bound on a suite's sum by convex order (Hoeffding) and the stop-loss bound ------------------------------


@lru_cache(maxsize=64)
def _log_factorials(n: int) -> tuple[float, ...]:
    return tuple(math.lgamma(j + 1) for j in range(n + 1))


def _binomial_window(trials: int, q: float) -> tuple[int, list[float]]:
    """(first, [P(J = first), ..., P(J = last)]) for J ~ Binomial(trials, q) over the counts within
    ``_WINDOW_SDS`` standard deviations of the mean (what lies outside weighs below 1e-40)."""
    if q <= 0.0:
        return 0, [1.0]
    if q >= 1.0:
        return trials, [1.0]
    mean = trials * q
    spread = _WINDOW_SDS * math.sqrt(trials * q * (1.0 - q)) + 8.0
    first = max(0, math.floor(mean - spread))
    last = min(trials, math.ceil(mean + spread))
    log_fact = _log_factorials(trials)
    log_q, log_r = math.log(q), math.log1p(-q)
    top = log_fact[trials]
    return first, [
        math.exp(top - log_fact[j] - log_fact[trials - j] + j * log_q + (trials - j) * log_r)
        for j in range(first, last + 1)
    ]


def _stop_loss_tail(trials: int, q: float, threshold: float) -> float:
    """The largest P(S >= threshold) over every S below J ~ Binomial(trials, q) in convex order:
    min over s < threshold of E(J - s)+ / (threshold - s), capped at 1. The ratio is monotone between integers, and
    below the window it falls as s grows, so s runs over the integers from the window's first count - 1."""
    mean = trials * q
    if threshold <= mean:
        return 1.0
    first, pmf = _binomial_window(trials, q)
    last = first + len(pmf) - 1
    if threshold > last + 1:
        return 0.0
    survival = [0.0] * (len(pmf) + 1)  # survival[i] = P(J >= first + i)
    for i in range(len(pmf) - 1, -1, -1):
        survival[i] = survival[i + 1] + pmf[i]
    s = max(0, first - 1)
    loss = math.fsum(survival[s + 1 - first :])  # E(J - s)+ = sum over j > s of P(J >= j)
    best = 1.0
    while s < threshold and s <= last:
        best = min(best, loss / (threshold - s))
        s += 1
        loss = max(loss - survival[s - first], 0.0)
    return best


@lru_cache(maxsize=4096)
def _sum_lower(estimate: float, trials: int, width: float, tail: float) -> float:
    """Lower bound for the truth from a suite estimate below ``width`` J / trials in convex order, J ~
    Binomial(trials, truth / width): the smallest truth whose stop-loss bound at the estimate exceeds ``tail``
    (bisection; the last value found to be rejected, so the end errs outwards)."""
    if estimate <= 0.0:
        return 0.0
    threshold = estimate * trials / width
    nearest = round(threshold)
    if abs(threshold - nearest) <= 1e-9 * max(1.0, threshold):
        threshold = float(nearest)  # the estimate sits on J's lattice; rounding must not lift it off (outwards)
    lo, hi = 0.0, min(estimate / width, 1.0)
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if _stop_loss_tail(trials, mid, threshold) > tail:
            hi = mid
        else:
            lo = mid
    return lo * width


def _sum_upper(estimate: float, trials: int, width: float, tail: float) -> float:
    """The mirror of :func:`_sum_lower` (width - estimate is below width (trials - J) / trials in convex order)."""
    return width - _sum_lower(width - estimate, trials, width, tail)


def _blocks(tasks: Sequence[TaskCounts], metric: int) -> tuple[int, float]:
    """(trials, width) of the binomial that bounds the suite's estimate of ``metric`` in convex order: m = n // k
    disjoint blocks per task (the fewest of any task), each estimate within [0, width]."""
    if metric == _MEAN:
        return len(tasks) * min(task.n for task in tasks), 1.0
    blocks = min(task.n // task.k for task in tasks)
    width = max((task.k - 1) / task.k for task in tasks) if metric == _GAP else 1.0
    return len(tasks) * blocks, width


def _sum_bound(tasks: Sequence[TaskCounts], metric: int, side: int, tail: float, estimate: float) -> float:
    """The bound on the suite's sum: exact Clopper-Pearson of the all-pass (pass^k) or any-pass (pass@k) tasks when
    every task has k = n, else the stop-loss bound of the binomial that bounds the estimate in convex order."""
    t = len(tasks)
    if metric in (_HAT, _AT) and all(task.k == task.n for task in tasks):
        hits = sum(1 for task in tasks if (task.c == task.n if metric == _HAT else task.c > 0))
        return _count_lower(hits, t, 1, tail) if side == _LOW else _count_upper(hits, t, 1, tail)
    trials, width = _blocks(tasks, metric)
    if width <= 0.0:
        return 0.0
    estimate = min(max(estimate, 0.0), width)
    return _sum_lower(estimate, trials, width, tail) if side == _LOW else _sum_upper(estimate, trials, width, tail)


# --- the Sidak box of the tasks' exact intervals ------------------------------------------------------------------


@lru_cache(maxsize=16384)
def _task_bounds(c: int, n: int, tail: float) -> tuple[float, float]:
    """One task's one-sided exact (Clopper-Pearson) lower and upper bounds, each missing with probability tail."""
    lower = 0.0 if c == 0 else one_sided_lower(c, n, 1.0 - tail)
    upper = 1.0 if c == n else one_sided_upper(c, n, 1.0 - tail)
    return lower, upper


def _box_bound(tasks: Sequence[TaskCounts], metric: int, side: int, tail: float) -> float:
    """The figure's bound over a box of the tasks' exact intervals that all hold at once with probability 1 - tail
    (Sidak, the tasks being independent): one-sided per task for the monotone metrics; for the gap, both of a task's
    bounds, and the end is the least or the most of p - p^k between them. The least misses a task's truth only on
    the side away from the peak of p - p^k (below it, only when p < L; above it, only when p > U), so each bound
    takes the task's whole share; the most can miss on either side (a task just below the peak, its interval above
    it), so each takes half."""
    t = len(tasks)
    per_task = -math.expm1(math.log1p(-tail) / t)  # 1 - (1 - tail)^(1/t)
    total = []
    for (c, n, k), count in Counter((task.c, task.n, task.k) for task in tasks).items():
        if metric == _GAP:
            lower, upper = _task_bounds(c, n, per_task if side == _LOW else per_task / 2.0)
            value = _gap_range(lower, upper, k)[side]
        else:
            value = _truth(metric, _task_bounds(c, n, per_task)[side], k)
        total.append(value * count)
    return math.fsum(total) / t


# --- the pooled bounds of the mean rate, with Jensen and order ------------------------------------------------------


def _pooled_bound(tasks: Sequence[TaskCounts], metric: int, side: int, tail: float) -> float:
    """pass^k >= L^k, pass^k <= U, pass@k >= L, pass@k <= 1 - (1 - U)^k, gap <= max of p - p^k over [L, U], from
    the pooled bounds L, U of the mean rate (one n and k for every task)."""
    t, n, k = len(tasks), tasks[0].n, tasks[0].k
    passes = sum(task.c for task in tasks)
    if metric == _GAP:  # both pooled bounds are used: half the tail each
        lower, upper = _count_lower(passes, t, n, tail / 2.0), _count_upper(passes, t, n, tail / 2.0)
        return _gap_range(lower, upper, k)[1]
    lower = side == _LOW
    rate = _count_lower(passes, t, n, tail) if lower else _count_upper(passes, t, n, tail)
    jensen = (metric == _HAT) == lower  # pass^k's bottom and pass@k's top: Jensen; the other two: order
    return _truth(metric, rate, k) if jensen else rate


def _end(tasks: Sequence[TaskCounts], metric: int, side: int, tail: float, estimate: float) -> float:
    """The tightest of the bounds of :data:`SHARES` for one end, each at its share of the tail."""
    one_n_k = len({(task.n, task.k) for task in tasks}) == 1
    bounds = []
    for name, share in _shares(metric, side, len(tasks), one_n_k):
        if name == "sum":
            bounds.append(_sum_bound(tasks, metric, side, tail * share, estimate))
        elif name == "box":
            bounds.append(_box_bound(tasks, metric, side, tail * share))
        else:
            bounds.append(_pooled_bound(tasks, metric, side, tail * share))
    return max(bounds) if side == _LOW else min(bounds)


def _mean_ends(tasks: Sequence[TaskCounts], tail: float, estimate: float) -> tuple[float, float]:
    """Mean@k's ends: the pooled count's exact bounds (one n), else the bound on the sum and the box (mixed n)."""
    t = len(tasks)
    if len({task.n for task in tasks}) == 1:
        n, passes = tasks[0].n, sum(task.c for task in tasks)
        return _count_lower(passes, t, n, tail), _count_upper(passes, t, n, tail)
    ends = []
    for side in (_LOW, _HIGH):
        bounds = [_sum_bound(tasks, _MEAN, side, tail * 0.8, estimate), _box_bound(tasks, _MEAN, side, tail * 0.2)]
        ends.append(max(bounds) if side == _LOW else min(bounds))
    return ends[0], ends[1]


def pooled_interval(tasks: Sequence[TaskCounts], confidence: float) -> Interval | None:
    """Clopper–Pearson on all passes pooled (sum c out of sum n) when every task has the same n and k, else None.

    For fixed tasks the pooled count is a sum of independent Bernoulli trials with mean T n p-bar; each end misses
    the mean pass rate p-bar with probability at most (1 - confidence) / 2 whatever the rates (Hoeffding's theorem;
    at one pass, or one failure, in all the trials the bound is the one of the whole mean on a single task, see
    :func:`_count_lower`).
    """
    if len({(task.n, task.k) for task in tasks}) != 1:
        return None
    tail = (1.0 - confidence) / 2.0
    t, n, passes = len(tasks), tasks[0].n, sum(task.c for task in tasks)
    return Interval(_count_lower(passes, t, n, tail), _count_upper(passes, t, n, tail))


def _suite_target(tasks: Sequence[TaskCounts], confidence: float) -> list[Interval]:
    tail = (1.0 - confidence) / 2.0
    estimates = _point_estimates(tasks)
    ceilings = _upper_limits(tasks)
    mean = _hull(*_mean_ends(tasks, tail, estimates[_MEAN]), estimates[_MEAN], 0.0, 1.0)
    if all(task.k == 1 for task in tasks):  # pass^1 and pass@1 are the pass rate itself; no gap
        return [mean, mean, mean, Interval(0.0, 0.0)]
    out = [mean]
    for metric in (_HAT, _AT, _GAP):
        low = _end(tasks, metric, _LOW, tail, estimates[metric])
        high = _end(tasks, metric, _HIGH, tail, estimates[metric])
        out.append(_hull(low, high, estimates[metric], 0.0, ceilings[metric]))
    return out


def mean_interval(tasks: Sequence[TaskCounts], confidence: float = 0.95) -> Interval:
    """The suite-target interval of the task-averaged pass rate alone: ``suite_intervals(...).mean_at_k``, without
    the work the other metrics take.

    The pooled count's exact bounds when every task has the same n (valid for any pass rates), else the tightest of
    the bound on the sum (in blocks of one repetition) and the Sidak box.
    """
    check_confidence(confidence)
    _check_tasks(tasks)
    if not tasks:
        raise ValueError("mean_interval needs at least one task")
    estimate = _point_estimates(tasks)[_MEAN]
    return _hull(*_mean_ends(tasks, (1.0 - confidence) / 2.0, estimate), estimate, 0.0, 1.0)


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
