"""Per-task exact intervals: Interval, Clopper-Pearson, pass^k intervals and the runs needed to certify pass^k."""

from __future__ import annotations

import math
import random

import pytest

from pytest_consistency.stats.binomial import (
    binomial_cdf,
    binomial_sf,
    clopper_pearson,
    one_sided_lower,
    pass_hat_k_interval,
    runs_to_certify,
)

scipy_stats = pytest.importorskip("scipy.stats")


# --- Interval ---------------------------------------------------------------------------------------------------


# --- Clopper-Pearson: reference values from CONTEXT.md --------------------------------------------------------------


def test_clopper_pearson_reference_values() -> None:
    five_of_five = clopper_pearson(5, 5)
    assert five_of_five.low == pytest.approx(0.478, abs=5e-4)
    assert five_of_five.high == 1.0
    four_of_five = clopper_pearson(4, 5)
    assert four_of_five.low == pytest.approx(0.284, abs=5e-4)
    assert four_of_five.high == pytest.approx(0.995, abs=5e-4)
    # A 5/5 task is compatible with a 48 % pass rate.
    assert five_of_five.contains(0.48)


def test_clopper_pearson_closed_forms_at_the_edges() -> None:
    assert clopper_pearson(0, 7).low == 0.0
    assert clopper_pearson(7, 7).high == 1.0
    assert clopper_pearson(7, 7).low == pytest.approx(0.025 ** (1 / 7), abs=1e-15)
    assert clopper_pearson(0, 7).high == pytest.approx(1 - 0.025 ** (1 / 7), abs=1e-15)


def _scipy_cases() -> list[tuple[int, int, float]]:
    cases = [
        (c, n, conf)
        for n in (1, 2, 3, 4, 5, 8, 10, 20, 50, 100, 1000)
        for c in sorted({0, 1, n // 3, n // 2, n - 1, n})
        for conf in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)
    ]
    rng = random.Random(7)
    for _ in range(40):
        n = rng.randint(1, 1000)
        cases.append((rng.randint(0, n), n, rng.choice([0.68, 0.9, 0.95, 0.99])))
    return cases


@pytest.mark.parametrize(("c", "n", "confidence"), _scipy_cases())
def test_clopper_pearson_matches_scipy(c: int, n: int, confidence: float) -> None:
    expected = scipy_stats.binomtest(c, n).proportion_ci(confidence, method="exact")
    got = clopper_pearson(c, n, confidence)
    assert got.low == pytest.approx(expected.low, abs=1e-9)
    assert got.high == pytest.approx(expected.high, abs=1e-9)


@pytest.mark.parametrize(("c", "n", "p"), [(0, 5, 0.3), (3, 5, 0.3), (5, 5, 0.9), (450, 1000, 0.47), (1, 1000, 1e-4)])
def test_binomial_tails_match_scipy(c: int, n: int, p: float) -> None:
    assert binomial_sf(c, n, p) == pytest.approx(scipy_stats.binom.sf(c - 1, n, p), rel=1e-11, abs=1e-300)
    assert binomial_cdf(c, n, p) == pytest.approx(scipy_stats.binom.cdf(c, n, p), rel=1e-11, abs=1e-300)


@pytest.mark.parametrize(("c", "n"), [(0, 10), (3, 10), (10, 10), (68, 68)])
def test_one_sided_lower_matches_scipy(c: int, n: int) -> None:
    expected = scipy_stats.binomtest(c, n, alternative="greater").proportion_ci(0.95, method="exact").low
    assert one_sided_lower(c, n, 0.95) == pytest.approx(expected, abs=1e-9)


# --- pass^k -----------------------------------------------------------------------------------------------------


def test_pass_hat_k_interval_is_the_rate_interval_to_the_kth_power() -> None:
    rate = clopper_pearson(4, 5)
    hat = pass_hat_k_interval(4, 5, 5)
    assert hat.low == pytest.approx(rate.low**5)
    assert hat.high == pytest.approx(rate.high**5)


@pytest.mark.parametrize("n", [1, 3, 5, 10, 50])
def test_all_pass_at_n_equals_k_never_certifies_pass_hat_k(n: int) -> None:
    # With c = n = k the lower bound is a/2 whatever n is.
    assert pass_hat_k_interval(n, n, n).low == pytest.approx(0.025, rel=1e-12)
    assert pass_hat_k_interval(n, n, n).high == 1.0


def test_runs_to_certify_reference_value() -> None:
    assert runs_to_certify(5, 0.8) == 68
    # 68 all-pass runs do certify pass^5 >= 0.8 one-sided at 95 %, 67 do not.
    assert one_sided_lower(68, 68) ** 5 >= 0.8
    assert one_sided_lower(67, 67) ** 5 < 0.8


@pytest.mark.parametrize(("k", "tau", "confidence"), [(1, 0.5, 0.95), (3, 0.9, 0.9), (5, 0.5, 0.99), (10, 0.95, 0.95)])
def test_runs_to_certify_is_the_smallest_sufficient_count(k: int, tau: float, confidence: float) -> None:
    runs = runs_to_certify(k, tau, confidence)
    assert one_sided_lower(runs, runs, confidence) ** k >= tau - 1e-12
    if runs > 1:
        assert one_sided_lower(runs - 1, runs - 1, confidence) ** k < tau
    assert runs == math.ceil(k * math.log(1 - confidence) / math.log(tau) - 1e-12)


# --- invalid input ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("c", "n", "confidence", "message"),
    [
        (6, 5, 0.95, "c must be within"),
        (-1, 5, 0.95, "c must be within"),
        (0, 0, 0.95, "n must be >= 1"),
        (1.0, 5, 0.95, "c must be an int"),
        (True, 5, 0.95, "c must be an int"),
        (1, 5, 1.0, "confidence"),
        (1, 5, 0.0, "confidence"),
        (1, 5, 95, "confidence"),
        (1, 5, math.nan, "confidence"),
    ],
)
def test_clopper_pearson_rejects_invalid_input(c: int, n: int, confidence: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        clopper_pearson(c, n, confidence)


@pytest.mark.parametrize(("k", "tau"), [(0, 0.8), (5, 1.0), (5, 0.0), (5, 1.5), (2.5, 0.8)])
def test_runs_to_certify_rejects_invalid_input(k: int, tau: float) -> None:
    with pytest.raises(ValueError):
        runs_to_certify(k, tau)


def test_pass_hat_k_interval_rejects_bad_k() -> None:
    with pytest.raises(ValueError, match="k must be"):
        pass_hat_k_interval(3, 5, 0)
