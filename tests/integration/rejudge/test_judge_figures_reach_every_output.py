"""A rejudge session's judge figures in the JSON report (each task's on the task: ``tasks[].judge``), in a comparison
(``--consistency-baseline`` and ``pytest-consistency compare``) and on the task spans of its traces; and a report
of the previous schema (report/4: each task's figures in ``summary.judge.tasks[]``) still read by ``merge``,
``compare`` and as a baseline.

``data/rejudged-report-4.json`` was written by the code before the figures moved (``git archive`` of main at
a292e84, this suite's ``TWO_TASKS`` recorded with a steady judge, then re-judged with M = 2 by a judge that says
FAIL with probability 0.4, seed 5): ``test_summary`` passed all 6 samples, ``test_title``'s samples were FP PP PF
(flip rate 2/3, the judge's part of the gap 66.7 of 66.7 pp).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from collector import Collector
from fake_openai import FakeOpenAI
from suites import cli, load_report, run_recorded
from test_rejudge import TWO_TASKS, rejudge, script

OLD = Path(__file__).parent / "data" / "rejudged-report-4.json"
TASKS = ("test_summary.py::test_summary", "test_summary.py::test_title")


def as_rejudged(figures: dict[str, Any]) -> dict[str, Any]:
    """Figures without a votes session's own (``--consistency-judge-votes``), which a rejudge session leaves unset
    and a report of the previous schema does not have."""
    assert figures["votes_asked"] is None and figures["majority_changed"] is None, figures
    return {k: v for k, v in figures.items() if k not in ("votes_asked", "majority_changed")}


def recorded(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """TWO_TASKS recorded (3 repetitions each, a steady judge), its plain report kept as ``plain.json``; the old
    report beside it as ``old.json``."""
    pytester.makepyfile(test_summary=TWO_TASKS)
    script(fake, 0.0, 0)
    assert run_recorded(pytester, fake.base_url, "all").ret == 0
    (pytester.path / "report.json").rename(pytester.path / "plain.json")
    shutil.copy(OLD, pytester.path / "old.json")
    fake.reset()


def test_each_tasks_judge_figures_are_on_the_task_and_the_suites_in_the_summary(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    recorded(pytester, fake)
    script(fake, 0.4, 5)
    assert rejudge(pytester, fake, "once", 2).ret == 0
    report = load_report(pytester)
    assert report["schema"] == "pytest-consistency/report/5"
    assert (
        sorted(report["summary"]["judge"]) == ["samples", "suite", "votes"] and not report["summary"]["judge"]["votes"]
    )
    for task in report["tasks"]:
        assert sorted(task["judge"]) == ["excluded", "figures", "repetitions", "samples"]
        assert task["judge"]["samples"] == 2 and len(task["judge"]["repetitions"]) == 3


def test_a_report_of_the_previous_schema_is_read_by_merge_compare_and_as_a_baseline(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    recorded(pytester, fake)
    old = json.loads(OLD.read_text())
    assert old["schema"] == "pytest-consistency/report/4" and "tasks" in old["summary"]["judge"]
    # merge: the figures recomputed over the old report's samples, written where this version writes them.
    merged = cli("merge", "old.json", "-o", "merged.json", cwd=pytester.path)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    data = load_report(pytester, "merged.json")
    assert "tasks" not in data["summary"]["judge"]
    assert as_rejudged(data["summary"]["judge"]["suite"]) == old["summary"]["judge"]["suite"]
    was = {t["task_id"]: {k: v for k, v in t.items() if k != "task_id"} for t in old["summary"]["judge"]["tasks"]}
    now = {t["task_id"]: {**t["judge"], "figures": as_rejudged(t["judge"]["figures"])} for t in data["tasks"]}
    assert now == was
    # A rejudge session with a steady judge, against the old report as its baseline.
    script(fake, 0.0, 0)
    session = rejudge(pytester, fake, "once", 2, "--consistency-baseline=old.json")
    assert session.ret == 0, session.stdout.str()[-3000:]
    session.stdout.fnmatch_lines(
        [
            "*judge test_summary.py::test_summary: flip rate 0.0 % -> 0.0 % (+0.0 pp); judge's part of the gap 0.0 "
            "of 0.0 pp -> 0.0 of 0.0 pp (+0.0 pp)",
            "*judge test_summary.py::test_title: flip rate 66.7 % -> 0.0 % (-66.7 pp); judge's part of the gap 66.7 "
            "of 66.7 pp -> 0.0 of 0.0 pp (-66.7 pp)",
        ]
    )
    changes = load_report(pytester)["summary"]["comparison"]["judge"]
    assert [(c["task_id"], c["baseline_flip_rate"], c["current_flip_rate"]) for c in changes] == [
        (TASKS[0], 0.0, 0.0),
        (TASKS[1], 2 / 3, 0.0),
    ]
    # compare: the old report first, the session's and the plain recording's after it.
    table = cli("compare", "old.json", "report.json", "plain.json", cwd=pytester.path)
    assert table.returncode == 0, table.stdout + table.stderr
    lines = table.stdout.splitlines()
    assert (
        "report vs old: judge test_summary.py::test_title: flip rate 66.7 % -> 0.0 % (-66.7 pp); judge's part of the "
        "gap 66.7 of 66.7 pp -> 0.0 of 0.0 pp (-66.7 pp)"
    ) in lines
    assert [line for line in lines if line.startswith("plain vs old: ")] == [
        "plain vs old: judge: only the baseline has judge figures (this run is no rejudge session): the judge is "
        "not compared"
    ]
    markdown = cli("compare", "old.json", "report.json", "--format", "markdown", cwd=pytester.path)
    assert "- report vs old: judge test_summary.py::test_title: flip rate 66.7 % → 0.0 % (-66.7 pp)" in markdown.stdout


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector().start()
    yield server
    server.stop()


def test_a_rejudge_sessions_task_spans_carry_the_judge_figures(
    pytester: pytest.Pytester, fake: FakeOpenAI, collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_SERVICE_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "30")
    recorded(pytester, fake)
    script(fake, 0.4, 5)
    session = rejudge(pytester, fake, "once", 2, "--consistency-otel")
    assert session.ret == 0, session.stdout.str()[-3000:]
    heads = {
        s["attributes"]["consistency.task.id"]: s["attributes"] for s in collector.spans if not s["parent_span_id"]
    }
    assert sorted(heads) == list(TASKS)
    for task in load_report(pytester)["tasks"]:
        attributes, judge = heads[task["task_id"]], task["judge"]
        figures = judge["figures"]
        expected: dict[str, Any] = {
            "consistency.task.judge.samples": 2,
            "consistency.task.judge.repetitions": 3,
            "consistency.task.judge.flip_rate": figures["flip_rate"],
            "consistency.task.judge.flip_rate_low": figures["flip_interval"]["low"],
            "consistency.task.judge.flip_rate_high": figures["flip_interval"]["high"],
            "consistency.task.judge.flip_rate_method": figures["flip_method"],
            "consistency.task.judge.gap_observed_pp": figures["observed_gap_pp"],
            "consistency.task.judge.gap_agent_pp": figures["majority_gap_pp"],
            "consistency.task.judge.gap_judge_pp": figures["judge_gap_pp"],
        }
        if figures["kappa"] is not None:
            expected["consistency.task.judge.kappa"] = figures["kappa"]
        if figures["kappa_interval"] is not None:
            expected["consistency.task.judge.kappa_low"] = figures["kappa_interval"]["low"]
            expected["consistency.task.judge.kappa_high"] = figures["kappa_interval"]["high"]
        assert {k: v for k, v in attributes.items() if k.startswith("consistency.task.judge.")} == expected
    # The judge flipped on one task at least: its figures are on its span, not only zeros.
    assert any(a["consistency.task.judge.flip_rate"] > 0 for a in heads.values())
