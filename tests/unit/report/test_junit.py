"""JUnit XML without a session: the standalone rendering of a summary, and the annotation of a file shaped like
the one pytest writes (junit_prefix, record_property, a failure and a teardown error in one testcase)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from cause_summaries import SECRET as CAUSE_SECRET
from cause_summaries import cause_summary, redacted
from suites import records, validate_junit

from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.result import SessionSummary
from pytest_consistency.report import builtin
from pytest_consistency.report.junit import _mangle, annotate, render

SCHEMA = Path(__file__).parents[2] / "schemas" / "junit-10.xsd"
SECRET = "sk-test-0123456789abcdefghijklmnopqrstuv"


def summary_of(patterns: dict[str, str], min_pass: float = 0.6) -> SessionSummary:
    summary = conclude(build_summary(records(patterns, {"a": ["x", "y", "x", "x", "y"]}, min_pass=min_pass)), {})
    summary.exit_status = 0 if summary.passed else 1
    return summary


def props(element: ET.Element) -> dict[str, str]:
    node = element.find("properties")
    assert node is not None
    return {p.get("name", ""): p.get("value", "") for p in node.findall("property")}


def strip_testcase_properties(root: ET.Element) -> ET.Element:
    for testcase in root.iter("testcase"):
        for node in testcase.findall("properties"):
            testcase.remove(node)
    return root


def test_the_builtin_junit_format() -> None:
    fmt = builtin("junit")
    assert fmt is not None and (fmt.name, fmt.suffix) == ("junit", ".xml")


@pytest.mark.parametrize(
    ("nodeid", "expected"),
    [
        ("test_task.py::test_task[a-rep1]", ("test_task", "test_task[a-rep1]")),
        ("tests/sub/test_x.py::TestC::test_y[a::b-rep2]", ("tests.sub.test_x.TestC", "test_y[a::b-rep2]")),
        ("test_x.py::test_z[\x07-rep1]", ("test_x", "test_z[#x07-rep1]")),
    ],
)
def test_testcase_names_are_those_pytest_writes(nodeid: str, expected: tuple[str, str]) -> None:
    assert _mangle(nodeid) == expected


def test_standalone_rendering_tolerates_what_the_verdict_tolerates() -> None:
    summary = summary_of({"a": "PFPPF", "b": "FFFFP", "c": "PPSPP"})
    root = ET.fromstring(render(summary))
    (suite,) = root.findall("testsuite")
    assert [suite.get(k) for k in ("tests", "failures", "errors", "skipped")] == [
        "16",
        "5",
        "0",
        "1",
    ]  # + the failed run testcase
    cases = {tc.get("name"): tc for tc in suite.iter("testcase")}
    a2 = cases["test_task[a-rep2]"]
    assert a2.find("failure") is None and a2.find("flakyFailure") is not None
    assert props(a2)["consistency.tolerated"] == "true" and props(a2)["consistency.answer_class"] == "2"
    assert cases["test_task[b-rep1]"].find("failure") is not None
    assert props(cases["test_task[b-rep1]"])["consistency.task.verdict"] == "fail"
    assert cases["test_task[c-rep3]"].find("skipped") is not None
    assert props(suite)["consistency.passed"] == "false" and props(suite)["consistency.exit_status"] == "1"
    schema = xmlschema.XMLSchema(SCHEMA)
    schema.validate(strip_testcase_properties(root))


def test_an_interrupted_run_tolerates_nothing() -> None:
    summary = summary_of({"a": "PFPPF"})
    summary.run = type(summary.run)(interrupted=True)
    root = ET.fromstring(render(summary))
    assert len(root.findall(".//failure")) == 2 and not root.findall(".//flakyFailure")


PYTEST_XML = """<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" \
errors="1" failures="3" skipped="0" tests="6" time="0.1" timestamp="2025-01-01T00:00:00" hostname="h">\
<testcase classname="ci.test_task" name="test_task[a-rep1]" time="0.001"><properties><property name="mine" \
value="1"/></properties></testcase>\
<testcase classname="ci.test_task" name="test_task[a-rep2]" time="0.001"><failure message="assert 0 KEY">trace KEY\
</failure><error message="failed on teardown with &quot;RuntimeError&quot;">teardown trace</error></testcase>\
<testcase classname="ci.test_task" name="test_task[a-rep3]" time="0.001"/>\
<testcase classname="ci.test_task" name="test_task[b-rep1]" time="0.001"><failure message="assert 0">t</failure>\
</testcase>\
<testcase classname="ci.test_task" name="test_task[b-rep2]" time="0.001"><failure message="assert 0">t</failure>\
</testcase>\
<testcase classname="ci.test_other" name="test_unrelated" time="0.001"/>\
</testsuite></testsuites>"""


