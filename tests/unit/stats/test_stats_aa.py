"""A/A and power simulations for the per-task regression gate: Boschloo per task, Benjamini-Hochberg across tasks.

A/A: two independent runs of the same agent (T = 20 tasks, true pass rates from a fixed mix, n repetitions each);
a session pair is a false alarm when any task gets q <= 0.05. BH controls the false discovery rate, which under the
global null equals the chance of any false flag, so the rate must stay <= 0.05 (+ 3 Monte Carlo standard errors).
Power: the same, with one always-passing task degraded to p = 0.2 in the current run. At n = 5 that task is flagged
only about a third of the time: a lone signal among 20 tasks needs p <= 0.05 / 20 = 0.0025, and only 5/5 -> 0/5
(Boschloo p = 1/1024) gets there, with probability 0.8^5 = 0.33. At n = 10 a drop to 4/10 or below suffices
(p = 0.0018), with probability 0.97.
"""

from __future__ import annotations

import math
import random

import pytest

from pytest_consistency.stats.significance import benjamini_hochberg, boschloo_one_sided

MIX = [1.0] * 8 + [0.9] * 4 + [0.7] * 4 + [0.5] * 2 + [0.2] * 2
REPS = 1000
Q = 0.05


def flagged(rng: random.Random, n: int, baseline_p: list[float], current_p: list[float]) -> list[bool]:
    base = [sum(rng.random() < p for _ in range(n)) for p in baseline_p]
    cur = [sum(rng.random() < p for _ in range(n)) for p in current_p]
    qvalues = benjamini_hochberg([boschloo_one_sided(b, n, c, n) for b, c in zip(base, cur, strict=True)])
    return [q <= Q for q in qvalues]


def rate(hits: int) -> float:
    return hits / REPS


@pytest.mark.parametrize("n", [5, 10])
def test_a_a_runs_rarely_flag_any_regression(n: int) -> None:
    rng = random.Random(2024 + n)
    false_alarms = sum(any(flagged(rng, n, MIX, MIX)) for _ in range(REPS))
    floor = Q + 3 * math.sqrt(Q * (1 - Q) / REPS)
    assert rate(false_alarms) <= floor, rate(false_alarms)


@pytest.mark.parametrize(("n", "expected", "low", "high"), [(5, 0.8**5, 0.28, 0.42), (10, 0.967, 0.9, 1.0)])
def test_one_degraded_task_is_flagged(n: int, expected: float, low: float, high: float) -> None:
    rng = random.Random(7 + n)
    degraded = list(MIX)
    degraded[0] = 0.2  # an always-passing task now passes 20 % of the time
    hits = sum(flagged(rng, n, MIX, degraded)[0] for _ in range(REPS))
    assert low <= rate(hits) <= high, (rate(hits), expected)
