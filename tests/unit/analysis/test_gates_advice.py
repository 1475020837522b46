"""Advice that can be followed: with k = n (the default), more repetitions raise k too, so an undecided pass^k or gap
gate is not decided by a larger n alone; the advice says to pin k, and the n it gives is for a fresh run.

Ten all-pass tasks give pass^k [67.6, 100] % at n = 5, 17 and 320 alike when k follows n; with k pinned at 5 the
interval narrows (87.8 % at n = 17, 99.4 % at n = 320), which is what the repetition count assumes.
"""

from __future__ import annotations

import pytest
from suites import records

from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.result import Analysis
from pytest_consistency.report.terminal import gate_line
from pytest_consistency.stats.metrics import TaskCounts
from pytest_consistency.stats.suite import suite_intervals

BOUND = Analysis(gate_on="bound")


@pytest.mark.parametrize("n", [5, 17, 320])
def test_with_k_equal_to_n_more_repetitions_do_not_narrow_pass_hat_k(n: int) -> None:
    following = suite_intervals([TaskCounts(n, n, n)] * 10)
    pinned = suite_intervals([TaskCounts(n, n, 5)] * 10)
    assert following is not None and pinned is not None
    assert round(following.pass_hat_k.low * 100, 1) == 67.6
    assert pinned.pass_hat_k.low >= following.pass_hat_k.low
    if n > 5:
        assert pinned.pass_hat_k.low > 0.84


def test_an_inconclusive_pass_hat_k_gate_at_k_equal_to_n_says_to_pin_k() -> None:
    summary = conclude(
        build_summary(records({f"t{i}": "PPPPP" for i in range(10)}), analysis=BOUND), {"pass_hat_k_min": 80}
    )
    (gate,) = summary.gates
    assert gate.state == "undecided"
    assert gate.advice is not None and "pin" in gate.advice and "k=5" in gate.advice
    text = gate_line(gate, summary).text
    assert "pin k (repeat_consistency(n=..., k=5)) and plan a fresh run at n = " in text
    assert "with k = n, more repetitions raise k too" in text


def test_with_k_pinned_below_n_the_count_stands_alone() -> None:
    summary = conclude(
        build_summary(records({f"t{i}": "PPPPPPPP" for i in range(10)}, k=5), analysis=BOUND), {"pass_hat_k_min": 90}
    )
    (gate,) = summary.gates
    assert gate.state == "undecided" and gate.plan_n is not None and gate.plan_n > 8
    assert gate.advice is not None and "pin k" not in gate.advice
    assert f"a fresh run at n = {gate.plan_n} per task would likely decide it" in gate_line(gate, summary).text


def test_gates_not_scored_at_k_get_no_advice() -> None:
    summary = conclude(
        build_summary(records({f"t{i}": "PPPPP" for i in range(10)}), analysis=BOUND), {"route_drift_max": 0}
    )
    assert all(g.advice is None for g in summary.gates)


def test_with_mixed_n_the_plan_is_a_factor_of_each_tasks_n_and_k_following_n_is_still_pinned() -> None:
    reps = records({f"a{i}": "P" * 10 for i in range(5)}) + records({f"b{i}": "PPPPF" for i in range(5)})
    summary = conclude(build_summary(reps, analysis=BOUND), {"consistency_gap_max": 30})
    (gate,) = summary.gates
    assert summary.repeat is None and gate.state == "undecided"
    assert gate.plan_n is None  # no one n: the tasks ran 10 and 5
    assert gate.advice is not None and "pin k (repeat_consistency(n=..., k=5/10))" in gate.advice
    assert "a fresh run with every task's n times " in gate.advice
