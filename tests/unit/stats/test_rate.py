"""A task's rate against ``min_rate``: exact tests whose wrong-verdict probability is at most alpha, checked exactly.

The counterpart, ``min_pass``, is a rule on the observed count: at min_pass 0.8 and n = 5 a task whose true rate is
0.7 passes 53 % of the time (P(X >= 4) = 0.528); the checks below fail for such a rule.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from pytest_consistency.analysis.adaptive import passes_as_a_whole
from pytest_consistency.stats.binomial import binomial_cdf, binomial_sf
from pytest_consistency.stats.rate import (
    PLAN_MAX,
    PLAN_POWER,
    decided_probability,
    fail_to,
    n_to_fail,
    n_to_pass,
    pass_from,
    planning_n,
    rate_bounds,
    rate_verdict,
    settled,
)

RATES = (0.05, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99)
ALPHAS = (0.05, 0.025, 0.0125)


def wrong_pass(n: int, p: float, rate: float, alpha: float) -> float:
    """Exact P(PASS) for a task whose true rate is p."""
    need = pass_from(n, rate, alpha)
    return 0.0 if need is None else binomial_sf(need, n, p)


def wrong_fail(n: int, p: float, rate: float, alpha: float) -> float:
    most = fail_to(n, rate, alpha)
    return 0.0 if most is None else binomial_cdf(most, n, p)


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("rate", RATES)
def test_a_wrong_verdict_has_probability_at_most_alpha_at_every_n(rate: float, alpha: float) -> None:
    # The worst case of each error is at the bar itself (P(PASS) grows with p; P(FAIL) falls with it): just below
    # it for a wrong PASS, at it for a wrong FAIL.
    for n in range(1, 81):
        assert wrong_pass(n, rate * (1 - 1e-9), rate, alpha) <= alpha + 1e-12, n
        assert wrong_fail(n, rate, rate, alpha) <= alpha + 1e-12, n
        for p in (rate / 2, rate * 0.9, rate - 0.01):
            if p > 0:
                assert wrong_pass(n, p, rate, alpha) <= alpha + 1e-12
        for p in (rate, rate + 0.01, (1 + rate) / 2):
            if p < 1:
                assert wrong_fail(n, p, rate, alpha) <= alpha + 1e-12


def test_a_rule_on_the_count_is_a_coin_flip_near_its_threshold() -> None:
    """What min_rate fixes: min_pass=0.8 passes a 0.7 task 53 % of the time at n = 5, 38 % at n = 10."""
    assert sum(math.comb(5, c) * 0.7**c * 0.3 ** (5 - c) for c in range(6) if passes_as_a_whole(c, 5, 0.8)) == (
        pytest.approx(0.528, abs=1e-3)
    )
    assert sum(math.comb(10, c) * 0.7**c * 0.3 ** (10 - c) for c in range(11) if passes_as_a_whole(c, 10, 0.8)) == (
        pytest.approx(0.383, abs=1e-3)
    )
    assert wrong_pass(5, 0.7, 0.8, 0.05) == 0.0 and wrong_pass(10, 0.7, 0.8, 0.05) == 0.0
    assert wrong_pass(50, 0.7, 0.8, 0.05) < 0.01


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("n", [1, 3, 5, 10, 14, 20, 50])
def test_the_verdict_is_the_one_sided_exact_binomial_test(n: int, rate: float) -> None:
    for c in range(n + 1):
        greater = scipy_stats.binomtest(c, n, rate, alternative="greater").pvalue
        less = scipy_stats.binomtest(c, n, rate, alternative="less").pvalue
        if min(abs(greater - 0.05), abs(less - 0.05)) < 1e-9:
            continue  # a p-value equal to alpha up to float rounding (0.95 is not 19/20): either side is a tie
        expected = "pass" if greater <= 0.05 else "fail" if less <= 0.05 else "undecided"
        assert rate_verdict(c, n, rate, 0.05) == expected, (c, n)


def test_the_figures_the_docs_quote() -> None:
    assert rate_bounds(5, 5, 0.05).low == pytest.approx(0.549, abs=5e-4)
    assert rate_bounds(10, 10, 0.05).low == pytest.approx(0.741, abs=5e-4)
    assert rate_bounds(14, 14, 0.05).low == pytest.approx(0.807, abs=5e-4)
    assert rate_bounds(30, 30, 0.05).low == pytest.approx(0.905, abs=5e-4)
    assert n_to_pass(0.8, 0.05) == 14 and n_to_pass(0.9, 0.05) == 29
    assert rate_verdict(5, 5, 0.8, 0.05) == "undecided" and rate_verdict(14, 14, 0.8, 0.05) == "pass"
    assert n_to_fail(0.8, 0.05) == 2 and rate_verdict(0, 5, 0.8, 0.05) == "fail"


@given(st.integers(1, 40), st.sampled_from(RATES), st.sampled_from(ALPHAS), st.data())
def test_curtailment_settles_only_what_every_completion_agrees_on(
    n: int, rate: float, alpha: float, data: st.DataObject
) -> None:
    passes = data.draw(st.integers(0, n))
    failures = data.draw(st.integers(0, n - passes))
    verdicts = {rate_verdict(passes + more, n, rate, alpha) for more in range(n - passes - failures + 1)}
    early = settled(passes, failures, n, rate, alpha)
    assert early == (verdicts.pop() if len(verdicts) == 1 else None)


@pytest.mark.parametrize(("c", "n", "rate"), [(4, 5, 0.6), (9, 10, 0.8), (3, 5, 0.8), (1, 5, 0.5), (20, 20, 0.9)])
def test_a_plan_is_the_fewest_repetitions_that_likely_decide_a_fresh_run(c: int, n: int, rate: float) -> None:
    plan = planning_n(c, n, rate, 0.05)
    assert plan is not None
    p = c / n
    assert decided_probability(plan, p, rate, 0.05) >= 0.8
    assert all(decided_probability(m, p, rate, 0.05) < 0.8 for m in range(1, plan))


def test_no_plan_for_an_estimate_on_the_bar() -> None:
    assert planning_n(4, 5, 0.8, 0.05) is None


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, True, "0.8"])
def test_a_bar_strictly_between_0_and_1(bad: object) -> None:
    with pytest.raises(ValueError, match="rate must be strictly between 0 and 1"):
        rate_verdict(3, 5, bad, 0.05)  # type: ignore[arg-type]


@pytest.mark.parametrize(("c", "n", "rate"), [(24, 29, 0.8), (33, 40, 0.8), (30, 40, 0.8), (9, 10, 0.8), (27, 29, 0.9)])
def test_the_plan_near_the_bar_answers_as_the_whole_walk_does(c: int, n: int, rate: float) -> None:
    """Near the bar no n up to PLAN_MAX may decide; ``planning_n`` says so from its last sizes instead of trying
    every n (seconds per task at the session end): the same answer as trying every one."""
    p = c / n
    first = n_to_pass(rate, 0.05) if p > rate else n_to_fail(rate, 0.05)
    walked = next(
        (size for size in range(first, PLAN_MAX + 1) if decided_probability(size, p, rate, 0.05) >= PLAN_POWER), None
    )
    assert planning_n(c, n, rate, 0.05) == walked
