"""The session's summary in pytest's terminal, after pytest's own: the consistency section (figures, gates, the
outputs written), the tolerated failures, and pytest's closing line naming why the run failed. It prints what the
session end (:mod:`.finish`) settled, and changes nothing.
"""

from __future__ import annotations

import pytest

from pytest_consistency.model.result import SessionSummary
from pytest_consistency.plugin.finish import TOLERATED
from pytest_consistency.plugin.redaction import known_secrets
from pytest_consistency.plugin.state import STATE
from pytest_consistency.report.terminal import MARKUP, render
from pytest_consistency.secrets.literals import redact_text


def name_failure_in_closing_line(terminalreporter: pytest.TerminalReporter, summary: SessionSummary) -> None:
    """pytest's closing line (``3 passed in 0.1s``) names why the run failed and is red whenever the exit status
    is not 0: the line people read first must not stay green while a gate failed.

    pytest builds the line from its report categories; the parts come from :func:`.verdict.closing_parts`, so the
    line says what the summary says. Colours come from the table below, never from the text.
    """
    from pytest_consistency.analysis.verdict import closing_parts

    deferred = summary.passed and summary.run.shard is not None
    if summary.passed and not deferred:
        return
    parts = closing_parts(summary)
    colour = CLOSING_COLOUR["deferred" if deferred else "failed"]
    build = terminalreporter.build_summary_stats_line

    def build_with_verdict() -> tuple[list[tuple[str, dict[str, bool]]], str]:
        line, _colour = build()  # pytest's colour may be stale: it caches it while the run did not reach its end
        if line == [("no tests ran", {"yellow": True})]:
            line = []
        if deferred:
            added = [
                f"shard {summary.run.shard}: {SHARD_RAN_NOTHING + '; ' if not summary.tasks else ''}verdict "
                "deferred to pytest-consistency merge"
            ]
        else:
            shown = parts or any(terminalreporter.stats.get(key) for key in ("failed", "error"))
            added = parts if shown else ["consistency failed"]
        return line + [(part, {colour: True, "bold": True}) for part in added], colour

    terminalreporter.build_summary_stats_line = build_with_verdict  # type: ignore[method-assign]


#: What a shard dealt no task says: it is not broken, and its report merges like the others.
SHARD_RAN_NOTHING = "ran no task, none was dealt to it"

#: The colour of the closing line and of the parts the plugin adds to it: a failed run, or a shard whose verdict
#: the merge decides.
CLOSING_COLOUR = {"failed": "red", "deferred": "yellow"}


def print_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    state = config.stash[STATE]
    summary = state.summary
    if summary is not None:
        name_failure_in_closing_line(terminalreporter, summary)
    if summary is not None and summary.run.shard is not None and not summary.tasks and not summary.errors:
        terminalreporter.write_sep("=", "consistency")
        terminalreporter.write_line(f"shard {summary.run.shard}: {SHARD_RAN_NOTHING} (more shards than tasks?)")
        if state.report_path:
            terminalreporter.write_line(f"report: {state.report_path}")
        return
    if summary is None or (not summary.tasks and not summary.gates and not summary.errors):
        return
    secrets = known_secrets(state)
    width = min(terminalreporter._tw.fullwidth, 120)
    terminalreporter.write_sep("=", "consistency")
    for line in render(summary, config.get_verbosity(), width):
        terminalreporter.write_line(redact_text(line.text, secrets), **MARKUP[line.style])
    if state.report_path:
        terminalreporter.write_line(f"report: {state.report_path}")
    for written in state.written:
        terminalreporter.write_line(f"wrote {written}")
    if state.otel_line is not None:
        terminalreporter.write_line(state.otel_line, yellow=not state.otel_line.startswith("otel: exported"))
    print_tolerated(terminalreporter, config.get_verbosity(), secrets)


def print_tolerated(terminalreporter: pytest.TerminalReporter, verbosity: int, secrets: list[str]) -> None:
    """Tolerated failures stay available without reading as failures: listed with -v, tracebacks with -vv."""
    reports = terminalreporter.stats.get(TOLERATED, [])
    if not reports:
        return
    if verbosity < 1:
        terminalreporter.write_line("(-v lists the tolerated repetitions, -vv shows their tracebacks)")
        return
    for report in reports:
        crash = getattr(report.longrepr, "reprcrash", None)
        lines = str(getattr(crash, "message", "") or report.longreprtext).strip().splitlines()
        reason = lines[0][:200] if lines else ""
        terminalreporter.write_line(redact_text(f"TOLERATED {report.nodeid} - {reason}", secrets), yellow=True)
        if verbosity >= 2:
            terminalreporter.write_sep("_", f"tolerated: {report.nodeid}")
            terminalreporter.write_line(redact_text(str(report.longreprtext), secrets))
