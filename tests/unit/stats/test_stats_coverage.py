"""Coverage of the per-task and suite-target intervals: does the 95 % interval hold the true value 95 % of the time?

Where the outcome space is small the coverage is computed exactly, by enumerating every outcome with its binomial
probability (per-task Clopper-Pearson; suite target with T = 1 and 3 tasks, where the method is the exact Sidak box
and coverage must be >= 95 % with no Monte Carlo error). With T = 10 tasks (the normal-approximation branch) and for
the paired gap difference it is simulated with a seeded random.Random: 1000 simulated suites per configuration
(800 for the paired difference), and the check is coverage >= 0.95 - 3 Monte Carlo standard errors
(0.929 and 0.923). The suite target needs no resampling, so nothing here depends on a number of draws.
Truth: Mean = mean p_i, pass^k = mean p_i^k, pass@k = mean 1 - (1 - p_i)^k, gap = Mean - pass^k (in pp).
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

from pytest_consistency.stats.binomial import binomial_pmf, clopper_pearson
from pytest_consistency.stats.gap_change import paired_gap_difference
from pytest_consistency.stats.metrics import TaskCounts
from pytest_consistency.stats.suite import SuiteIntervals, suite_intervals

NOMINAL = 0.95


def configurations(t: int) -> dict[str, list[float]]:
    mixed = [0.6] if t == 1 else [0.2 + 0.8 * i / (t - 1) for i in range(t)]
    return {
        "all 1.0": [1.0] * t,
        "all 0.9": [0.9] * t,
        "mixed 0.2..1.0": mixed,
        "all 0.6": [0.6] * t,
        "all 0.3": [0.3] * t,
    }


def truths(ps: list[float], ks: list[int]) -> tuple[float, float, float, float]:
    t = len(ps)
    mean = sum(ps) / t
    hat = sum(p**k for p, k in zip(ps, ks, strict=True)) / t
    at = sum(1 - (1 - p) ** k for p, k in zip(ps, ks, strict=True)) / t
    return mean, hat, at, (mean - hat) * 100


def covered(result: SuiteIntervals, truth: tuple[float, float, float, float]) -> tuple[bool, bool, bool, bool]:
    eps = 1e-9
    intervals = (result.mean_at_k, result.pass_hat_k, result.pass_at_k, result.gap_pp)
    return tuple(iv.low - eps <= x <= iv.high + eps for iv, x in zip(intervals, truth, strict=True))  # type: ignore[return-value]


def exact_suite_coverage(n: int, k: int, ps: list[float]) -> list[float]:
    """Coverage of each suite interval, summed over every outcome of the T tasks."""
    pmfs = [binomial_pmf(n, p) for p in ps]
    truth = truths(ps, [k] * len(ps))
    totals = [0.0] * 4
    for outcome in itertools.product(range(n + 1), repeat=len(ps)):
        weight = math.prod(pmf[c] for pmf, c in zip(pmfs, outcome, strict=True))
        if weight == 0.0:
            continue
        result = suite_intervals([TaskCounts(c, n, k) for c in outcome])
        assert result is not None
        for metric, hit in enumerate(covered(result, truth)):
            totals[metric] += weight * hit
    return totals


def draw(rng: random.Random, n: int, p: float) -> int:
    return sum(rng.random() < p for _ in range(n))


def simulated_suite_coverage(n: int, k: int, ps: list[float], reps: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    truth = truths(ps, [k] * len(ps))
    hits = [0] * 4
    for _ in range(reps):
        result = suite_intervals([TaskCounts(draw(rng, n, p), n, k) for p in ps])
        assert result is not None
        for metric, hit in enumerate(covered(result, truth)):
            hits[metric] += hit
    return [h / reps for h in hits]


def mc_floor(reps: int) -> float:
    return NOMINAL - 3 * math.sqrt(NOMINAL * (1 - NOMINAL) / reps)


# --- per task -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 5, 10])
def test_clopper_pearson_exact_coverage_over_a_grid_of_true_rates(n: int) -> None:
    for p in [i / 100 for i in range(101)] + [0.999, 0.001]:
        pmf = binomial_pmf(n, p)
        coverage = math.fsum(w for c, w in enumerate(pmf) if clopper_pearson(c, n).contains(p))
        assert coverage >= NOMINAL - 1e-12, (n, p, coverage)


# --- suite target, few tasks: exact ----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 5, 10])
@pytest.mark.parametrize("t", [1, 3])
@pytest.mark.parametrize("config", list(configurations(1)))
def test_suite_target_exact_coverage_with_few_tasks(n: int, t: int, config: str) -> None:
    ps = configurations(t)[config]
    coverage = exact_suite_coverage(n, n, ps)
    assert min(coverage) >= NOMINAL - 1e-9, dict(zip(("mean", "pass^k", "pass@k", "gap"), coverage, strict=True))


# --- suite target, ten tasks: simulated --------------------------------------------------------------------------

REPS = 1000


@pytest.mark.parametrize("n", [3, 5, 10])
@pytest.mark.parametrize("config", list(configurations(10)))
def test_suite_target_simulated_coverage_with_ten_tasks(n: int, config: str) -> None:
    ps = configurations(10)[config]
    coverage = simulated_suite_coverage(n, n, ps, REPS, seed=n * 100 + len(config))
    assert min(coverage) >= mc_floor(REPS), dict(zip(("mean", "pass^k", "pass@k", "gap"), coverage, strict=True))


@pytest.mark.parametrize(("n", "k", "t"), [(10, 5, 10), (5, 3, 10), (10, 9, 4), (5, 5, 4)])
def test_suite_target_simulated_coverage_other_k_and_four_tasks(n: int, k: int, t: int) -> None:
    for name, ps in configurations(t).items():
        coverage = simulated_suite_coverage(n, k, ps, 600, seed=k * 1000 + n * 10 + t)
        assert min(coverage) >= mc_floor(600), (name, coverage)


# --- paired gap difference: simulated ------------------------------------------------------------------------------

PAIRED_REPS = 800


def paired_configurations(t: int) -> dict[str, tuple[list[float], list[float]]]:
    base = configurations(t)["mixed 0.2..1.0"]
    degraded = list(base)
    degraded[-1] = 0.6
    return {
        "same agent, mixed": (base, base),
        "same agent, all 1.0": ([1.0] * t, [1.0] * t),
        "one task 1.0 -> 0.6": (base, degraded),
    }


@pytest.mark.parametrize("n", [3, 5, 10])
@pytest.mark.parametrize("t", [1, 3, 10])
def test_paired_gap_difference_simulated_coverage(n: int, t: int) -> None:
    for name, (base, cur) in paired_configurations(t).items():
        truth = truths(cur, [n] * t)[3] - truths(base, [n] * t)[3]
        rng = random.Random(n * 31 + t)
        hits = 0
        for _ in range(PAIRED_REPS):
            pairs = [
                (TaskCounts(draw(rng, n, pb), n, n), TaskCounts(draw(rng, n, pc), n, n))
                for pb, pc in zip(base, cur, strict=True)
            ]
            interval = paired_gap_difference(pairs)
            hits += interval.low - 1e-9 <= truth <= interval.high + 1e-9
        assert hits / PAIRED_REPS >= mc_floor(PAIRED_REPS), (name, hits / PAIRED_REPS)
