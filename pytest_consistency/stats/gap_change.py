"""The interval for the change of the consistency gap between a baseline run and the current run, task by task.

Target ``"suite"`` (:func:`paired_gap_difference`), when each task has the same n and k in
both runs: if nothing changed, a task's two runs are exchangeable, so its change D_i = G(current) - G(baseline) is
symmetric, and given |D_i| its sign is a fair coin, independently over tasks. The interval is the set of changes d
that the self-normalised statistic sum(D_i - d) / sqrt(sum (D_i - d)^2) does not push past a critical value x:
mean(D) +- x s / sqrt(T - x^2), s^2 = mean((D - mean D)^2) (every change when x^2 >= T). x is the exact quantile of
the statistic at d = 0 over the 2^T sign patterns (or, when that law is too long to work out, the value of Bentkus
and Dzindzalieta's bound, Bernoulli 2015: P(sum a_i e_i >= x ||a||) <= 3.1787 P(N(0, 1) >= x) for every weights),
never below the normal quantile. So when nothing changed each end excludes 0 with probability at most the tail,
exactly, for every mix of rates. Under a change the test's spread sum (D_i - d)^2 exceeds the true variance on
average, which keeps large suites covered; with few tasks that moved it missed (ten tasks, eight always passing, one
of those dropping to 0.9: 14 % above at 95 %), so below ``FEW_CHANGES_FOR_SIGNS`` moving tasks, and whenever n or k
differ between the runs or 2^-T exceeds the tail, it is joined with each run's suite gap interval at half the tail,
subtracted (valid for every change, Bonferroni). The choice depends on the |D_i| only, which keeps the exactness at
no change.

Target ``"population"``: the paired bootstrap of task indices (E. Miller's paired difference). The suite intervals
each run's figures have, and the helpers both share, are in :mod:`pytest_consistency.stats.suite`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from statistics import NormalDist

from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.metrics import TaskCounts
from pytest_consistency.stats.suite import (
    _GAP,
    BENTKUS_DZINDZALIETA,
    _check_common,
    _check_tasks,
    _estimator_values,
    _hull,
    _percentile_interval,
    _point_estimates,
    _resampled_means,
    _suite_target,
    _upper_limits,
)

_FLIP_BUDGET = 6_000_000
"""Most steps (sums kept times tasks added) the exact sign-flip law may take; beyond, the Bentkus-Dzindzalieta bound."""


def _flip_critical_value(changes: Sequence[Fraction], tail: float) -> float:
    """x such that P(sum e_i |D_i| > x sqrt(sum D_i^2)) <= tail for fair independent signs e_i: the exact quantile
    of the 2^T' sign patterns (T' nonzero changes, on their common lattice) when that takes at most
    ``_FLIP_BUDGET`` steps, else the Bentkus-Dzindzalieta value, for which the same holds by their theorem."""
    bound = NormalDist().inv_cdf(1.0 - tail / BENTKUS_DZINDZALIETA)
    scale = 1
    for d in changes:
        scale = scale * d.denominator // math.gcd(scale, d.denominator)
    groups = Counter(abs(int(d * scale)) for d in changes if d)
    if not groups:
        return bound
    reach = sum(a * m for a, m in groups.items())
    if reach * (sum(groups.values()) + len(groups)) > _FLIP_BUDGET:
        return bound
    law = {0: 1}  # sum of e_i a_i -> number of sign patterns giving it
    for a, m in sorted(groups.items()):
        weights = [math.comb(m, j) for j in range(m + 1)]
        step: dict[int, int] = {}
        for value, count in law.items():
            for j, weight in enumerate(weights):
                key = value + a * (2 * j - m)
                step[key] = step.get(key, 0) + count * weight
        law = step
    allowed = Fraction(tail) * 2 ** sum(groups.values())
    above = 0
    critical = max(law)
    for value in sorted(law, reverse=True):
        if above + law[value] > allowed:
            critical = value
            break
        above += law[value]
    else:
        critical = min(law)
    norm = math.sqrt(sum(a * a * m for a, m in groups.items()))
    # The test rejects above the critical sum, not at it: a hair more keeps an outcome at the critical sum (often the
    # largest, all signs alike) from being rounded out of the interval.
    return min(critical / norm * (1.0 + 1e-9), bound)


def _sign_flip_ends(changes: Sequence[Fraction], confidence: float) -> tuple[float, float]:
    """The changes d not rejected by the self-normalised sign-flip statistic sum(D_i - d) / sqrt(sum (D_i - d)^2)
    at the critical value x of :func:`_flip_critical_value` (from the signs' law at d = 0): mean(D) +-
    x s / sqrt(T - x^2), s^2 = mean((D - mean D)^2); every change when x^2 >= T (the statistic never exceeds
    sqrt(T)). When nothing changed, the signs of the D_i are fair coins given |D_i|, so each end excludes 0 with
    probability <= (1 - confidence) / 2."""
    t = len(changes)
    tail = (1.0 - confidence) / 2.0
    x = max(_flip_critical_value(changes, tail), NormalDist().inv_cdf(1.0 - tail))
    if x * x >= t:
        return -math.inf, math.inf
    values = [float(d) for d in changes]
    mean = math.fsum(values) / t
    spread = math.sqrt(math.fsum((d - mean) ** 2 for d in values) / t)
    half = x * spread / math.sqrt(t - x * x)
    return mean - half, mean + half


FEW_CHANGES_FOR_SIGNS = 8
"""Below this many tasks whose gap estimate moved, the sign-flip interval is widened to the difference of the two
runs' suite intervals (see :func:`_paired_suite_ends`)."""


def _paired_suite_ends(
    baseline: Sequence[TaskCounts], current: Sequence[TaskCounts], changes: Sequence[Fraction], confidence: float
) -> tuple[float, float]:
    """The suite-target ends of the gap change: the sign-flip interval (exact at no change), joined with each run's
    suite gap interval at half the tail, subtracted (valid for every change, Bonferroni) when fewer than
    ``FEW_CHANGES_FOR_SIGNS`` tasks moved; the subtracted interval alone when n or k differ between the runs (no
    exchangeability) or 2^-T exceeds the tail (no sign pattern is rare enough). The sign-flip interval is valid only
    when nothing changed: with few moving tasks its spread is a handful of terms, and under a change it missed (ten
    tasks, eight of them always passing, one of those dropping to 0.9: 14 % above at 95 %). Which is used depends on
    the |D_i| only, given which the signs are fair coins, so the join keeps the exactness at no change."""
    tail = (1.0 - confidence) / 2.0
    alike = all((b.n, b.k) == (c.n, c.k) for b, c in zip(baseline, current, strict=True))
    signs = alike and 2.0 ** -len(changes) <= tail
    low, high = _sign_flip_ends(changes, confidence) if signs else (math.inf, -math.inf)
    if not signs or sum(1 for d in changes if d) < FEW_CHANGES_FOR_SIGNS:
        half = 1.0 - tail
        before, after = _suite_target(baseline, half)[_GAP], _suite_target(current, half)[_GAP]
        low, high = min(low, after.low - before.high), max(high, after.high - before.low)
    return low, high


def paired_gap_difference(
    pairs: Sequence[tuple[TaskCounts, TaskCounts]],
    confidence: float = 0.95,
    target: str = "suite",
    seed: int = 0,
    draws: int = 2000,
) -> Interval:
    """Interval for gap(current) - gap(baseline) in percentage points, over the tasks present in both runs.

    Each pair is ``(baseline, current)`` for one task. Positive means the current run is less consistent.
    ``"suite"``: the two runs are independent samples of the same fixed tasks. When every task has the same n and k
    in both runs, the self-normalised sign-flip interval of the tasks' changes at the Bentkus-Dzindzalieta critical
    value (module docstring): at no change each end misses at most (1 - confidence) / 2 for every mix of rates.
    Otherwise each run's suite gap interval at half that tail, subtracted.
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
    baseline = [pair[0] for pair in pairs]
    current = [pair[1] for pair in pairs]
    estimate = _point_estimates(current)[_GAP] - _point_estimates(baseline)[_GAP]
    floor = -_upper_limits(baseline)[_GAP]
    ceiling = _upper_limits(current)[_GAP]
    changes = [
        _estimator_values(cur.n, cur.k)[_GAP][cur.c] - _estimator_values(base.n, base.k)[_GAP][base.c]
        for base, cur in pairs
    ]
    if target == "population":
        (boot,) = _resampled_means([[float(d) for d in changes]], seed, draws)
        low, high = _percentile_interval(boot, confidence)
    else:
        low, high = _paired_suite_ends(baseline, current, changes, confidence)
    result = _hull(low, high, estimate, floor, ceiling)
    return Interval(result.low * 100.0, result.high * 100.0)
