"""Gates on the point and on their one-sided bounds: pass, fail and undecided, at the family's level, and nothing passes
by accident."""

from __future__ import annotations

from dataclasses import replace

import pytest
from suites import records

from pytest_consistency.analysis.baseline import compare
from pytest_consistency.analysis.gates import (
    ALL_GATES,
    BY_DEST,
    CAUSE_GATES,
    CAUSE_OPTION,
    CAUSE_WORDS,
    GATES,
    Gate,
    decide,
    family_size,
    setting_of,
    thresholds_of,
)
from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.config.options import GATE_OPTIONS
from pytest_consistency.model.cause import CAUSES
from pytest_consistency.model.result import Analysis, SessionSummary
from pytest_consistency.report.terminal import gate_line
from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.metrics import TaskCounts
from pytest_consistency.stats.suite import suite_intervals

GAP = BY_DEST["consistency_gap_max"]
PASS_HAT = BY_DEST["pass_hat_k_min"]


def summary(
    gap: float | None, low: float, high: float, gate_on: str = "bound", inconclusive: str = "fail"
) -> SessionSummary:
    base = build_summary(
        records({"a": "PPFPP", "b": "PPPPP"}), analysis=Analysis(gate_on=gate_on, inconclusive=inconclusive)
    )  # type: ignore[arg-type]
    assert base.intervals is not None
    return replace(base, consistency_gap_pp=gap, intervals=replace(base.intervals, gap_pp=Interval(low, high)))


def test_every_gate_is_an_option_declared_once() -> None:
    assert [o.dest for o in GATE_OPTIONS] == [g.dest for g in GATES] + [CAUSE_OPTION]
    assert len({g.flag for g in ALL_GATES}) == len(ALL_GATES)


def test_one_cause_gate_per_cause_under_one_option() -> None:
    assert CAUSE_WORDS == CAUSES
    assert [g.flag for g in CAUSE_GATES] == [f"--consistency-cause-max={cause}" for cause in CAUSES]
    assert [o.flag for o in GATE_OPTIONS if o.dest == CAUSE_OPTION] == ["--consistency-cause-max"]
    thresholds = thresholds_of({setting_of(CAUSE_OPTION): (("input", 0.0), ("route", 2.5))}.get)
    assert {dest: t for dest, t in thresholds.items() if t is not None} == {
        "cause_input_max": 0.0,
        "cause_route_max": 2.5,
    }


def bounded(gate: Gate, low: float, high: float) -> Gate:
    """The gate with its bounds fixed (whatever the confidence asked), to test the decision alone."""
    return gate.replaced(bounds=lambda summary, confidence: Interval(low, high))


@pytest.mark.parametrize(
    ("low", "high", "state"),
    [
        (2.0, 9.0, "pass"),
        (13.0, 20.0, "fail"),
        (8.0, 16.0, "undecided"),
        (5.0, 12.0, "pass"),
        (12.0, 14.0, "undecided"),
    ],
)
def test_a_max_gate_on_the_bound(low: float, high: float, state: str) -> None:
    result = decide(bounded(GAP, low, high), summary((low + high) / 2, low, high), 12.0)
    assert result.state == state and result.on == "bound"
    assert result.passed is (state == "pass")
    assert result.level == pytest.approx(0.05) and result.interval == Interval(low, high)


def test_an_undecided_gate_plans_a_fresh_run_and_follows_the_policy() -> None:
    failing = decide(bounded(GAP, 6.0, 14.0), summary(10.0, 6.0, 14.0), 12.0)
    assert failing.state == "undecided" and not failing.passed
    # a fresh run's n, larger than this run's: never "N more" to add to this one (optional stopping)
    assert failing.plan_n is not None and failing.plan_n > 5
    assert failing.advice is not None and "fresh run" in failing.advice and "optional stopping" not in failing.advice
    tolerant = decide(bounded(GAP, 6.0, 14.0), summary(10.0, 6.0, 14.0, inconclusive="pass"), 12.0)
    assert tolerant.state == "undecided" and tolerant.passed


