"""The judge's flip rate and Fleiss' kappa (``stats.agreement``)."""

from __future__ import annotations

import random

import pytest

from pytest_consistency.stats.agreement import disagreement, fleiss_kappa, flip_rate, kappa_interval


def test_disagreement_is_the_share_of_sample_pairs_that_disagree() -> None:
    assert disagreement(0, 4) == 0.0 and disagreement(4, 4) == 0.0
    assert disagreement(1, 2) == 1.0
    assert disagreement(2, 4) == pytest.approx(4 / 6)
    with pytest.raises(ValueError):
        disagreement(1, 1)


def test_two_samples_per_repetition_give_the_exact_clopper_pearson_interval() -> None:
    mean, interval, method = flip_rate([(1, 2), (0, 2), (2, 2), (1, 2)])  # type: ignore[misc]
    assert (mean, method) == (0.5, "clopper-pearson")
    assert interval.low == pytest.approx(0.0676, abs=1e-4) and interval.high == pytest.approx(0.9324, abs=1e-4)


def test_more_samples_give_hoeffding_and_subjects_with_fewer_than_two_are_left_out() -> None:
    mean, interval, method = flip_rate([(2, 4), (0, 4), (1, 1)])  # type: ignore[misc]
    assert method == "hoeffding" and mean == pytest.approx(1 / 3)
    assert interval.low == 0.0 and interval.high == 1.0  # two values: Hoeffding says little
    assert flip_rate([(1, 1)]) is None


@pytest.mark.parametrize("q", [0.1, 0.3, 0.5])
def test_a_judge_failing_with_probability_q_flips_at_2q_1_minus_q(q: float) -> None:
    """Seeded draws of a judge failing with probability q, 200 repetitions x 4 samples: the interval holds 2q(1-q)."""
    rng = random.Random(1234)
    subjects = [(sum(rng.random() >= q for _ in range(4)), 4) for _ in range(200)]
    mean, interval, _ = flip_rate(subjects)  # type: ignore[misc]
    truth = 2 * q * (1 - q)
    assert interval.low <= truth <= interval.high
    assert mean == pytest.approx(truth, abs=0.05)


def test_fleiss_kappa() -> None:
    assert fleiss_kappa([(3, 3), (0, 3), (3, 3), (0, 3)]) == 1.0  # every repetition unanimous, both outcomes seen
    assert fleiss_kappa([(3, 3), (3, 3)]) is None  # every sample agreed on one outcome: undefined, never a number
    # Fleiss' worked form for two categories: P = mean agreement, Pe from the pooled shares.
    value = fleiss_kappa([(2, 3), (1, 3), (3, 3)])
    agreement = (1 / 3 + 1 / 3 + 1) / 3
    share = 6 / 9
    expected = share**2 + (1 - share) ** 2
    assert value == pytest.approx((agreement - expected) / (1 - expected))


def test_kappa_interval_is_seeded_and_undefined_when_kappa_is() -> None:
    subjects = [(3, 3), (0, 3), (2, 3), (1, 3), (3, 3), (0, 3)]
    first = kappa_interval(subjects, seed=7)
    assert first is not None and first == kappa_interval(subjects, seed=7)
    interval, _ = first
    assert interval.low <= fleiss_kappa(subjects) <= interval.high  # type: ignore[operator]
    assert kappa_interval([(3, 3), (3, 3)], seed=7) is None


def draws(rng: random.Random, q: float, subjects: int, samples: int) -> tuple[list[tuple[int, int]], list[bool]]:
    """Judge samples failing with probability q: per subject (passes, samples) and whether its first two disagree."""
    counts, pairs = [], []
    for _ in range(subjects):
        verdicts = [rng.random() >= q for _ in range(samples)]
        counts.append((sum(verdicts), samples))
        pairs.append(verdicts[0] != verdicts[1])
    return counts, pairs


def test_the_first_pairs_narrow_hoeffding_where_few_repetitions_make_it_wide() -> None:
    """10 repetitions x 5 samples (the judge example's size): Hoeffding alone spans most of [0, 1]; intersected with
    the first pairs' exact interval (each at half the miss rate) it is narrower, and it still holds the estimate."""
    rng = random.Random(7)
    counts, pairs = draws(rng, 0.3, 10, 5)
    mean, hoeffding, _ = flip_rate(counts)  # type: ignore[misc]
    same, both, method = flip_rate(counts, first_pairs=pairs)  # type: ignore[misc]
    assert method == "hoeffding & first pairs" and same == mean
    assert both.high - both.low < 0.8 * (hoeffding.high - hoeffding.low)
    assert both.low <= mean <= both.high
    with pytest.raises(ValueError):
        flip_rate(counts, first_pairs=[None] * 10)


@pytest.mark.parametrize(("q", "subjects", "samples"), [(0.5, 10, 3), (0.15, 10, 5), (0.3, 40, 5), (0.05, 20, 3)])
def test_the_combined_interval_misses_at_most_alpha(q: float, subjects: int, samples: int) -> None:
    """Coverage by simulation: 2,000 seeded sessions per cell; each end of the 95 % interval may miss at most 2.5 %
    (Bonferroni over the two intervals: the combination is conservative), checked with a binomial margin."""
    rng = random.Random(2026)
    truth = 2 * q * (1 - q)
    low_misses = high_misses = 0
    trials = 2000
    for _ in range(trials):
        counts, pairs = draws(rng, q, subjects, samples)
        _, interval, _ = flip_rate(counts, first_pairs=pairs)  # type: ignore[misc]
        low_misses += interval.low > truth
        high_misses += interval.high < truth
    margin = 3 * (0.025 * 0.975 / trials) ** 0.5
    assert low_misses / trials <= 0.025 + margin and high_misses / trials <= 0.025 + margin
