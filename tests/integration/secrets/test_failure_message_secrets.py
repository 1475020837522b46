"""A short key in a failure message is never written to any output. Adversarial round two, part 5."""

from __future__ import annotations

import json
import re

import pytest
from suites import cli, load_report

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
