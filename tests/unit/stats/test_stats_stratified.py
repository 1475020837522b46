"""The exact stratified (conditional) test of a suite-level drop, and the pooled pass-rate change.

Known figures: one task alone is Fisher's one-sided exact test (5/5 -> 2/5: 1/12); a task at 5/5 -> 4/5 given its
nine passes has the baseline's five passes with probability 1/2, so twenty such tasks give 2^-20. The null
distribution is checked against a brute-force sum of scipy's hypergeometric probabilities, and the level is checked
exactly, by enumerating every outcome of small suites, at a grid of pass rates.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

from pytest_consistency.stats.binomial import binomial_pmf
from pytest_consistency.stats.significance import fisher_one_sided
from pytest_consistency.stats.stratified import Stratum, stratified_drop, stratified_p_value

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


def test_pooled_change_and_its_interval() -> None:
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
def test_pooled_change_interval_covers_the_true_change_exactly(p: float) -> None:
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
