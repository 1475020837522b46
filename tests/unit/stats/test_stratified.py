"""The exact stratified (conditional) test of a suite-level drop, and the task-averaged pass-rate change.

Known figures: one task alone is Fisher's one-sided exact test (5/5 -> 2/5: 1/12); a task at 5/5 -> 4/5 given its
nine passes has the baseline's five passes with probability 1/2, so twenty such tasks give 2^-20. The null
distribution is checked against a brute-force sum of scipy's hypergeometric probabilities, and the level is checked
exactly, by enumerating every outcome of small suites, at a grid of pass rates. Large suites (the tilted fixed-point
convolution) are checked against the exact integer convolution to 1e-12 relative.

The change figure is the task-averaged one, mean_i(c2_i / n2_i - c1_i / n1_i), so it agrees with the test: the
pooled change (all passes over all repetitions) read -96.1 pp [-99.95, -76.3] beside p = 1 for two unchanged tasks
with unequal repetitions (test_simpsons_paradox_no_task_changed failed on that code).
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_consistency.stats import stratified
from pytest_consistency.stats.binomial import binomial_pmf
from pytest_consistency.stats.significance import fisher_one_sided
from pytest_consistency.stats.stratified import EXACT_PRODUCTS, Stratum, stratified_drop, stratified_p_value

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize(("c1", "c2"), list(itertools.product(range(6), range(6))))
def test_one_task_is_fishers_one_sided_test(c1: int, c2: int) -> None:
    p = stratified_p_value([Stratum(c1, 5, c2, 5)])
    if 0 < c1 + c2 < 10:
        assert float(p) == pytest.approx(fisher_one_sided(c1, 5, c2, 5), abs=1e-15)
    else:
        assert p == 1  # all pass (or all fail) in both runs: nothing to test


def test_known_figures() -> None:
    assert stratified_p_value([Stratum(5, 5, 2, 5)]) == Fraction(1, 12)
    assert stratified_p_value([Stratum(5, 5, 4, 5)] * 2) == Fraction(1, 4)
    assert stratified_p_value([Stratum(5, 5, 4, 5)] * 20) == Fraction(1, 2**20)
    # tasks that passed every time in both runs carry no information and do not dilute the evidence
    assert stratified_p_value([Stratum(5, 5, 4, 5)] * 20 + [Stratum(5, 5, 5, 5)] * 80) == Fraction(1, 2**20)
    assert stratified_p_value([]) == 1


def _brute_force(strata: list[Stratum]) -> float:
    """P(sum of baseline passes >= observed) by enumerating every combination of per-task counts (scipy pmfs)."""
    supports = []
    for t in strata:
        s = t.c1 + t.c2
        law = scipy_stats.hypergeom(t.n1 + t.n2, s, t.n1)  # population, successes in it, draws (the baseline)
        supports.append([(x, law.pmf(x)) for x in range(max(0, s - t.n2), min(t.n1, s) + 1)])
    observed = sum(t.c1 for t in strata)
    return math.fsum(
        math.prod(w for _, w in combo) for combo in itertools.product(*supports) if sum(x for x, _ in combo) >= observed
    )


def test_matches_a_brute_force_sum_of_scipy_hypergeometric_probabilities() -> None:
    rng = random.Random(17)
    for _ in range(200):
        strata = []
        for _ in range(rng.randint(1, 4)):
            n1, n2 = rng.randint(1, 8), rng.randint(1, 8)
            strata.append(Stratum(rng.randint(0, n1), n1, rng.randint(0, n2), n2))
        assert float(stratified_p_value(strata)) == pytest.approx(_brute_force(strata), abs=1e-12)


@pytest.mark.parametrize("rates", [(0.5, 0.8, 0.95), (0.9, 0.9, 0.9), (0.3, 0.6, 1.0), (0.95, 0.99, 0.2)])
@pytest.mark.parametrize("n", [3, 5])
def test_exact_false_alarm_rate_is_at_most_alpha(rates: tuple[float, ...], n: int) -> None:
    """Every outcome of two runs of the same agent, weighted by its exact probability: P(p <= 0.05) <= 0.05."""
    pmfs = [binomial_pmf(n, p) for p in rates]
    alarm = 0.0
    for counts in itertools.product(range(n + 1), repeat=2 * len(rates)):
        base, cur = counts[: len(rates)], counts[len(rates) :]
        if stratified_p_value([Stratum(a, n, b, n) for a, b in zip(base, cur, strict=True)]) <= Fraction(1, 20):
            alarm += math.prod(pmfs[i][a] * pmfs[i][b] for i, (a, b) in enumerate(zip(base, cur, strict=True)))
    assert alarm <= 0.05


def test_the_change_and_its_interval_with_equal_repetitions() -> None:
    result = stratified_drop([Stratum(5, 5, 4, 5)] * 20)
    assert result is not None
    assert (result.baseline_rate, result.current_rate, result.change_pp) == (1.0, 0.8, pytest.approx(-20.0))
    assert result.p_value == pytest.approx(2**-20, rel=1e-12)
    assert (result.observed, result.expected, result.informative) == (100, pytest.approx(20 * 4.5), 20)
    iv = result.change_interval
    assert iv.low < -20 < iv.high < 0  # the whole interval says "worse"
    assert stratified_drop([]) is None
    same = stratified_drop([Stratum(3, 5, 3, 5)] * 4)
    assert same is not None and same.change_pp == 0 and same.change_interval.contains(0) and same.p_value > 0.5


@pytest.mark.parametrize("p", [0.5, 0.85, 0.93, 1.0])
def test_change_interval_covers_the_true_change_exactly(p: float) -> None:
    """Three tasks at n = 3, baseline p, current p x 0.8: exact coverage over every outcome is >= 0.95."""
    n, t = 3, 3
    before, after = binomial_pmf(n, p), binomial_pmf(n, 0.8 * p)
    truth = (0.8 * p - p) * 100
    covered = 0.0
    for counts in itertools.product(range(n + 1), repeat=2 * t):
        result = stratified_drop([Stratum(counts[i], n, counts[t + i], n) for i in range(t)])
        assert result is not None
        if result.change_interval.contains(truth):
            covered += math.prod(before[counts[i]] * after[counts[t + i]] for i in range(t))
    assert covered >= 0.95


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="c must be within"):
        Stratum(6, 5, 0, 5)
    with pytest.raises(ValueError, match="expected Stratum"):
        stratified_drop([(5, 5, 4, 5)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="confidence"):
        stratified_drop([Stratum(5, 5, 4, 5)], confidence=1.5)


# --- the change figure agrees with the test (Simpson's paradox) ----------------------------------------------------


def test_simpsons_paradox_no_task_changed() -> None:
    """Task A passed 50 of 50 in the baseline and 1 of 1 now; task B failed 1 of 1 and now 0 of 50. Neither changed,
    the test says p = 1, and the pooled figure said 98.0 % -> 2.0 %, -96.1 pp. The task-averaged figure is 0."""
    result = stratified_drop([Stratum(50, 50, 1, 1), Stratum(0, 1, 0, 50)])
    assert result is not None
    assert result.p_value == 1.0
    assert (result.baseline_rate, result.current_rate, result.change_pp) == (0.5, 0.5, 0.0)
    assert result.change_interval.contains(0.0)


def test_unequal_allocation_with_a_real_drop_reads_as_a_drop() -> None:
    """The same rates with the runs' repetitions swapped give the same figure: it depends on the rates, not on n."""
    a = stratified_drop([Stratum(20, 20, 2, 5), Stratum(5, 5, 10, 20), Stratum(10, 20, 3, 5), Stratum(4, 5, 16, 20)])
    b = stratified_drop([Stratum(5, 5, 8, 20), Stratum(20, 20, 5, 10), Stratum(5, 10, 12, 20), Stratum(16, 20, 4, 5)])
    assert a is not None and b is not None
    assert a.change_pp == pytest.approx(b.change_pp) == pytest.approx(-25.0)
    assert a.change_interval.contains(-25.0) and b.change_interval.contains(-25.0)


