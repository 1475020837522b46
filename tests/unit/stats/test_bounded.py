"""The mean of graded outcomes in [0, 1] and its Hoeffding interval (``stats.bounded``)."""

from __future__ import annotations

import math
import random

import pytest

from pytest_consistency.stats.bounded import hoeffding_halfwidth, mean_interval


def test_the_half_width_is_hoeffdings() -> None:
    # sqrt(ln(2 / 0.05) / (2 * 5)) = sqrt(ln 40 / 10)
    assert hoeffding_halfwidth(5) == pytest.approx(math.sqrt(math.log(40) / 10)) == pytest.approx(0.6074, abs=1e-4)
    assert hoeffding_halfwidth(250) == pytest.approx(0.0859, abs=1e-4)
    with pytest.raises(ValueError):
        hoeffding_halfwidth(0)


def test_the_interval_is_clipped_to_the_unit_interval_and_none_for_no_value() -> None:
    mean, interval = mean_interval([1.0, 1.0, 0.9]) or (None, None)
    assert mean == pytest.approx(0.9667, abs=1e-4)
    assert interval is not None and interval.high == 1.0 and interval.low == pytest.approx(mean - 0.7841, abs=1e-4)
    assert mean_interval([]) is None


@pytest.mark.parametrize("means", [[0.5] * 8, [0.9, 0.95, 0.85, 0.92], [0.1, 0.5, 0.9, 0.7, 0.3]])
def test_it_covers_the_mean_of_tasks_with_different_score_distributions(means: list[float]) -> None:
    """Seeded: tasks whose scores follow Beta laws with these means (one per task), 5 repetitions each; the interval
    holds the average of the task means in at least 95 % of 2,000 suites (Hoeffding needs no identical laws)."""
    rng = random.Random(44)
    target = sum(means) / len(means)
    covered = 0
    for _ in range(2000):
        scores = [rng.betavariate(4 * m, 4 * (1 - m)) for m in means for _ in range(5)]
        _, interval = mean_interval(scores) or (None, None)
        assert interval is not None
        covered += interval.low <= target <= interval.high
    assert covered / 2000 >= 0.95
