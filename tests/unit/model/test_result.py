"""The report model round-trips: ``from_dict(to_dict(x)) == x``, through real JSON, for every kind of field."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from suites import records, route_settings

from pytest_consistency.analysis.baseline import compare
from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.result import SCHEMA, Analysis, RouteSettings, RunFacts, SessionSummary, TokenBudget
from pytest_consistency.model.serial import ReportFormatError

ROUTE: RouteSettings = route_settings()


def rich_summary() -> SessionSummary:
    """A summary with every optional part filled: route, calls, answers, budget, comparison, gates."""
    reps = records({"a": "PPFPP", "b": "PPPPP", "c": "FF-FF"}, answers={"a": ["x", "x", {"y": [1, 2.5]}, "x", "x"]})
    url, key = ROUTE.base_url + "/chat/completions", "sha256:abcdef12"
    reps[0].calls = [
        CallRecord(
            "POST",
            url,
            ROUTE.base_url,
            key,
            "m",
            "m",
            status=200,
            total_tokens=12,
            gateway={"x-litellm-model-id": "d1"},
        ),
        CallRecord("POST", url, ROUTE.base_url, key, "m", None, status=429, retry_index=1),
    ]
    run = RunFacts(route=ROUTE, record_mode="once", token_budget=TokenBudget(100, 12), interrupted=True)
    summary = build_summary(reps, run=run, analysis=Analysis(gate_on="bound", target="population"))
    summary.comparison = compare(build_summary(records({"a": "PPPPP", "b": "PPPPP"})), summary, "base.json")
    conclude(summary, {"consistency_gap_max": 10.0, "route_drift_max": 0.0, "consistency_regressions_max": 0})
    summary.exit_status = 1
    return summary


def test_round_trip_through_json() -> None:
    summary = rich_summary()
    data = json.loads(json.dumps(summary.to_dict(), allow_nan=False))
    assert data["schema"] == SCHEMA
    assert SessionSummary.from_dict(data) == summary
    assert summary.route is not None and summary.comparison is not None and summary.intervals is not None


def test_round_trip_of_an_empty_session() -> None:
    summary = build_summary([])
    assert SessionSummary.from_dict(json.loads(json.dumps(summary.to_dict()))) == summary


def test_a_report_of_another_schema_is_refused_by_name() -> None:
    data = rich_summary().to_dict()
    data["schema"] = "pytest-consistency/report/2"
    with pytest.raises(ReportFormatError, match=r"schema 'pytest-consistency/report/2', this version reads"):
        SessionSummary.from_dict(data, where="old.json")


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (None, "x.json: not a pytest-consistency report (no schema, a report's is 'pytest-consistency/report/"),
        ("other/1", "x.json: not a pytest-consistency report (schema 'other/1'"),
        ("pytest-consistency/report/99", "x.json: written by a newer pytest-consistency"),
    ],
)
def test_a_json_that_is_not_a_report_or_is_newer_is_not_told_to_re_run(schema: str | None, message: str) -> None:
    """Re-running with this version cannot help a file that is no report, or a report from a later version; the
    message said to, whatever the schema was."""
    data = {"summary": {}, "tasks": []} if schema is None else {"schema": schema, "summary": {}, "tasks": []}
    with pytest.raises(ReportFormatError) as raised:
        SessionSummary.from_dict(data, where="x.json")
    assert str(raised.value).startswith(message) and "re-run" not in str(raised.value), raised.value


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["summary"].pop("task_count"), r"missing field task_count"),
        (lambda d: d["summary"].update(surprise=1), r"unknown field\(s\) surprise"),
        (lambda d: d["summary"].update(task_count="3"), r"report\.task_count: '3' is not a int"),
        (lambda d: d["tasks"][0].update(verdict="great"), r"tasks\[0\]\.verdict: 'great' is not one of"),
        (lambda d: d["tasks"][0]["repetitions"][0]["calls"][0].update(status=True), r"calls\[0\]\.status"),
    ],
)
def test_a_damaged_report_names_the_field(edit, message: str) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(json.dumps(rich_summary().to_dict()))
    edit(data)
    with pytest.raises(ReportFormatError, match=message):
        SessionSummary.from_dict(data)


def test_equal_summaries_differ_when_one_figure_does() -> None:
    summary = rich_summary()
    other = SessionSummary.from_dict(summary.to_dict())
    assert replace(other, consistency_gap_pp=(other.consistency_gap_pp or 0) + 1e-9) != summary


def test_a_report_of_schema_3_is_read_as_this_version_writes_it() -> None:
    """report/3 called an undecided gate "inconclusive", kept "more_repetitions" (to ADD: optional stopping) and a
    two-sided interval, and had no way to switch the suite-level test off (false was its default)."""
    summary = build_summary(records({"a": "PPFPP", "b": "PPPPP"}))
    conclude(summary, {"consistency_gap_max": 12})
    data = json.loads(json.dumps(summary.to_dict()))
    data["schema"] = "pytest-consistency/report/3"
    gate = data["summary"]["gates"][0]
    gate.update(state="inconclusive", more_repetitions=44, advice="about 44 more repetitions per task would likely")
    gate.pop("level"), gate.pop("family"), gate.pop("plan_n")
    data["summary"]["analysis"]["suite_regression"] = False
    read = SessionSummary.from_dict(data, where="old.json")
    (old,) = read.gates
    assert old.state == "undecided" and old.advice is None and old.interval is None and old.plan_n is None
    assert read.analysis.suite_regression is None
