"""A short key in a failure message is never written to any output. Adversarial round two, part 5."""

from __future__ import annotations

import json
import re

import pytest
from suites import RETRY_PLUGIN, cli, load_report

OUT = ["--consistency-report=report.json", "--junitxml=junit.xml", "--consistency-md=summary.md"]


@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
def test_a_short_key_in_a_failure_message_is_never_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "sk-1234")
    pytester.makepyfile(
        f"""
import os, pytest

@pytest.mark.repeat_consistency(n=2, min_pass=0.5)
def test_task(consistency):
    consistency.record("x")
    assert consistency.repeat == 1, "the agent used key " + os.environ[{variable!r}] + " and failed"
"""
    )
    result = pytester.runpytest(*OUT, "--consistency-html=page.html", "-rA", "-vv")
    texts = {"stdout": result.stdout.str() + result.stderr.str()}
    for name in ("report.json", "junit.xml", "summary.md", "page.html"):
        texts[name] = (pytester.path / name).read_text()
    texts["show-junit"] = cli("show", "report.json", "--format", "junit", cwd=pytester.path).stdout
    texts["show"] = cli("show", "report.json", cwd=pytester.path).stdout
    leaks = [name for name, text in texts.items() if re.search(r"(?<![\w-])sk-1234(?![\w-])", text)]
    assert leaks == []
    assert "the agent used key" in json.dumps(load_report(pytester))


RETRY_LOGGING_PLUGIN = (
    RETRY_PLUGIN.format(outcome="retried")
    + """


def pytest_runtest_logreport(report):
    # A plugin that keeps every report's text (as pytest-reportlog does), reading it at logreport.
    with open("reports.log", "a") as handle:
        handle.write(f"{report.outcome}: {report.longreprtext}\\n")
"""
)


def test_a_report_a_retry_plugin_logs_itself_is_redacted_too(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30 moved the redaction of pytest's text to ``pytest_runtest_logreport`` (a plain ``tryfirst`` hook
    instead of an outermost ``makereport`` wrapper): a report that a retry plugin logs from its own ``makereport``
    wrapper is redacted before any plugin reads it too. The wrapper redacted it only after the retry plugin had
    logged it (the conftest's wrapper, registered first, runs inside it)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-retry-1234")
    pytester.makeconftest(RETRY_LOGGING_PLUGIN)
    pytester.makepyfile(
        """
import os, pathlib

def test_plain():
    marker = pathlib.Path("failed-once")
    if not marker.exists():
        marker.write_text("x")
        assert False, "the agent used key " + os.environ["OPENAI_API_KEY"]
"""
    )
    result = pytester.runpytest("--junitxml=junit.xml", "-rA", "-vv", "-p", "no:rerunfailures")
    texts = {
        "stdout": result.stdout.str() + result.stderr.str(),
        "junit": (pytester.path / "junit.xml").read_text(),
        "reports.log": (pytester.path / "reports.log").read_text(),
    }
    assert "retried: " in texts["reports.log"] and "the agent used key" in texts["reports.log"], texts
    assert [name for name, text in texts.items() if "sk-retry-1234" in text] == []
