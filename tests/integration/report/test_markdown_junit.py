"""The Markdown job summary and the JUnit XML annotation, in real inner sessions.

Markdown: ``--consistency-md`` writes it, ``$GITHUB_STEP_SUMMARY`` gets it appended (and not with
``--no-consistency-md``), a Markdown parser renders its figures as a table, and ``pytest-consistency show --format
markdown`` prints the same text from the report. JUnit: pytest's own ``--junitxml`` file, serial and under xdist,
has tolerated failures turned into passing testcases that keep the evidence, the consistency properties, the same
verdict as the report, no key, and validates against the Jenkins xunit plugin's junit-10.xsd.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from fake_openai import GOOD_KEY, FakeOpenAI
from markdown_it import MarkdownIt
from suites import junit_props as props
from suites import load_report, pattern_suite, relaxed_schema
from suites import validate_junit as validate

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
PATTERNS = {"steady": "PPPPP", "flaky": "PFPPF", "broken": "FFFPF"}
ANSWERS = {"flaky": ["a", "b", "a", "a", "c|<x>"]}
CLI = Path(sys.executable).with_name("pytest-consistency")


def cases_of(root: ET.Element, task: str) -> list[ET.Element]:
    return [tc for tc in root.iter("testcase") if tc.get("name", "").startswith(f"test_task[{task}-")]


def md_tables(text: str) -> list[list[list[str]]]:
    """Every table of the Markdown as rendered by markdown-it (GFM tables): rows of cell texts."""
    html = MarkdownIt("commonmark").enable("table").render(text)
    tables = []
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
        tables.append(
            [
                [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)]
                for r in rows
            ]
        )
    return tables


def show(report: Path, fmt: str) -> str:
    done = subprocess.run(
        [str(CLI), "show", str(report), "--format", fmt], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout


# --- Markdown ---------------------------------------------------------------------------------------------


def test_markdown_file_step_summary_and_show_agree(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, ANSWERS, marker="min_pass=0.6"))
    step = pytester.path / "step_summary.md"
    step.write_text("## earlier step\n\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    result = pytester.runpytest("--consistency-md=summary.md", "--consistency-report=report.json")
    assert result.ret == 1  # the broken task fails the run
    text = (pytester.path / "summary.md").read_text(encoding="utf-8")
    assert step.read_text(encoding="utf-8") == "## earlier step\n\n" + text
    assert text.startswith("## Consistency: ❌ failed (exit status 1)\n\n> [!CAUTION]\n")
    assert text.index("[!CAUTION]") < text.index("### Figures") < text.index("### Tasks that need a look")
    assert "1 task(s) failed: test\\_task.py::test\\_task\\[broken\\]" in text

    figures, causes, tasks, clusters = md_tables(text)
    assert figures[0] == ["figure", "value", "95 % interval"]
    assert figures[1] == ["Mean@5", "60.0 %", "[32.3, 83.7] %"]
    assert figures[2][:2] == ["pass^5", "33.3 %"] and figures[3][:2] == ["pass@5", "100.0 %"]
    assert figures[4] == ["consistency gap", "26.7 pp", "[2.2, 53.5] pp"]
    assert [row[0] for row in figures[5:]] == ["answer disagreement", "route drift", "tokens"]
    # No task made a model call: both inconsistent tasks part outside the model, which takes the whole gap.
    assert [row[:3] for row in causes] == [
        ["cause", "tasks", "points of the gap"],
        ["outside the model", "2", "26.7 pp"],
        ["all causes", "2", "26.7 pp"],
    ]
    assert causes[0][3] == "95 % interval" and causes[1][3].startswith("[")
    assert [row[:2] for row in tasks[1:]] == [
        ["test_task.py::test_task[broken]", "1/5"],
        ["test_task.py::test_task[flaky]", "3/5"],
    ]
    assert [row[-1] for row in tasks[1:]] == ["outside the model", "outside the model"]
    # The escaped pipe and angle brackets stay inside their cell.
    assert clusters[1:] == [
        ["1", "a", "3", "3", "1, 3, 4"],
        ["2", "b", "1", "0", "2 ✗"],
        ["3", "c|&lt;x&gt;", "1", "0", "5 ✗"],
    ]
    assert "<details><summary>test_task.py::test_task[flaky]: 3 distinct answer(s)" in text

    assert show(pytester.path / "report.json", "markdown") == text

    before = step.read_text(encoding="utf-8")
    pytester.runpytest("--no-consistency-md", "--consistency-report=report.json")
    assert step.read_text(encoding="utf-8") == before


# --- JUnit XML --------------------------------------------------------------------------------------------


@XDIST
def test_junit_tolerated_failures_pass_and_failing_tasks_keep_their_failures(
    pytester: pytest.Pytester, xdist: list[str]
) -> None:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, ANSWERS, marker="min_pass=0.6"))
    result = pytester.runpytest(
        "--junitxml=out.xml", "--consistency-report=report.json", "--consistency-gap-max=90", *xdist
    )
    assert result.ret == 1
    path = pytester.path / "out.xml"
    validate(path)
    root = ET.parse(path).getroot()
    (suite,) = root.findall("testsuite")
    # 15 repetitions and one testcase for the gates (passing here: the gap is within 50 pp)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        "17",
        "5",
        "0",
    )  # + the failed run testcase
    (gates,) = [tc for tc in suite.iter("testcase") if tc.get("name") == "gates"]
    assert gates.get("classname") == "pytest-consistency" and gates.find("failure") is None

    flaky = cases_of(root, "flaky")
    assert len(flaky) == 5 and not any(tc.find("failure") is not None for tc in flaky)
    tolerated = [tc for tc in flaky if tc.find("flakyFailure") is not None]
    assert sorted(props(tc)["consistency.repetition"] for tc in tolerated) == ["2", "5"]
    for tc in tolerated:
        trace = tc.findtext("flakyFailure/stackTrace") or ""
        assert "AssertionError" in trace and props(tc)["consistency.tolerated"] == "true"
    by_rep = {props(tc)["consistency.repetition"]: props(tc) for tc in flaky}
    assert [by_rep[str(i)]["consistency.answer_class"] for i in range(1, 6)] == ["1", "2", "1", "1", "3"]
    first = by_rep["1"]
    assert first["consistency.task_id"] == "test_task.py::test_task[flaky]"
    assert (first["consistency.outcome"], by_rep["2"]["consistency.outcome"]) == ("passed", "failed")
    assert first["consistency.task.passes"] == "3/5" and first["consistency.task.verdict"] == "pass"
    assert float(first["consistency.task.gap_pp"]) == pytest.approx(60.0)
    assert float(first["consistency.task.pass_rate.low"]) == pytest.approx(0.1466, abs=1e-4)
    assert first["consistency.task.distinct_answers"] == "3"

    broken = cases_of(root, "broken")
    failing = [tc for tc in broken if tc.find("failure") is not None]
    assert len(failing) == 4 and not any(tc.find("flakyFailure") is not None for tc in broken)
    assert all(
        props(tc)["consistency.task.verdict"] == "fail" and "consistency.tolerated" not in props(tc) for tc in broken
    )
    assert all("consistency.answer_class" not in props(tc) for tc in broken)  # no answers recorded

    report = load_report(pytester)["summary"]
    s = props(suite)
    assert s["consistency.passed"] == "false" == str(report["passed"]).lower()
    assert s["consistency.exit_status"] == "1" == str(report["exit_status"])
    assert float(s["consistency.gap_pp"]) == pytest.approx(report["consistency_gap_pp"])
    assert float(s["consistency.gap_pp.low"]) == pytest.approx(report["intervals"]["gap_pp"]["low"])
    assert float(s["consistency.gap_pp.high"]) == pytest.approx(report["intervals"]["gap_pp"]["high"])
    assert s["consistency.gate.consistency_gap.option"] == "--consistency-gap-max"
    assert (s["consistency.gate.consistency_gap.state"], s["consistency.gate.consistency_gap.threshold"]) == (
        "pass",
        "90.0",
    )
    assert s["consistency.tolerated_failures"] == "2"

    shown = ET.fromstring(show(pytester.path / "report.json", "junit"))
    (shown_suite,) = shown.findall("testsuite")
    relaxed_schema().validate(shown)
    assert (shown_suite.get("tests"), shown_suite.get("failures")) == ("17", "5")  # + the failed run testcase
    assert props(shown_suite)["consistency.passed"] == "false"
    assert len([tc for tc in shown.iter("testcase") if tc.find("flakyFailure") is not None]) == 2


SETUP_ERROR = """
import pytest

