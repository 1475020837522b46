"""One story in every output: the exit status, the closing line, the JSON report, JUnit (pytest's and show's),
the Markdown summary and merge agree, whatever a session throws at them (unmarked failures among tolerated
tasks, xfails, skips, --maxfail, --last-failed, pytest.exit, collection errors, inconclusive gates,
adaptive mode under xdist, a summary hook that raises). Adversarial round two, part 1.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from suites import cli, load_report, pattern_suite


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


OUT = ["--consistency-report=report.json", "--junitxml=junit.xml", "--consistency-md=summary.md"]


def test_an_unmarked_failure_among_tolerated_tasks_fails_every_output(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a=pattern_suite({"a": "PFP"}, marker="min_pass=0.5"),
        test_b="def test_plain():\n    assert False, 'plain failure'\n",
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_strict_xfail_that_passes_fails_every_output(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.xfail(strict=True, reason="known")
@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    consistency.record("x")
"""
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_non_strict_xfail_task_is_green_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.xfail(reason="known")
@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    consistency.record("x")
    assert False
"""
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 0
    story(pytester, result)


def test_a_skipped_task_with_a_gate_is_not_measurable_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    pytest.skip("no data")
"""
    )
    result = pytester.runpytest("--consistency-gap-max=10", *OUT)
    assert result.ret == 1
    story(pytester, result)


def test_maxfail_with_tolerated_tasks_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "FPPP", "b": "FPPP", "c": "PPPP"}, marker="min_pass=0.5"))
    result = pytester.runpytest("--maxfail=2", *OUT)
    assert result.ret != 0
    story(pytester, result)


def test_last_failed_rerun_of_a_tolerated_task_never_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "PPPF", "b": "FFFF"}, marker="min_pass=0.5"))
    first = pytester.runpytest("-p", "cacheprovider")
    assert first.ret == 1
    result = pytester.runpytest("-p", "cacheprovider", "--lf", *OUT)
    assert result.ret != 0, result.stdout.str()
    story(pytester, result)


def test_pytest_exit_returncode_zero_mid_task_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_task(consistency):
    consistency.record("x")
    if consistency.repeat == 2:
        pytest.exit("stop", returncode=0)
"""
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_collection_error_beside_tolerated_tasks_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a=pattern_suite({"a": "PFP"}, marker="min_pass=0.5"),
        test_broken="import no_such_module_anywhere\n",
    )
    result = pytester.runpytest("--continue-on-collection-errors", *OUT)
    assert result.ret == 1
    story(pytester, result)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_inconclusive_bound_gate_is_one_story(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makepyfile(pattern_suite({"a": "PPPPF", "b": "PPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest("--consistency-gate-on=bound", "--consistency-gap-max=10", *workers, *OUT)
    story(pytester, result)


def test_an_inconclusive_gate_passed_by_option_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "PPPPF", "b": "PPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest(
        "--consistency-gate-on=bound", "--consistency-gap-max=10", "--consistency-inconclusive=pass", *OUT
    )
    story(pytester, result)


def test_adaptive_with_gate_is_one_story_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "FFFFF", "b": "PPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest("--consistency-adaptive", "-n", "2", *OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_summary_hook_that_raises_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
def pytest_consistency_summary(summary, config):
    raise RuntimeError("dashboard down")
"""
    )
    pytester.makepyfile(pattern_suite({"a": "PPP"}))
    result = pytester.runpytest(*OUT)
    story(pytester, result)
