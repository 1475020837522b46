"""Retry plugins never hide a first failure, under xdist either. Adversarial round two, part 4."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from suites import cli, load_report


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


def test_reruns_never_hide_a_first_failure_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

SEEN = {}

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency, request):
    key = consistency.repeat
    SEEN[key] = SEEN.get(key, 0) + 1
    consistency.record("x")
    assert not (key == 2 and SEEN[key] == 1)
"""
    )
    result = pytester.runpytest("--reruns=2", "-n", "2", *OUT)
    assert result.ret == 1, result.stdout.str()
    data = story(pytester, result)
    assert data["tasks"][0]["repetitions"][1]["outcome"] == "failed"
