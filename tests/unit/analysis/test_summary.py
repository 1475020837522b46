"""build_summary is a pure function of the repetition records: known figures, verdicts and the adaptive case."""

from __future__ import annotations

import pytest
from suites import published_patterns, records, route_settings

from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.result import RunFacts


def test_published_figures_from_records() -> None:
    summary = build_summary(records(published_patterns()))
    assert summary.task_count == 168 and summary.repeat == summary.k == 5
    assert round(summary.consistency_gap_pp or 0, 1) == 24.4
    assert summary.intervals is not None and summary.intervals.gap_pp.contains(summary.consistency_gap_pp or 0)


def test_the_same_records_give_the_same_summary() -> None:
    reps = records({"a": "PPFPP", "b": "FFFFF"}, answers={"a": ["x", "y", "x", "x", "x"]})
    assert build_summary(reps) == build_summary(list(reversed(reps)))


def test_verdicts_and_incomplete_tasks() -> None:
    summary = build_summary(records({"a": "PPPPP", "b": "PFPPP", "c": "PP-PP", "d": "SSSSS"}))
    assert [t.verdict for t in summary.tasks] == ["pass", "fail", "incomplete", "skipped"]
    assert summary.task_count == 2 and summary.tasks[1].pass_rate_interval is not None
    assert summary.tasks[2].pass_rate_interval is None


def test_min_pass_tolerates_failures_and_conclude_passes() -> None:
    summary = conclude(build_summary(records({"a": "PFPPP"}, min_pass=0.8)), {})
    assert summary.tasks[0].verdict == "pass" and summary.tasks[0].tolerated_failures == 1 and summary.passed


def test_other_failures_fail_the_summary_whatever_the_figures() -> None:
    summary = conclude(build_summary(records({"a": "PPPPP"}), run=RunFacts(other_failures=1)), {})
    assert not summary.passed


@pytest.mark.parametrize(("pattern", "verdict", "scored"), [("FCCCC", "fail", 1), ("PPPFC", "fail", 4)])
def test_a_curtailed_task_keeps_the_verdict_of_its_decided_repetitions(pattern: str, verdict: str, scored: int) -> None:
    reps = records({"a": pattern.replace("C", "P")})
    for rep, mark in zip(reps, pattern, strict=True):
        if mark == "C":
            rep.outcome = "curtailed"
    task = build_summary(reps, run=RunFacts(adaptive_n_min=1)).tasks[0]
    assert (task.verdict, task.scored, task.curtailed) == (verdict, scored, 5 - scored)


def test_the_pass_hat_k_curve_runs_from_k_1_to_n_and_is_kept_in_the_report() -> None:
    summary = build_summary(records({"a": "PPPPF", "b": "PPPPP", "c": "FFFFF"}))
    assert summary.pass_hat_k_curve == pytest.approx(
        [(0.8 + 1) / 3, (0.6 + 1) / 3, (0.4 + 1) / 3, (0.2 + 1) / 3, 1 / 3]
    )
    assert summary.pass_hat_k_curve[-1] == pytest.approx(summary.pass_hat_k)  # k = n: the marker's pass^k
    assert summary.to_dict()["summary"]["pass_hat_k_curve"] == summary.pass_hat_k_curve
    from pytest_consistency.report.terminal import render

    lines = [line.text for line in render(summary, width=200)]
    assert "pass^k for k = 1..5: 60.0 53.3 46.7 40.0 33.3 %" in lines
    assert build_summary(records({"a": "PPP", "b": "PPPPP"})).pass_hat_k_curve is None  # no common n


# From test_summary_recorded_key.py:
# The key a replay compares with: the one key its cassettes were recorded on, never an unpinned call's own key.
#
# A replay has no key of its own, so ``summary.route_facts`` pins the route to the key the cassettes were recorded
# on. Pinned calls recorded before cassettes kept that key (no ``route_key``) count with the key they were sent
# with, so a suite recorded on two keys has no one key to judge every task against; but an unpinned call with
# another key is the drift itself, and must neither pick the key nor stop one from being picked.


BASE = "http://127.0.0.1:9/v1"


def call(key: str, route_key: str | None = None, pinned: bool = True) -> CallRecord:
    return CallRecord(
        "POST", BASE + "/chat/completions", BASE, key, "m", model_served="m", status=200,
        replayed=True, route_key=route_key, pinned=pinned,
    )  # fmt: skip


def drift_of(calls_per_task: dict[str, list[CallRecord]]) -> dict[str, list[str]]:
    reps = records({task: "P" for task in calls_per_task})
    for rep in reps:
        rep.calls = calls_per_task[rep.task_id]
    summary = build_summary(reps, run=RunFacts(route=route_settings(key_fingerprint=None), record_mode="none"))
    return {task.task_id: task.drift.kinds for task in summary.tasks}


def test_an_unpinned_call_with_another_key_is_drift_against_the_recorded_key() -> None:
    kinds = drift_of(
        {
            "a": [call("sha256:aaaa1111", route_key="sha256:aaaa1111")],
            "b": [call("sha256:bbbb2222", pinned=False)],  # the agent's own client, on another key
        }
    )
    assert kinds["a"] == [] and "key" in kinds["b"], kinds


def test_a_suite_recorded_on_two_keys_judges_each_task_alone() -> None:
    kinds = drift_of(
        {
            "old": [call("sha256:aaaa1111")],  # recorded before cassettes kept the route's key
            "new": [call("sha256:bbbb2222", route_key="sha256:bbbb2222")],
        }
    )
    assert kinds == {"old": [], "new": []}