@st.composite
def runs(draw: st.DrawFn) -> list[tuple[int, int, int]]:
    """Tasks as (passes, repetitions in the baseline, scale of the current run's repetitions)."""
    tasks = draw(st.lists(st.tuples(st.integers(1, 30), st.integers(1, 4)), min_size=1, max_size=12))
    return [(draw(st.integers(0, n)), n, scale) for n, scale in tasks]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs())
def test_no_change_reads_zero_whatever_the_repetitions(tasks: list[tuple[int, int, int]]) -> None:
    """Every task at the same pass rate in both runs (same counts, or the counts scaled with n): change 0, inside."""
    for strata in (
        [Stratum(c, n, c, n) for c, n, _ in tasks],
        [Stratum(c, n, c * scale, n * scale) for c, n, scale in tasks],
    ):
        result = stratified_drop(strata)
        assert result is not None
        assert result.change_pp == 0.0 and result.baseline_rate == result.current_rate
        assert result.change_interval.contains(0.0)


@pytest.mark.parametrize("p", [0.3, 0.7, 0.9, 1.0])
def test_change_interval_covers_with_unequal_repetitions_exactly(p: float) -> None:
    """Three tasks with n = 1, 3, 6 in the baseline and 6, 3, 1 now, every rate p -> 0.85 p: every outcome."""
    sizes = [(1, 6), (3, 3), (6, 1)]
    truth = (0.85 * p - p) * 100
    laws = [(binomial_pmf(n1, p), binomial_pmf(n2, 0.85 * p)) for n1, n2 in sizes]
    covered = 0.0
    ranges = [range(n + 1) for pair in sizes for n in pair]
    for counts in itertools.product(*ranges):
        strata = [Stratum(counts[2 * i], n1, counts[2 * i + 1], n2) for i, (n1, n2) in enumerate(sizes)]
        result = stratified_drop(strata)
        assert result is not None
        if result.change_interval.contains(truth):
            covered += math.prod(b[counts[2 * i]] * c[counts[2 * i + 1]] for i, (b, c) in enumerate(laws))
    assert covered >= 0.95


