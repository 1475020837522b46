"""Calibration of the suite-level regression tests, by seeded simulation (pytest_consistency.stats.power).

A/A: two runs of the same agent (the A/A mix of test_stats_aa.py); the stratified test must fire at most alpha = 5 %
of the time (+ 3 Monte Carlo standard errors), at 20 and 100 tasks. Power: 20 tasks at n = 5 with every pass rate
x 0.8, the case the per-task gate misses: the stratified test fires about 88 % of the time, McNemar on pass^n flips
about 84 %, per-task Boschloo with Benjamini-Hochberg about 2 %. The full table is in docs/baselines.md
(scripts/power_table.py).
"""

from __future__ import annotations

import math

import pytest

from pytest_consistency.stats.power import simulate

MIX = [1.0] * 8 + [0.9] * 4 + [0.7] * 4 + [0.5] * 2 + [0.2] * 2
ALPHA = 0.05


def ceiling(reps: int) -> float:
    return ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


@pytest.mark.parametrize(("t", "n", "reps"), [(20, 5, 2000), (20, 10, 600), (100, 5, 200)])
def test_a_a_false_alarm_rate_is_at_most_alpha(t: int, n: int, reps: int) -> None:
    rates = MIX * (t // len(MIX))
    result = simulate(rates, rates, n, reps=reps, seed=t + n)
    assert result.stratified <= ceiling(reps), result
    assert result.mcnemar <= ceiling(reps), result
    assert result.per_task <= ceiling(reps), result


def test_a_uniformly_worse_agent_is_caught_by_the_suite_tests_and_missed_per_task() -> None:
    result = simulate(MIX, [p * 0.8 for p in MIX], 5, reps=1000, seed=8)
    assert 0.82 <= result.stratified <= 0.93, result
    assert 0.78 <= result.mcnemar <= 0.90, result
    assert result.per_task <= 0.06, result


def test_one_collapsed_task_is_what_the_per_task_test_is_for() -> None:
    degraded = [0.2, *MIX[1:]]
    result = simulate(MIX, degraded, 10, reps=500, seed=1)
    assert result.per_task >= 0.9, result  # exact: 0.967 (a drop to 4/10 or below, see test_stats_aa.py)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="one rate per task"):
        simulate([0.5], [0.5, 0.5], 5)
    with pytest.raises(ValueError, match="within"):
        simulate([1.5], [0.5], 5)
    with pytest.raises(ValueError, match="test must be"):
        simulate([0.5], [0.5], 5, test="t")
