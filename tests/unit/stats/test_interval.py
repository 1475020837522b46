"""The interval type every statistic returns (stats.interval): its ends, its checks, its immutability."""

from __future__ import annotations

import math

import pytest

from pytest_consistency.stats.interval import Interval


def test_interval_contains_both_ends_and_width() -> None:
    interval = Interval(0.25, 0.75)
    assert interval.contains(0.25) and interval.contains(0.75) and interval.contains(0.5)
    assert not interval.contains(0.2) and not interval.contains(0.8)
    assert interval.width == 0.5
    assert Interval(1.0, 1.0).width == 0.0


@pytest.mark.parametrize(("low", "high"), [(0.6, 0.5), (math.nan, 1.0), (0.0, math.inf)])
def test_interval_rejects_reversed_or_non_finite_ends(low: float, high: float) -> None:
    with pytest.raises(ValueError, match="interval"):
        Interval(low, high)


def test_interval_is_immutable() -> None:
    interval = Interval(0.0, 1.0)
    with pytest.raises(AttributeError):
        interval.low = 0.5  # type: ignore[misc]