# --- large suites: the tilted convolution equals the exact one ------------------------------------------------------


def exact_tail(strata: tuple[tuple[int, int, int], ...], observed: int) -> Fraction:
    offset, weights, total = stratified._null_distribution(strata)
    return Fraction(sum(weights[max(0, observed - offset) :]), total)


@st.composite
def suites(draw: st.DrawFn) -> tuple[tuple[tuple[int, int, int], ...], int]:
    strata = []
    for _ in range(draw(st.integers(2, 10))):
        n1, n2 = draw(st.integers(1, 25)), draw(st.integers(1, 25))
        strata.append((n1, n2, draw(st.integers(1, n1 + n2 - 1))))
    key = tuple(sorted(strata))
    low = sum(max(0, s - n2) for n1, n2, s in key)
    high = sum(min(n1, s) for n1, n2, s in key)
    return key, draw(st.integers(low, high))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(suites())
def test_the_tilted_convolution_equals_the_exact_one(suite: tuple[tuple[tuple[int, int, int], ...], int]) -> None:
    strata, observed = suite
    exact = float(exact_tail(strata, observed))
    fast = stratified._tilted_tail(strata, observed)
    assert fast == pytest.approx(exact, rel=1e-12, abs=1e-300), (strata, observed)


@pytest.mark.parametrize(("tasks", "n", "scale"), [(25, 60, 0.95), (150, 10, 1.0), (12, 150, 0.9), (40, 40, 0.97)])
def test_large_suites_leave_the_exact_convolution_and_keep_its_value(tasks: int, n: int, scale: float) -> None:
    rng = random.Random(tasks * n)
    strata = []
    for _ in range(tasks):
        p = rng.uniform(0.2, 0.95)
        strata.append(
            Stratum(sum(rng.random() < p for _ in range(n)), n, sum(rng.random() < p * scale for _ in range(n)), n)
        )
    informative = [t for t in strata if 0 < t.c1 + t.c2 < 2 * n]
    key = tuple(sorted((t.n1, t.n2, t.c1 + t.c2) for t in informative))
    assert stratified.exact_products(key) > EXACT_PRODUCTS  # the fast path
    exact = float(exact_tail(key, sum(t.c1 for t in informative)))
    assert float(stratified_p_value(strata)) == pytest.approx(exact, rel=1e-12)