@pytest.fixture
def shaky(consistency):
    if consistency.repeat == 2:
        raise RuntimeError("setup broke")

@pytest.mark.repeat_consistency(n=4, min_pass=0)
def test_task(shaky, consistency):
    assert consistency.repeat != 3
"""


@XDIST
def test_junit_min_pass_zero_run_has_no_failures_left(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makepyfile(test_task=SETUP_ERROR)
    result = pytester.runpytest("--junitxml=out.xml", "--consistency-report=report.json", *xdist)
    assert result.ret == 0
    path = pytester.path / "out.xml"
    validate(path)
    root = ET.parse(path).getroot()
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "0", "0")  # no gate set
    cases = {props(tc)["consistency.repetition"]: tc for tc in root.iter("testcase")}
    assert not any(tc.find("failure") is not None or tc.find("error") is not None for tc in cases.values())
    assert "setup broke" in (cases["2"].findtext("flakyError/stackTrace") or "")
    assert props(cases["2"])["consistency.outcome"] == "error"
    assert "assert 3 != 3" in (cases["3"].findtext("flakyFailure/stackTrace") or "")
    assert props(suite)["consistency.passed"] == "true" == str(load_report(pytester)["summary"]["passed"]).lower()


PINNED = """
import os
import pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_task(pinned_client, consistency):
    reply = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    consistency.record(reply.choices[0].message.content)
    assert consistency.repeat != 2, "failed with key " + os.environ["OPENAI_API_KEY"]
