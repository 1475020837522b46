"""The suite gap's confidence sequence in rounds (:mod:`pytest_consistency.stats.suite_sequential`): the batch term
and its Horvitz-Thompson weight are unbiased, the inclusion draws are deterministic, and the bounds cover the true
gap after every round at least 1 - alpha of the time per side (seeded, with an exact binomial limit)."""

from __future__ import annotations

import itertools
import math
import random

from pytest_consistency.analysis.suite_sequential import gap_rounds
from pytest_consistency.stats.suite_sequential import batch_gap, draw, included, inclusion_probability


def binomial_limit(runs: int, chance: float, tail: float = 1e-6) -> int:
    """The smallest count m with P(Binomial(runs, chance) > m) <= tail: more misses than m is evidence."""
    total = 0.0
    for m in range(runs + 1):
        total += math.comb(runs, m) * chance**m * (1 - chance) ** (runs - m)
        if 1 - total <= tail:
            return m
    return runs


def test_the_batch_term_is_unbiased_for_p_minus_p_to_the_k() -> None:
    for k in (2, 3, 5):
        for p in (0.0, 0.3, 0.8, 0.95, 1.0):
            expected = sum(
                batch_gap(batch) * math.prod(p if x else 1 - p for x in batch)
                for batch in itertools.product((True, False), repeat=k)
            )
            assert math.isclose(expected, p - p**k, abs_tol=1e-12)
    assert batch_gap([True] * 5) == 0.0 and batch_gap([True, True, False, True, True]) == 0.8


def test_the_inclusion_draw_is_deterministic_and_horvitz_thompson_is_unbiased() -> None:
    assert included(7, "t[a]", 1, 0.0)  # round 1 includes every task
    assert [draw(7, "t[a]", r) for r in (2, 3)] == [draw(7, "t[a]", r) for r in (2, 3)]
    assert draw(7, "t[a]", 2) != draw(8, "t[a]", 2) != draw(7, "t[b]", 2)
    assert inclusion_probability([[True, True]]) == 0.3 and inclusion_probability([[True, False]]) == 1.0
    runs, pi, term = 20000, 0.3, 0.6
    chosen = sum(included(43, f"task{i}", 2, pi) for i in range(runs))
    sd = math.sqrt(runs * pi * (1 - pi))
    assert abs(chosen - runs * pi) <= 5 * sd  # the draw is uniform: P(included) = pi
    # E[1{included} Y / pi] = Y: the mean of the weighted terms is within 5 s.d. of the batch's own term.
    assert abs(chosen * term / pi / runs - term) <= 5 * sd * term / pi / runs


def test_the_bounds_cover_the_true_gap_after_every_round() -> None:
    """30 tasks at rates from 0.5 to 1, k = 5, four rounds, alpha 0.2 per side (so misses would show): the suite
    gap is below the lower bound, or above the upper one, after some round in at most alpha of the runs, up to an
    exact binomial limit at 1e-6."""
    rates = [0.5, 0.7, 0.8, 0.9, 0.95, 1.0] * 5
    truth = 100 * sum(p - p**5 for p in rates) / len(rates)
    alpha, runs = 0.2, 300
    rng = random.Random(4343)
    low_misses = high_misses = 0
    for run in range(runs):
        outcomes = {
            f"t{i:02d}": {r: "pass" if rng.random() < p else "fail" for r in range(1, 21)} for i, p in enumerate(rates)
        }
        state = gap_rounds(outcomes, 5, 20, 10.0, alpha, run, stop=False)  # every round read, decided or not
        assert len(state.rounds) == 4
        low_misses += any(r.low_pp > truth for r in state.rounds)
        high_misses += any(r.high_pp < truth for r in state.rounds)
    limit = binomial_limit(runs, alpha)
    assert low_misses <= limit and high_misses <= limit


def test_the_rate_term_is_unbiased_whatever_its_prediction_and_stays_in_its_range() -> None:
    from pytest_consistency.stats.suite_sequential import rate_term

    for pi in (1.0, 0.3):
        for prediction in (0.0, 0.4, 1.0):
            for p in (0.0, 0.7, 1.0):
                steps = {x: rate_term(x, prediction, pi) for x in (0.0, 1.0)}
                left_out = rate_term(None, prediction, pi)
                mean = pi * (p * steps[1.0].value + (1 - p) * steps[0.0].value) + (1 - pi) * left_out.value
                assert math.isclose(mean, p, abs_tol=1e-12)
                for step in (*steps.values(), left_out):
                    assert step.low - 1e-12 <= step.value <= step.high + 1e-12
                    assert step.low <= step.prediction <= step.high


def test_the_baseline_bounds_are_exact_at_one_n_and_hoeffding_otherwise() -> None:
    from pytest_consistency.stats.binomial import clopper_pearson
    from pytest_consistency.stats.suite_sequential import baseline_bounds

    exact = clopper_pearson(650, 840, 0.95)
    assert baseline_bounds([(130, 168)] * 5, 0.025) == (exact.low, exact.high)  # pooled 650 of 840
    low, high = baseline_bounds([(5, 5), (3, 10)], 0.025)
    mean = (1.0 + 0.3) / 2
    width = math.sqrt((1 / 5 + 1 / 10) * math.log(40) / 2) / 2
    assert math.isclose(low, mean - width) and math.isclose(high, min(1.0, mean + width))
