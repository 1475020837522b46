"""The process that sees every report (the only one without xdist, the controller with it): it collects the
repetitions, summarises, gates, prints and writes (:class:`Controller`), and annotates pytest's JUnit XML
(:class:`JUnitAnnotator`). Workers never register them. The session-end modules load when first needed.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from pytest_consistency.plugin.carried import marked_repetition
from pytest_consistency.plugin.state import BOARD_KEY, LEDGER_KEY, STATE, THROTTLE_KEY, PluginState
from pytest_consistency.plugin.status import register as show_status
from pytest_consistency.plugin.status import wanted as status_wanted


class Controller:
    """Hooks of the process that sees every report: the only process without xdist, the controller with it.

    Registered from ``pytest_configure`` so that it holds the config; workers never register it.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.state = config.stash[STATE]
        #: Whether the terminal shows the live status line (``status``), decided at the first report of a marked
        #: repetition (pytest's terminal reporter is registered after the plugin's configure).
        self.status: bool | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        state = self.state
        wanted, mode = state.settings.preflight, state.settings.record
        if wanted and mode == "none":
            state.preflight = "skipped: cassettes are replayed only (--consistency-record=none), no live call"
        elif wanted and self.config.pluginmanager.has_plugin("dsession"):
            # The routes are checked after collection (:mod:`.preflight`); under xdist only workers collect.
            state.preflight = "checked by each xdist worker, for the routes its tests use"

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        state = self.state
        if state.ledger is not None:
            node.workerinput[LEDGER_KEY] = str(state.ledger.path)
        throttle = next(iter(state.throttles.values()), None)
        if throttle is not None:
            node.workerinput[THROTTLE_KEY] = str(throttle.directory)
        if state.board is not None:
            node.workerinput[BOARD_KEY] = str(state.board.directory)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # First, so that the terminal's progress letter (``pytest_report_teststatus``) already knows this report's
        # repetition: a passed setup carries no payload any more, so the call's report is the first one it has.
        failed = self.state.collector.add(report)
        if failed and not self.config.pluginmanager.has_plugin(Tolerance.NAME):
            # Only a failure can be tolerated: a session (or its part) without one never dispatches the hook to it.
            self.config.pluginmanager.register(Tolerance(self.state), Tolerance.NAME)
        if self.status is None and marked_repetition(report):  # the session repeats a task: the live status line
            self.status = status_wanted(self.config)
            if self.status:
                show_status(self.config, self.state)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.state.collection_errors.add(report.nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus == pytest.ExitCode.USAGE_ERROR or nothing_to_summarise(session):
            # A usage error (a refused route, a failed preflight, a bad option) prints only itself, after this:
            # no empty summary before it, and no output written over the previous run's.
            return
        from pytest_consistency.plugin.finish import summarise

        summarise(session, exitstatus)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.state.summary is None:  # nothing was summarised: nothing to print
            return
        from pytest_consistency.plugin.terminal_summary import print_summary

        print_summary(terminalreporter, self.config)


class Tolerance:
    """Tells pytest (its progress letter, short summary and JUnit) that a failed repetition is tolerated by its
    task's verdict. Registered as ``consistency-tolerance`` by the controller at the first failed report, before
    the terminal asks for that report's status: three of every repetition's hook calls are then not made."""

    NAME = "consistency-tolerance"

    def __init__(self, state: PluginState) -> None:
        self.state = state

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(
        self, report: pytest.TestReport, config: pytest.Config
    ) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        if not isinstance(report, pytest.TestReport) or not report.failed:  # only a failure can be tolerated
            return None
        state = self.state
        if state.summary is None and report.nodeid not in state.collector.repetitions:
            return None  # not a repetition: nothing to tolerate, and no session-end module to load for it
        from pytest_consistency.plugin.finish import (
            report_status,  # the session-end modules load when first needed, not with the plugin
        )

        return report_status(report, state)


class JUnitAnnotator:
    """Adds the session's figures to pytest's own ``--junitxml`` file, once pytest has written it (trylast)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.config.stash[STATE].summary is None:
            return
        from pytest_consistency.plugin.outputs import annotate_junit

        annotate_junit(self.config)


def nothing_to_summarise(session: pytest.Session) -> bool:
    """A session in which the plugin has nothing to say: no repetition selected or reported, no collection error,
    none of its options set (no gate, no output, no baseline, no mode), no step summary to write and no
    ``pytest_consistency_summary`` hook. Its session end would build an empty summary and print, write and change
    nothing; it is skipped, and the session-end modules (the statistics, the report model) are never loaded."""
    state = session.config.stash[STATE]
    collector = state.collector
    if collector.repetitions or collector.pending or state.collection_errors or state.errors:
        return False
    if any(tracked.spec is not None for tracked in state.items.values()):
        return False
    if any(source != "default" for source in state.settings.sources.values()):
        return False
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        return False
    return not session.config.hook.pytest_consistency_summary.get_hookimpls()