"""


def test_junit_with_a_pinned_route_carries_no_key(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nconsistency_record = off\n")
    pytester.makepyfile(test_task=PINNED)
    result = pytester.runpytest(
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        "--consistency-report=report.json",
        "--junitxml=out.xml",
        "--route-drift-max=0",
    )
    assert result.ret == 0
    path = pytester.path / "out.xml"
    text = path.read_text(encoding="utf-8")
    assert GOOD_KEY not in text
    assert "failed with key <redacted>" in ET.parse(path).getroot().findtext(".//flakyFailure/stackTrace", "")
    validate(path)
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    s: dict[str, Any] = props(suite)
    assert s["consistency.route_drift_pp"] == "0.0" and s["consistency.gate.route_drift.state"] == "pass"
    assert int(s["consistency.total_tokens"]) > 0


def test_a_run_that_only_a_gate_failed_is_red_on_a_test_dashboard(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite({"flaky": "PFPFP"}, marker="min_pass=0"))
    result = pytester.runpytest("--junitxml=out.xml", "--consistency-gap-max=10")
    assert result.ret == 1
    path = pytester.path / "out.xml"
    validate(path)
    (suite,) = ET.parse(path).getroot().findall("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("6", "1")
    (gates,) = [tc for tc in suite.iter("testcase") if tc.get("name") == "gates"]
    failure = gates.find("failure")
    assert failure is not None
    message = failure.get("message") or ""
    assert message.startswith("gate --consistency-gap-max: consistency gap 60.0 pp, one-sided bounds [")
    assert message.endswith("] > 10.0 pp  FAILED (level 0.05)")


def test_outputs_written_after_a_hook_raised_carry_its_error(pytester: pytest.Pytester) -> None:
    """The report data is redacted once and reused; an error that arrives later must still reach every output."""
    pytester.makeconftest(
        "def pytest_consistency_summary(summary, config):\n    raise RuntimeError('dashboard is down')\n"
    )
    pytester.makepyfile(test_task=pattern_suite({"a": "PPP"}))
    result = pytester.runpytest("--consistency-report=report.json", "--consistency-md=summary.md")
    assert result.ret == 1  # a hook that raises is an error: it fails the run, as a merge of the report would
    assert any("dashboard is down" in e for e in load_report(pytester)["summary"]["errors"])
    assert "dashboard is down" in (pytester.path / "summary.md").read_text(encoding="utf-8")
