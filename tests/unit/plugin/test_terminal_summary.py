"""The terminal's part of the session end (``plugin.terminal_summary``): the closing line names why a run failed and
stays as pytest made it for a run that passed."""

from __future__ import annotations

from typing import Any

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.result import RunFacts, SessionSummary
from pytest_consistency.plugin.terminal_summary import CLOSING_COLOUR, name_failure_in_closing_line


def session(passed: bool, errors: list[str] | None = None, run: RunFacts | None = None) -> SessionSummary:
    """The summary of a session without repetitions, as settled."""
    summary = build_summary([], run=run)
    summary.passed, summary.exit_status, summary.errors = passed, 0 if passed else 1, errors or []
    return summary


class Reporter:
    """What ``name_failure_in_closing_line`` uses of pytest's terminal reporter."""

    def __init__(self, line: list[tuple[str, dict[str, bool]]]) -> None:
        self.stats: dict[str, list[Any]] = {}
        self.line = line

    def build_summary_stats_line(self) -> tuple[list[tuple[str, dict[str, bool]]], str]:
        return self.line, "green"


def test_a_passed_run_keeps_pytests_line() -> None:
    reporter = Reporter([("3 passed", {"green": True})])
    name_failure_in_closing_line(reporter, session(True))  # type: ignore[arg-type]
    assert reporter.build_summary_stats_line() == ([("3 passed", {"green": True})], "green")


def test_a_failed_run_says_so_in_red() -> None:
    reporter = Reporter([("3 passed", {"green": True})])
    summary = session(False, errors=["a pytest_consistency_summary hook raised X: y"])
    name_failure_in_closing_line(reporter, summary)  # type: ignore[arg-type]
    line, colour = reporter.build_summary_stats_line()
    assert colour == CLOSING_COLOUR["failed"] == "red"
    assert line[0] == ("3 passed", {"green": True})
    assert len(line) > 1 and all(style == {"red": True, "bold": True} for _, style in line[1:])


def test_a_shard_defers_its_verdict_in_yellow() -> None:
    reporter = Reporter([("2 passed", {"green": True})])
    summary = session(True, run=RunFacts(shard="1/3"))
    name_failure_in_closing_line(reporter, summary)  # type: ignore[arg-type]
    line, colour = reporter.build_summary_stats_line()
    assert colour == "yellow"
    assert line[-1][0] == "shard 1/3: ran no task, none was dealt to it; verdict deferred to pytest-consistency merge"