def test_the_bounds_are_one_sided_at_the_level_divided_by_the_family() -> None:
    asked: list[float] = []

    def read(s: SessionSummary, confidence: float) -> Interval:
        asked.append(confidence)
        return Interval(0.0, 1.0)

    base = summary(10.0, 6.0, 14.0)
    result = decide(GAP.replaced(bounds=read), base, 12.0, family=4)
    assert asked == [pytest.approx(1 - 2 * 0.05 / 4)]
    assert result.level == pytest.approx(0.0125) and result.family == 4


def test_a_flaky_task_is_certain_evidence_against_a_gap_of_zero() -> None:
    # 19 tasks that always pass and one 4/5: whatever the interval's lower end (0 here), a task that passed and failed
    # has 0 < p < 1, so the gap is above 0 for certain.
    s = build_summary(records({**{f"t{i}": "PPPPP" for i in range(19)}, "f": "PPPPF"}, min_pass=0))
    gate = decide(bounded(GAP, 0.0, 20.0), s, 0.0)
    assert gate.state == "fail"
    steady = build_summary(records({f"t{i}": "PPPPP" for i in range(20)}))
    assert decide(bounded(GAP, 0.0, 20.0), steady, 0.0).state == "undecided"
    assert decide(bounded(PASS_HAT, 50.0, 100.0), s, 100.0).state == "fail"  # one failure: pass^k < 100 %
    assert decide(bounded(PASS_HAT, 50.0, 100.0), steady, 100.0).state == "undecided"


def test_point_mode_ignores_the_interval() -> None:
    result = decide(GAP, summary(10.0, 6.0, 14.0, gate_on="point"), 12.0)
    assert result.state == "pass" and result.on == "point" and result.interval is None


def test_a_min_gate_on_the_bound_needs_the_lower_bound_above() -> None:
    s = replace(summary(10.0, 6.0, 14.0), pass_hat_k=0.9)
    gate = bounded(PASS_HAT, 85.0, 95.0)
    assert decide(gate, s, 80.0).state == "pass"
    assert decide(gate, s, 90.0).state == "undecided"
    assert decide(gate, s, 96.0).state == "fail"


def test_an_unmeasurable_gate_fails_in_both_modes() -> None:
    for mode in ("point", "bound"):
        result = decide(GAP, summary(None, 0.0, 0.0, gate_on=mode), 50.0)
        assert result.state == "fail" and not result.passed and result.value is None


def test_comparison_gates_without_a_baseline_fail_rather_than_pass() -> None:
    s = conclude(build_summary(records({"a": "PPPPP"})), {"consistency_regressions_max": 0, "gap_increase_max": 5})
    assert [g.state for g in s.gates] == ["fail", "fail"] and not s.passed


def test_every_statistical_gate_counts_in_the_family_and_a_fact_does_not() -> None:
    thresholds = {"consistency_gap_max": 12.0, "route_drift_max": 0.0, "consistency_regressions_max": 0}
    bound, point = Analysis(gate_on="bound"), Analysis(gate_on="point")
    assert family_size(bound, thresholds, compared=False) == 2  # the gap and the regressions, not route drift
    assert family_size(bound, thresholds, compared=True) == 3  # and the suite-level test, on with a baseline
    assert family_size(point, thresholds, compared=True) == 2  # the gap on the point is no test at a level
    assert family_size(Analysis(suite_regression=False), thresholds, compared=True) == 2
    assert family_size(bound, {}, compared=False) == 1


