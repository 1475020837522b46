"""The session end settles once: records -> summary -> verdict -> outputs. The ``pytest_consistency_summary`` hooks
receive the finished summary before any output is written; the exit status is assigned once, after them; each output
(the JSON report, Markdown, HTML) is written once, already saying what the run's exit status says, even when a hook
raises or another output cannot be written.

The inner session's conftest counts the plugin's writes with a spy on the package's own writer
(``report.json_report.write_text_atomic``, which every file output goes through) and every assignment of
``session.exitstatus`` made during ``pytest_sessionfinish``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from stories import OUT, story
from suites import load_report, pattern_suite

WATCH = """
import importlib
import json
import pathlib

import pytest

FACTS = {"writes": [], "sets": [], "hook": None}


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    # The writer as the session end will import it (an earlier in-process session may have dropped the module).
    json_report = importlib.import_module("pytest_consistency.report.json_report")
    original = json_report.write_text_atomic

    def spy(path, text):
        if pathlib.Path(path).name != "junit.xml":  # pytest's file, annotated after pytest wrote it
            FACTS["writes"].append(pathlib.Path(path).name)
        return original(path, text)

    plain = type(session)

    class Watched(plain):
        def __setattr__(self, name, value):
            if name == "exitstatus":
                FACTS["sets"].append(int(value))
            super().__setattr__(name, value)

    session.__class__ = Watched
    json_report.write_text_atomic = spy
    try:
        return (yield)
    finally:
        json_report.write_text_atomic = original
        session.__class__ = plain
        pathlib.Path("facts.json").write_text(json.dumps(FACTS))


def pytest_consistency_summary(summary, config):
    FACTS["hook"] = {
        "writes": list(FACTS["writes"]),
        "on_disk": sorted(p.name for p in pathlib.Path().iterdir() if p.name in ("report.json", "summary.md")),
        "tasks": len(summary.tasks),
        "resample": summary.resample is not None,
    }
    if pathlib.Path("raise").exists():
        raise RuntimeError("dashboard down")
"""


def facts(pytester: pytest.Pytester) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / "facts.json").read_text())
    return data


def test_a_hook_that_raises_leaves_each_output_written_once_and_failing(pytester: pytest.Pytester) -> None:
    """The hook's error is known before anything is written: the report is written once, with it (not written with
    ``passed: true`` and then again), and so is the Markdown."""
    pytester.makeconftest(WATCH)
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PPP"}))
    (pytester.path / "raise").touch()
    result = pytester.runpytest(*OUT)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    seen = facts(pytester)
    assert sorted(seen["writes"]) == ["report.json", "summary.md"], seen
    report = load_report(pytester)
    assert any("dashboard down" in error for error in report["summary"]["errors"])
    story(pytester, result)


def test_the_hooks_receive_the_summary_before_any_output_is_written(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(WATCH)
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PPP", "b": "PPP"}))
    result = pytester.runpytest(*OUT)
    assert result.ret == pytest.ExitCode.OK
    seen = facts(pytester)
    assert seen["hook"] == {"writes": [], "on_disk": [], "tasks": 2, "resample": False}, seen
    assert sorted(seen["writes"]) == ["report.json", "summary.md"], seen


def test_an_output_that_cannot_be_written_leaves_every_other_written_once_saying_so(
    pytester: pytest.Pytester,
) -> None:
    """An HTML path that is a directory: the error is known before the Markdown and the report are written, so each is
    written once and already fails (they were written saying "passed", then again)."""
    pytester.makeconftest(WATCH)
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PPP"}))
    (pytester.path / "taken").mkdir()
    result = pytester.runpytest("--consistency-html=taken", *OUT)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["error: --consistency-html: cannot write the html output to *taken (*)*"])
    seen = facts(pytester)
    assert sorted(seen["writes"]) == ["report.json", "summary.md"], seen
    report = load_report(pytester)
    assert any("--consistency-html" in error for error in report["summary"]["errors"])
    story(pytester, result)


def test_the_exit_status_is_assigned_once(pytester: pytest.Pytester) -> None:
    """Tolerated failures and a hook that raises: the status was set to 0 (the failures are tolerated), then back to
    1 (the hook's error). Settled once, it goes straight to 1, and every output says 1."""
    pytester.makeconftest(WATCH)
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PFPP"}, marker="min_pass=0.5"))
    (pytester.path / "raise").touch()
    result = pytester.runpytest(*OUT)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert facts(pytester)["sets"] == [pytest.ExitCode.TESTS_FAILED]
    story(pytester, result)


def test_tolerated_failures_settle_the_exit_status_once_to_zero(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(WATCH)
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PFPP"}, marker="min_pass=0.5"))
    result = pytester.runpytest(*OUT)
    assert result.ret == pytest.ExitCode.OK
    seen = facts(pytester)
    assert seen["sets"] == [pytest.ExitCode.OK]
    assert sorted(seen["writes"]) == ["report.json", "summary.md"], seen
    story(pytester, result)


def test_a_hook_that_exits_the_interpreter_still_leaves_every_output_naming_it(pytester: pytest.Pytester) -> None:
    """A hook that raises ``SystemExit`` (not an ``Exception``) is raised again once the outputs are written: the
    report and the Markdown are on disk and name it (before: the report was, without it; the Markdown was not)."""
    pytester.makeconftest(
        """
def pytest_consistency_summary(summary, config):
    raise SystemExit("dashboard gone")
"""
    )
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PPP"}))
    result = pytester.runpytest_subprocess(*OUT)
    assert result.ret != pytest.ExitCode.OK
    report = load_report(pytester)
    assert report["summary"]["exit_status"] == 1 and report["summary"]["passed"] is False
    assert any("SystemExit: dashboard gone" in error for error in report["summary"]["errors"]), report["summary"]
    assert "SystemExit: dashboard gone" in (pytester.path / "summary.md").read_text()
