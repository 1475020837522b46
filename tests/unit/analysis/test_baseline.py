"""Baseline comparison: classification, exact per-task tests with Benjamini–Hochberg, confounding, route changes."""

from __future__ import annotations

from dataclasses import replace

import pytest
from suites import records

from pytest_consistency.analysis.baseline import compare
from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.result import Analysis, RouteSettings, RunFacts, SessionSummary

STEADY = {f"s{i}": "PPPPP" for i in range(4)}


def run(patterns: dict[str, str], test: str = "boschloo") -> SessionSummary:
    return build_summary(records(patterns), analysis=Analysis(test=test))  # type: ignore[arg-type]


def change(comparison, task_id):  # type: ignore[no-untyped-def]
    return next(c for c in comparison.tasks if c.task_id == task_id)


def test_a_drop_from_5_of_5_to_0_of_5_among_five_tasks_is_a_regression_with_its_p_value() -> None:
    result = compare(run({**STEADY, "t": "PPPPP"}), run({**STEADY, "t": "FFFFF"}), "base.json")
    t = change(result, "t")
    assert t.status == "newly failing" and t.regression
    assert t.p_value == pytest.approx(0.5**10, rel=1e-9)  # Boschloo: the worst nuisance value is 1/2
    assert t.q_value == pytest.approx(t.p_value * 5)  # BH: smallest of five p-values, times five
    assert result.regressions == 1 and result.flips_worse == 1 and result.flips_better == 0


def test_a_drop_from_5_of_5_to_1_of_5_is_significant_alone_but_not_among_five() -> None:
    alone = compare(run({"t": "PPPPP"}), run({"t": "PFFFF"}), "base.json")
    assert change(alone, "t").p_value == pytest.approx(0.01074, abs=1e-5) and change(alone, "t").regression
    among = compare(run({**STEADY, "t": "PPPPP"}), run({**STEADY, "t": "PFFFF"}), "base.json")
    assert change(among, "t").q_value == pytest.approx(0.0537, abs=1e-4) and not change(among, "t").regression


def test_fisher_is_more_conservative_on_the_same_counts() -> None:
    result = compare(run({"t": "PPPPP"}, "fisher"), run({"t": "PPFFF"}, "fisher"), "base")
    assert change(result, "t").p_value == pytest.approx(0.083, abs=1e-3)
    assert not change(result, "t").regression and result.minimum_detectable_drop == 4
    boschloo = compare(run({"t": "PPPPP"}), run({"t": "PPFFF"}), "base")
    assert change(boschloo, "t").p_value == pytest.approx(0.0309, abs=1e-4) and change(boschloo, "t").regression
    assert boschloo.minimum_detectable_drop == 3


def test_benjamini_hochberg_keeps_a_lone_borderline_drop_among_many_tasks_unflagged() -> None:
    steady = {f"s{i}": "PPPPP" for i in range(19)}
    result = compare(run({**steady, "t": "PPPPP"}), run({**steady, "t": "PPFFF"}), "base")
    assert change(result, "t").p_value == pytest.approx(0.0309, abs=1e-4)
    assert not change(result, "t").regression and result.regressions == 0


def test_identical_runs_never_regress() -> None:
    patterns = {**STEADY, "f": "PFPFP", "z": "FFFFF"}
    result = compare(run(patterns), run(patterns), "base")
    assert result.regressions == 0 and result.gap_change_pp == 0
    assert {c.status for c in result.tasks} == {"unchanged", "still flaky"}
    assert result.gap_change_interval is not None and result.gap_change_interval.contains(0.0)


@pytest.mark.parametrize(
    ("before", "after", "status"),
    [
        ("PPPPP", "PFPPP", "newly failing"),  # min_pass 1: a failure fails the task
        ("PFPPP", "PPPPP", "recovered"),
        ("PFPFP", "FPFPP", "still flaky"),
        ("FFFFF", "FFFFF", "unchanged"),
        ("PPPPP", "PPPPP", "unchanged"),
        ("FFFFF", "FPFFF", "newly flaky"),
    ],
)
def test_classification(before: str, after: str, status: str) -> None:
    assert change(compare(run({"t": before}), run({"t": after}), "b"), "t").status == status


def test_new_and_removed_tasks() -> None:
    result = compare(run({"old": "PPPPP", "both": "PPPPP"}), run({"both": "PPPPP", "new": "PPPPP"}), "b")
    assert change(result, "old").status == "removed" and change(result, "new").status == "new"
    assert result.common_tasks == 1


def test_route_drift_marks_a_task_confounded_and_route_changes_are_listed() -> None:
    route = RouteSettings("http://a/v1", "m", "sha256:1", "K", False, 60.0, 1, 0.0, None, 1)
    base_reps = records({"t": "PPPPP"})
    now_reps = records({"t": "PFFFF"})
    for i, rep in enumerate(now_reps):
        model = "m" if i else "m-fallback"
        rep.calls = [CallRecord("POST", "http://a/v1/chat", "http://a/v1", "sha256:1", "m", model, status=200)]
    baseline = build_summary(base_reps, run=RunFacts(route=route))
    current = build_summary(now_reps, run=RunFacts(route=replace(route, model="m2", temperature=0.7)))
    result = compare(baseline, current, "b")
    t = change(result, "t")
    assert t.regression and t.confounded
    assert "model: m -> m2" in result.route_changes and "temperature: 0.0 -> 0.7" in result.route_changes


def test_a_baseline_that_shares_no_task_says_it_is_another_suites() -> None:
    """It printed '0 tasks in both runs; 0 significant regressions' and nothing else, as if all were well."""
    result = compare(run({"test_a.py::one": "PPPPP"}), run({"test_b.py::two": "PPPPP"}), label="base.json")
    assert result.common_tasks == 0
    assert any("shares no task with this run" in note and "'test_a.py::one'" in note for note in result.notes)
    overlapping = compare(run({"one": "PPPPP", "two": "PPPPP"}), run({"two": "PPPPP"}), label="base.json")
    assert not any("shares no task" in note for note in overlapping.notes)