def test_the_suite_level_test_is_on_with_a_baseline_off_without_and_required_when_asked() -> None:
    base = build_summary(records({f"t{i}": "PPPPP" for i in range(8)}))
    assert conclude(build_summary(records({"t0": "PPPPP"})), {}).gates == []
    compared = build_summary(records({f"t{i}": "PPPPP" for i in range(8)}))
    compared.comparison = compare(base, compared, "base.json")
    assert [g.option for g in conclude(compared, {}).gates] == ["--consistency-suite-regression"]
    assert compared.passed
    required = build_summary(records({"t0": "PPPPP"}), analysis=Analysis(suite_regression=True))
    (gate,) = conclude(required, {}).gates
    assert gate.state == "fail" and gate.value is None  # not measurable: never passes by accident
    off = build_summary(records({f"t{i}": "PPPPP" for i in range(8)}), analysis=Analysis(suite_regression=False))
    off.comparison = compare(base, off, "base.json")
    assert conclude(off, {}).gates == []


def test_mcnemar_rejects_at_its_p_divided_by_the_family() -> None:
    # 5 flips all one way: McNemar p = 0.03125, below 0.05 alone, above 0.05 / 2 beside the suite-level test.
    base = build_summary(records({f"t{i}": "PPPPP" for i in range(10)}), analysis=Analysis(suite_regression=False))
    worse = {f"t{i}": ("PPPPF" if i < 5 else "PPPPP") for i in range(10)}
    alone = build_summary(records(worse), analysis=Analysis(suite_regression=False))
    alone.comparison = compare(base, alone, "base.json")
    (gate,) = conclude(alone, {"mcnemar_p_min": 0.05}).gates
    assert gate.value == pytest.approx(0.03125) and gate.state == "fail" and gate.level == pytest.approx(0.05)
    both = build_summary(records(worse))
    both.comparison = compare(base, both, "base.json")
    mcnemar = next(g for g in conclude(both, {"mcnemar_p_min": 0.05}).gates if g.name == "mcnemar_p")
    assert mcnemar.level == pytest.approx(0.025) and mcnemar.state == "pass"


def test_a_cause_gate_is_decided_on_the_bounds_of_its_share() -> None:
    """On 6925489 the cause gates compared the share's estimate whatever --consistency-gate-on said."""
    from cause_summaries import cause_summary

    from pytest_consistency.analysis.cause.attribute import share_bounds

    s = cause_summary()
    gate = BY_DEST["cause_input_max"]
    result = decide(gate, s, 10.0, family=2)
    assert result.on == "bound" and result.level == pytest.approx(0.025)
    assert result.interval == share_bounds(s.tasks, "input", 1 - 2 * 0.025, s.analysis.target)
    assert result.value == pytest.approx(16.0)
    assert result.state == (
        "fail" if result.interval.low > 10 else "undecided" if result.interval.high > 10 else "pass"
    )
    point = decide(gate, replace(s, analysis=Analysis(gate_on="point")), 10.0)
    assert point.on == "point" and point.state == "fail"


def test_a_cause_gate_passes_only_on_evidence_that_counts_the_tasks_with_no_cause_named() -> None:
    """Eight tasks 5/5 (no cause named: their repetitions agreed) and two 4/5 of cause "outside the model": the true
    gap of the eight may be this cause's too, so "the share is at most 20 pp" is not shown (it was: the upper end was
    the two tasks' estimate, 16 pp, and a gate at 0.8 x the truth passed 49 % of unchanged agents)."""
    s = build_summary(records({**{f"t{i}": "PPPPP" for i in range(8)}, "a": "PPPPF", "b": "PFPPP"}, min_pass=0))
    assert {t.cause for t in s.tasks} == {None, "outside the model"}
    gate = BY_DEST["cause_outside_the_model_max"]
    result = decide(gate, s, 20.0)
    assert result.interval is not None and result.interval.high > 20.0
    assert result.state == "undecided"


# From test_gates_advice.py:
# Advice that can be followed: with k = n (the default), more repetitions raise k too, so an undecided pass^k or gap
# gate is not decided by a larger n alone; the advice says to pin k, and the n it gives is for a fresh run.
#
# Ten all-pass tasks give pass^k [67.6, 100] % at n = 5, 17 and 320 alike when k follows n; with k pinned at 5 the
# interval narrows (87.8 % at n = 17, 99.4 % at n = 320), which is what the repetition count assumes.


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
