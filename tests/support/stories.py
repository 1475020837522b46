"""What the integration tests of one story share: every output's verdict of a session (``story``), the exit status
and the report's (``one_story``), a report's figures without what differs run to run (``figures``), and the
sessions they run."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from suites import cli, load_report, pattern_suite

OUT = ["--consistency-report=report.json", "--junitxml=junit.xml", "--consistency-md=summary.md"]

STEADY = {f"steady{i}": "PPPPP" for i in range(4)}
BASELINE = {**STEADY, "target": "PPPPP", "flaky": "PFPPF"}


def closing_line(result: pytest.RunResult) -> str:
    return next(line for line in reversed(result.stdout.lines) if re.search(r" in [0-9.]+s", line))


def junit_failing(path: Path) -> list[str]:
    root = ET.parse(path).getroot()
    return [
        str(tc.get("name"))
        for tc in root.iter("testcase")
        if tc.find("failure") is not None or tc.find("error") is not None
    ]


def story(pytester: pytest.Pytester, result: pytest.RunResult, report: str = "report.json") -> dict[str, Any]:
    """Every output's verdict of one session: they must agree with the exit status."""
    data = load_report(pytester, report)
    ok = result.ret == 0
    assert data["summary"]["passed"] is ok, (result.ret, data["summary"])
    assert data["summary"]["exit_status"] == result.ret, (result.ret, data["summary"]["exit_status"])
    line = closing_line(result)
    if not ok:
        assert "failed" in line or "error" in line or "interrupted" in line, line
    out = result.stdout.str()
    if (pytester.path / "junit.xml").exists():
        failing = junit_failing(pytester.path / "junit.xml")
        assert bool(failing) is (not ok), (failing, result.ret)
    show = cli("show", report, "--format", "junit", cwd=pytester.path)
    if show.returncode in (0, 1) and show.stdout.strip().startswith("<"):
        cases = [
            tc
            for tc in ET.fromstring(show.stdout).iter("testcase")
            if tc.find("failure") is not None or tc.find("error") is not None
        ]
        assert bool(cases) is (not ok), show.stdout
    if (pytester.path / "summary.md").exists():
        md = (pytester.path / "summary.md").read_text()
        assert ("❌" in md) is (not ok), md[:800]
    merged = cli("merge", report, "-o", "merged.json", cwd=pytester.path)
    assert (merged.returncode == 0) is ok, (result.ret, merged.returncode, merged.stdout, merged.stderr, out[-1500:])
    return data


def session(pytester: pytest.Pytester, patterns: dict[str, str], *args: str, report: str = "report.json", **kw: Any):  # type: ignore[no-untyped-def]
    pytester.makepyfile(test_task=pattern_suite(patterns, kw.get("answers"), marker=kw.get("marker", "min_pass=0")))
    return pytester.runpytest(f"--consistency-report={report}", *args)


def one_story(ret: int, report: dict[str, Any]) -> None:
    """Exit status, ``summary.passed`` and ``summary.exit_status`` tell one story."""
    summary = report["summary"]
    assert summary["exit_status"] == int(ret), (summary["exit_status"], ret)
    assert summary["passed"] is (int(ret) == 0), (summary["passed"], ret)


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """Every figure and per-task field, without wall-clock values and what a merge legitimately re-decides."""
    summary = {k: v for k, v in report["summary"].items() if k not in ("warnings", "exit_status", "passed", "gates")}
    summary["run"] = {k: v for k, v in summary.get("run", {}).items() if k != "run_id"}
    tasks = []
    for task in report["tasks"]:
        reps = []
        for rep in task["repetitions"]:
            calls = [{k: v for k, v in c.items() if k not in ("latency_ms", "started_at")} for c in rep["calls"]]
            reps.append({**rep, "duration": 0, "started": None, "stopped": None, "calls": calls})
        tasks.append({**task, "repetitions": reps})
    return {"summary": summary, "tasks": tasks}
