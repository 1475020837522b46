"""Why a repetition failed travels with it: the report, JUnit, Markdown and the HTML page keep a short message."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from suites import cli, load_report

SUITE = """
import pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0.5)
def test_task(consistency):
    answer = ["12 items", "12 items", "none found"][consistency.repeat - 1]
    consistency.record(answer)
    assert "items" in answer, f"the agent found nothing: {answer!r}"
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_failure_message_is_in_every_output(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makepyfile(SUITE)
    result = pytester.runpytest(
        "--consistency-report=report.json", "--consistency-md=summary.md", "--consistency-html=page.html", *workers
    )
    assert result.ret == 0  # 2 of 3 passed, min_pass 0.5: the task met its threshold
    rep3 = load_report(pytester)["tasks"][0]["repetitions"][2]
    assert rep3["outcome"] == "failed" and "the agent found nothing: 'none found'" in rep3["message"]
    assert all(r["message"] is None for r in load_report(pytester)["tasks"][0]["repetitions"][:2])
    markdown = (pytester.path / "summary.md").read_text()
    assert "why 1 repetition(s) failed" in markdown and "the agent found nothing" in markdown
    assert "the agent found nothing" in (pytester.path / "page.html").read_text()
    junit = cli("show", "report.json", "--format", "junit", cwd=pytester.path)
    cases = {tc.get("name"): tc for tc in ET.fromstring(junit.stdout).iter("testcase")}
    flaky = cases["test_task[rep3]"].find("flakyFailure")
    assert flaky is not None and "the agent found nothing" in str(flaky.get("message"))
    assert "tolerated (met min_pass 0.5, 1 failed)" in str(flaky.get("message"))
