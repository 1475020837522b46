"""``pytest-consistency plan`` on a saved report: the plain table, the typed JSON plan (schema, round trip), the
report found through ``report:`` in consistency.yaml, and bad input as one usage error naming the file or option."""

from __future__ import annotations

import json

import pytest
from suites import cli, pattern_suite

from pytest_consistency.analysis.plan import Plan
from pytest_consistency.model.serial import from_data
from pytest_consistency.stats.rate import decided_probability, planning_n

PATTERNS = {"steady": "PPPPPPPPPP", "shaky": "PPPPPPPPPF", "broken": "FFFFFFFFFF"}


@pytest.fixture
def saved(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_rate=0.8"))
    pytester.runpytest("--consistency-report=report.json", "-p", "no:randomly")
    assert (pytester.path / "report.json").is_file()
    return pytester


def test_the_plan_of_a_saved_report(saved: pytest.Pytester) -> None:
    done = cli("plan", "report.json", "--consistency-gap-max=50", cwd=saved.path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0] == "consistency plan from report.json: fixed n (alpha 0.05), concurrency 1"
    shaky = next(line for line in lines if line.startswith("test_task.py::test_task[shaky]")).split()
    # 9/10 against 0.8 at n = 10: no count passes (0.8^10 = 0.107 > 0.05), so 0 %; n = 82 would decide it.
    assert shaky[3:7] == ["9/10", "10", "0.0%", "82"]
    assert any(line.startswith("gate --consistency-gap-max 50: last run") for line in lines)
    assert lines[-1].startswith("total: 30.0 repetitions")


def test_the_json_plan_is_the_typed_plan(saved: pytest.Pytester) -> None:
    done = cli("plan", "report.json", "--format", "json", "--consistency-confidence=0.9", cwd=saved.path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["schema"] == "pytest-consistency/plan/1"
    plan = from_data(Plan, data["plan"])  # every field typed: nothing built by hand
    assert plan.alpha == pytest.approx(0.1)
    by_id = {t.task_id: t for t in plan.tasks}
    shaky = by_id["test_task.py::test_task[shaky]"]
    assert shaky.decided == decided_probability(10, 0.9, 0.8, 0.1)
    assert shaky.n_to_decide == planning_n(9, 10, 0.8, 0.1)
    assert set(data["plan"]["tasks"][0]) >= {"task_id", "decided", "n_to_decide", "expected_usd", "expected_minutes"}


def test_the_report_named_in_the_yaml_file(saved: pytest.Pytester) -> None:
    (saved.path / "runs").mkdir()
    (saved.path / "report.json").rename(saved.path / "runs" / "last.json")
    (saved.path / "consistency.yaml").write_text("report: runs/last.json\n")
    done = cli("plan", cwd=saved.path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("consistency plan from runs/last.json:")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("plan",), "no report to plan from: pass the last run's JSON report (pytest-consistency plan REPORT)"),
        (("plan", "missing.json"), "missing.json does not exist"),
        (("plan", "bad.json"), "bad.json:1: not valid JSON"),
    ],
    ids=["no-report", "missing", "corrupt"],
)
def test_bad_input_is_one_usage_error(pytester: pytest.Pytester, args: tuple[str, ...], message: str) -> None:
    (pytester.path / "bad.json").write_text('{"schema": ')
    done = cli(*args, cwd=pytester.path)
    assert done.returncode == 2  # the CLI's usage status, as merge, show and compare
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("pytest-consistency plan: error: ")
    assert message in done.stderr
