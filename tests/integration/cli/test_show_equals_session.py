"""pytest-consistency show prints what the session printed: the baseline comparison, an inconclusive gate,
warnings and errors.
"""

from __future__ import annotations

from typing import Any

import pytest
from suites import cli, consistency_section, load_report, pattern_suite, session_only

STEADY = {f"steady{i}": "PPPPP" for i in range(4)}


BASELINE = {**STEADY, "target": "PPPPP", "flaky": "PFPPF"}


DEGRADED = {**STEADY, "target": "FFFFF", "flaky": "PFPPF"}


def session(pytester: pytest.Pytester, patterns: dict[str, str], *args: str, report: str = "report.json", **kw: Any):  # type: ignore[no-untyped-def]
    pytester.makepyfile(test_task=pattern_suite(patterns, kw.get("answers"), marker=kw.get("marker", "min_pass=0")))
    return pytester.runpytest(f"--consistency-report={report}", *args)


def one_story(ret: int, report: dict[str, Any]) -> None:
    """Exit status, ``summary.passed`` and ``summary.exit_status`` tell one story."""
    summary = report["summary"]
    assert summary["exit_status"] == int(ret), (summary["exit_status"], ret)
    assert summary["passed"] is (int(ret) == 0), (summary["passed"], ret)


def _show_equals_session(pytester: pytest.Pytester, result: Any, name: str = "report.json") -> None:
    shown = cli("show", name, cwd=pytester.path)
    assert shown.returncode == 0, shown.stderr
    printed = [line for line in consistency_section(result) if not session_only(line)]
    assert shown.stdout.splitlines() == printed


def test_show_prints_the_baseline_comparison_and_an_undecided_gate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    session(pytester, BASELINE, report="base.json")
    result = session(
        pytester,
        {**DEGRADED, "a-very-long-task-identifier-that-needs-shortening-to-fit-in-eighty-columns": "PPFPP"},
        "--consistency-baseline=base.json",
        "--consistency-regressions-max=0",
        "--gap-increase-max=5",
        "--consistency-gap-max=20",
        answers={"flaky": ["x", "y", "x", "x", "ü"]},
    )
    report = load_report(pytester)
    one_story(result.ret, report)
    assert "undecided" in [g["state"] for g in report["summary"]["gates"]]
    _show_equals_session(pytester, result)


def test_show_prints_warnings_and_errors(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    (pytester.path / "base.json").write_text("[1, 2")
    pytester.makepyfile(
        test_task="""
import pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_task(consistency, tmp_path_factory):
    flag = tmp_path_factory.getbasetemp() / f"flag{consistency.repeat}"
    if not flag.exists():
        flag.write_text("")
        assert consistency.repeat == 2
"""
    )
    result = pytester.runpytest(
        "--consistency-report=report.json", "--consistency-baseline=base.json", "--reruns=1", "-p", "rerunfailures"
    )
    report = load_report(pytester)
    one_story(result.ret, report)
    assert report["summary"]["warnings"] and report["summary"]["errors"]
    _show_equals_session(pytester, result)
