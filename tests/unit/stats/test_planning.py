"""Planning: the repetitions a fresh run needs to decide an undecided gate, and to detect a drop with a given power."""

from __future__ import annotations

import math

import pytest

from pytest_consistency.stats.binomial import binomial_pmf
from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.planning import fresh_run_repetitions, power, repetitions_for_drop
from pytest_consistency.stats.significance import minimum_detectable_drop, one_sided_p


def test_fresh_run_repetitions_scales_with_the_square_of_the_ratio() -> None:
    # Half-width 10 pp on the threshold's side, 5 pp from the threshold: needs 4x the repetitions.
    assert fresh_run_repetitions(5, 0.20, Interval(0.10, 0.30), 0.25) == 20
    assert fresh_run_repetitions(5, 0.20, Interval(0.10, 0.30), 0.15) == 20


def test_fresh_run_repetitions_uses_the_side_facing_the_threshold() -> None:
    skewed = Interval(0.60, 1.0)
    assert fresh_run_repetitions(5, 0.9, skewed, 0.8) == math.ceil(5 * (0.3 / 0.1) ** 2 - 1e-9)
    assert fresh_run_repetitions(5, 0.9, skewed, 0.95) == math.ceil(5 * (0.1 / 0.05) ** 2 - 1e-9)


def test_fresh_run_repetitions_edge_cases() -> None:
    assert fresh_run_repetitions(5, 0.2, Interval(0.1, 0.3), 0.5) == 5  # already decided: this run's n
    assert fresh_run_repetitions(5, 0.2, Interval(0.1, 0.3), 0.2) is None  # estimate on the threshold
    assert (
        fresh_run_repetitions(5, 0.2, Interval(0.1, 0.3), 0.3) == 6
    )  # threshold on the edge: at least one more than this run


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 0.2, Interval(0.1, 0.3), 0.25), "n must be"),
        ((5, math.nan, Interval(0.1, 0.3), 0.25), "estimate"),
        ((5, 0.2, (0.1, 0.3), 0.25), "Interval"),
        ((5, 0.2, Interval(0.1, 0.3), math.inf), "threshold"),
    ],
)
def test_fresh_run_repetitions_rejects_invalid_input(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fresh_run_repetitions(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize("test", ["boschloo", "fisher"])
@pytest.mark.parametrize("n", [3, 5, 7])
def test_power_is_the_exact_rejection_probability(test: str, n: int) -> None:
    p1, p2 = 0.9, 0.4
    base, cur = binomial_pmf(n, p1), binomial_pmf(n, p2)
    expected = math.fsum(
        base[x1] * cur[x2] for x1 in range(n + 1) for x2 in range(n + 1) if one_sided_p(test, x1, n, x2, n) <= 0.05
    )
    assert power(n, p1, p2, test=test) == pytest.approx(expected, abs=1e-12)


def test_power_from_a_clean_baseline_matches_the_minimum_detectable_drop() -> None:
    n = 5
    drop = minimum_detectable_drop(n, n)
    assert drop == 3
    assert power(n, 1.0, 0.5) == pytest.approx(sum(binomial_pmf(n, 0.5)[: n - drop + 1]))


def test_repetitions_for_drop() -> None:
    n = repetitions_for_drop(1.0, 0.5)
    assert n == 8
    assert power(n, 1.0, 0.5) >= 0.8 > power(n - 1, 1.0, 0.5)
    assert repetitions_for_drop(1.0, 0.5, test="fisher") == 10
    assert repetitions_for_drop(1.0, 0.2) == 4
    assert repetitions_for_drop(1.0, 0.95, max_n=10) is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0.5, 0.9), "below"),
        ((1.0, 0.5, 1.5), "target_power"),
        ((1.2, 0.5), "p_baseline"),
        ((1.0, 0.5, 0.8, 0.05, "t-test"), "test must be"),
        ((1.0, 0.5, 0.8, 0.0), "alpha"),
    ],
)
def test_repetitions_for_drop_rejects_invalid_input(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        repetitions_for_drop(*args)  # type: ignore[arg-type]