def test_annotate_rewrites_pytests_file(tmp_path: Path) -> None:
    summary = conclude(build_summary(records({"a": "PFP", "b": "FF"}, min_pass=0.5)), {"consistency_gap_max": 50})
    path = tmp_path / "out.xml"
    path.write_text(PYTEST_XML.replace("KEY", SECRET), encoding="utf-8")
    annotate(path, summary, [SECRET])
    text = path.read_text(encoding="utf-8")
    assert text.startswith('<?xml version="1.0" encoding="utf-8"?>') and SECRET not in text
    root = ET.fromstring(text)
    suite = root.find("testsuite")
    assert suite is not None
    assert [suite.get(k) for k in ("tests", "failures", "errors")] == ["8", "3", "0"]  # + the gates and run testcases
    cases = {tc.get("name"): tc for tc in suite.iter("testcase")}
    assert props(cases["test_task[a-rep1]"])["mine"] == "1"  # record_property kept, ours appended
    assert props(cases["test_task[a-rep1]"])["consistency.outcome"] == "passed"
    a2 = cases["test_task[a-rep2]"]
    assert a2.find("failure") is None and a2.find("error") is None
    assert a2.findtext("flakyFailure/stackTrace") == "trace <redacted>"
    assert a2.find("flakyFailure") is not None and a2.find("flakyFailure").get("message").endswith(
        "): assert 0 <redacted>"
    )  # type: ignore[union-attr]
    assert a2.findtext("flakyError/stackTrace") == "teardown trace"
    assert props(a2)["consistency.tolerated"] == "true"
    assert all(cases[f"test_task[b-rep{i}]"].find("failure") is not None for i in (1, 2))
    assert cases["test_unrelated"].find("properties") is None
    s = props(suite)
    assert (
        s["consistency.gate.consistency_gap.state"] == "pass"
        and float(s["consistency.gap_pp"]) == summary.consistency_gap_pp
    )
    schema = xmlschema.XMLSchema(SCHEMA)
    schema.validate(strip_testcase_properties(root))


def test_annotate_refuses_what_is_not_xml(tmp_path: Path) -> None:
    path = tmp_path / "out.xml"
    path.write_text("<testsuites", encoding="utf-8")
    with pytest.raises(ET.ParseError):
        annotate(path, summary_of({"a": "PPPPP"}), [])
    assert path.read_text(encoding="utf-8") == "<testsuites"


def test_a_standalone_rendering_escapes_what_xml_cannot_hold() -> None:
    """``show --format junit``: control characters and lone surrogates in a task id are not XML 1.0 characters,
    and a file holding them is refused by every JUnit reader (and a surrogate cannot even be written as UTF-8)."""
    task = "bell\x07-esc\x1b[31m-nul\x00-fs\udcff"
    summary = conclude(build_summary(records({task: "PFPPF"})), {})
    text = render(summary)
    root = ET.fromstring(text.encode("utf-8"))
    names = [case.get("name") for case in root.iter("testcase")]
    assert "test_task[bell#x07-esc#x1B[31m-nul#x00-fs#xDCFF-rep2]" in names
    messages = [f.get("message") for f in root.iter("failure")]
    assert any("bell#x07-esc#x1B[31m-nul#x00-fs#xDCFF" in (m or "") for m in messages)


def test_the_cause_of_each_task_and_the_gap_by_cause_are_properties(tmp_path: Path) -> None:
    summary = redacted(cause_summary(CAUSE_SECRET), CAUSE_SECRET)
    text = render(summary)
    path = tmp_path / "junit.xml"
    path.write_text(text, encoding="utf-8")
    validate_junit(path)
    root = ET.fromstring(text)
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    shown = props(suite)
    causes = {name: value for name, value in shown.items() if name.startswith("consistency.cause.")}
    assert {name: value for name, value in causes.items() if not name.endswith((".low", ".high"))} == {
        "consistency.cause.input.gap_pp": "16.0",
        "consistency.cause.input.tasks": "1",
        "consistency.cause.environment.gap_pp": "8.0",
        "consistency.cause.environment.tasks": "1",
        "consistency.cause.sampling.gap_pp": "12.0",
        "consistency.cause.sampling.tasks": "1",
        "consistency.cause.outside_the_model.gap_pp": "0.0",
        "consistency.cause.outside_the_model.tasks": "1",
    }  # a cause no task has (route) is not listed
    assert summary.causes is not None
    for cause in ("input", "environment", "sampling", "outside the model"):  # the interval, exact, beside the share
        interval, name = summary.causes[cause].interval, f"consistency.cause.{cause.replace(' ', '_')}.gap_pp"
        assert interval is not None
        assert (causes[f"{name}.low"], causes[f"{name}.high"]) == (repr(interval.low), repr(interval.high))
    by_task: dict[str, dict[str, str]] = {}
    for case in root.iter("testcase"):
        mine = props(case)
        by_task.setdefault(mine["consistency.task_id"], mine)
    causes = {t: (p.get("consistency.task.cause"), p.get("consistency.task.cause.step")) for t, p in by_task.items()}
    assert causes == {
        "sampled": ("sampling", "1"),
        "clock": ("input", "1"),
        "search": ("environment", "2"),
        "answers": ("outside the model", "n/a"),
        "steady": (None, None),
    }
    assert by_task["clock"]["consistency.task.cause.line"].startswith("input at step 1: the first requests differ")
    assert CAUSE_SECRET not in text and "&lt;redacted&gt; Now: 09:11" in text
