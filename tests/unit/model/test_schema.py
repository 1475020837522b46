"""The JSON report's schema (model/schema.py): report/5 keeps each task's judge figures on the task and the suite's
in the summary, and reads report/4, which kept them in ``summary.judge.tasks[]``."""

from __future__ import annotations

import json

import pytest
from suites import records

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.result import SessionSummary
from pytest_consistency.model.schema import SCHEMA
from pytest_consistency.model.serial import ReportFormatError


def judged_summary() -> SessionSummary:
    """A rejudge session's summary: two tasks of 2 recorded repetitions x 2 judge samples."""
    from pytest_consistency.analysis.judge import judge_summary

    reps = records({"a": "PFPP", "b": "FFPF"})
    summary = build_summary(reps)
    summary.judge = judge_summary(reps, samples=2)
    return summary


def test_each_tasks_judge_figures_are_written_on_the_task_and_the_suites_in_the_summary() -> None:
    summary = judged_summary()
    assert summary.judge is not None
    data = json.loads(json.dumps(summary.to_dict(), allow_nan=False))
    assert data["schema"] == SCHEMA == "pytest-consistency/report/5"
    assert sorted(data["summary"]["judge"]) == ["samples", "suite", "votes"]  # no copy of the tasks' figures here
    for task, judged in zip(data["tasks"], summary.judge.tasks, strict=True):
        assert sorted(task["judge"]) == ["excluded", "figures", "repetitions", "samples"]  # task_id: the task's own
        assert task["judge"]["figures"]["flip_rate"] == judged.figures.flip_rate
        assert [r["verdicts"] for r in task["judge"]["repetitions"]] == [r.verdicts for r in judged.repetitions]
    assert SessionSummary.from_dict(data) == summary


def test_a_report_of_schema_4_with_the_judge_figures_in_the_summary_is_read_as_this_version_writes_it() -> None:
    """report/4 kept each task's judge figures in ``summary.judge.tasks[]`` (with their task_id)."""
    summary = judged_summary()
    data = json.loads(json.dumps(summary.to_dict()))
    data["schema"] = "pytest-consistency/report/4"
    data["summary"]["judge"]["tasks"] = [{"task_id": t["task_id"], **t.pop("judge")} for t in data["tasks"]]
    assert SessionSummary.from_dict(data, where="old.json") == summary
    data["summary"]["judge"]["tasks"][1]["task_id"] = "gone"
    with pytest.raises(ReportFormatError, match=r"old.json: summary.judge.tasks\[1\] \('gone'\) is no task"):
        SessionSummary.from_dict(data, where="old.json")


def test_a_current_report_with_the_judge_figures_in_the_summary_is_refused_naming_where_they_go() -> None:
    data = json.loads(json.dumps(judged_summary().to_dict()))
    data["summary"]["judge"]["tasks"] = []
    with pytest.raises(ReportFormatError, match=r"new.json.judge: unknown field\(s\) tasks .*tasks\[\]\.judge"):
        SessionSummary.from_dict(data, where="new.json")
    data = json.loads(json.dumps(judged_summary().to_dict()))
    data["tasks"][0]["judge"] = [1]
    with pytest.raises(ReportFormatError, match=r"new.json.tasks\[0\].judge: expected a mapping"):
        SessionSummary.from_dict(data, where="new.json")
