"""pytest's report text redacted in place (``plugin.failure_text``), by the session's redactor."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_consistency.plugin.carried import has_text
from pytest_consistency.plugin.failure_text import redact_report
from pytest_consistency.secrets.literals import redactor
from pytest_consistency.secrets.names import REDACTED

KEY = "sk-test-unit-key-0123456789abcdef"


def _failed_report() -> pytest.TestReport:
    try:
        answer = f"gadget {KEY} gw-token-1"
        assert "widget" in answer
    except AssertionError as exc:
        info = pytest.ExceptionInfo.from_exception(exc)
    longrepr = info.getrepr(showlocals=True, style="long")
    return pytest.TestReport(
        "t.py::test",
        ("t.py", 1, "test"),
        {},
        "failed",
        longrepr,
        "call",
        sections=[("Captured stdout call", f"said {KEY}\n")],
        user_properties=[("answer", f"gw-token-1 {KEY}"), ("count", 3)],
    )


def test_a_reports_text_is_redacted_in_place_and_keeps_its_structure() -> None:
    report = _failed_report()
    assert has_text(report) and KEY in report.longreprtext and "gw-token-1" in report.longreprtext
    redact_report(report, redactor(["gw-token-1"]))
    text = report.longreprtext
    assert KEY not in text and "gw-token-1" not in text and REDACTED in text
    crash = getattr(report.longrepr, "reprcrash", None)
    assert crash is not None and KEY not in crash.message and "gw-token-1" not in crash.message
    assert report.sections == [("Captured stdout call", f"said {REDACTED}\n")]
    assert report.user_properties == [("answer", f"{REDACTED} {REDACTED}"), ("count", 3)]


def test_a_skip_reason_tuple_is_redacted() -> None:
    report = pytest.TestReport("t.py::t", ("t.py", 1, "t"), {}, "skipped", ("t.py", 1, f"no {KEY}"), "setup")
    redact_report(report, redactor())
    assert report.longrepr == ("t.py", 1, f"no {REDACTED}")


# From test_junit_tmp.py:
# x


LATE = "gw-late-token-5e5e6f6f"


def test_junits_file_is_redacted_in_its_texts_and_attributes(tmp_path: Path) -> None:
    from pytest_consistency.plugin.failure_text import redact_junit
    from pytest_consistency.secrets.literals import redactor

    path = tmp_path / "junit.xml"
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest"><testcase name="t">'
        f'<properties><property name="answer" value="got {LATE}" /></properties>'
        f'<failure message="failed &amp; {LATE}">E   {LATE}</failure><system-out>{LATE}</system-out>'
        "</testcase></testsuite></testsuites>"
    )
    assert redact_junit(path, redactor([LATE], shapes=False))
    text = path.read_text()
    assert LATE not in text and 'value="got &lt;redacted&gt;"' in text and "failed &amp; &lt;redacted&gt;" in text
    assert not redact_junit(path, redactor([LATE], shapes=False))
