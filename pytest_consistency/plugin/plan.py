"""``pytest --consistency-plan``: collect, print the plan of the run, exit without running a test.

Registered as ``consistency-plan`` (``configure.roles``) only when the option is set, in the process where every
report would arrive (never in an xdist worker); with ``-n`` it switches xdist's distribution off
(:func:`run_in_process`), as xdist does for ``--collect-only``, so this process collects and prints the plan once.
Its ``pytest_runtestloop`` comes first and returns True, so no test runs, as ``--collect-only`` runs none; the
session end then has nothing to summarise (``finish.runs_no_test``). The plan itself is :mod:`..analysis.plan`'s:
the collected tasks at their markers' n and bars, against the last report; a task the report has no history of (or
every task, when there is no report yet) against its recorded cassettes (:mod:`..cassette.recorded`: tokens,
dollars and the calls' time per repetition; no outcomes, so the rate is assumed).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_consistency.plugin.state import STATE, PluginState

if TYPE_CHECKING:
    from pytest_consistency.model.records import CallRecord
    from pytest_consistency.model.result import SessionSummary

#: The name the role is registered under.
NAME = "consistency-plan"


def run_in_process(config: pytest.Config) -> None:
    """No xdist workers for a plan: as under ``--collect-only``, which pytest-xdist does not distribute, the session
    collects in this one process (an xdist controller collects nothing: the workers do) and the plan is printed once.
    Called at ``pytest_configure``, before xdist's (``trylast``) would start the distributed session."""
    if getattr(config.option, "dist", "no") != "no":
        config.option.dist = "no"


def _summary(config: pytest.Config) -> tuple[str | None, SessionSummary | None]:
    """The report to plan from and its summary; (the path, None) when it is not there yet (the cassettes may give
    the history), a usage error naming the file when it is there but unreadable."""
    from pytest_consistency.report.json_report import ReportError, read_report

    path = config.stash[STATE].settings.path("report")
    if path is None or not Path(path).exists():
        return None if path is None else str(path), None
    try:
        return str(path), read_report(Path(path))
    except ReportError as exc:
        raise pytest.UsageError(f"--consistency-plan: {exc}") from None


def _recorded(state: PluginState, wanted: dict[str, str], suffix: str) -> dict[str, list[list[CallRecord]]]:
    """The calls of each recorded repetition of the ``wanted`` tasks (task id: a node id of it), read from their
    cassettes; a bad cassette is a usage error naming the file and the fix."""
    from pytest_consistency.cassette.messages import CassetteError, rerecord_advice
    from pytest_consistency.cassette.recorded import recorded_calls

    found: dict[str, list[list[CallRecord]]] = {}
    for task_id, nodeid in wanted.items():
        try:
            calls = recorded_calls(state.cassette_root, task_id, rerecord_advice(nodeid), suffix)
        except CassetteError as exc:
            raise pytest.UsageError(f"--consistency-plan: {exc}") from None
        if calls:
            found[task_id] = calls
    return found


class PlanRole:
    """Prints the plan after collection and ends the run loop before the first test."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        from pytest_consistency.analysis.gates import thresholds_of
        from pytest_consistency.analysis.plan import PlanError, PlannedTask, build_plan
        from pytest_consistency.cassette.paths import SUFFIXES
        from pytest_consistency.model.prices import price_table
        from pytest_consistency.plugin.finish import analysis_of
        from pytest_consistency.report.plan import plan_lines

        state = self.config.stash[STATE]
        settings = state.settings
        path, summary = _summary(self.config)
        planned: dict[str, PlannedTask] = {}
        nodeids: dict[str, str] = {}
        for item, tracked in state.items.items():
            spec = tracked.spec
            if spec is not None and tracked.task_id not in planned:
                planned[tracked.task_id] = PlannedTask(tracked.task_id, spec.n, spec.min_pass, spec.min_rate)
                nodeids[tracked.task_id] = item.nodeid
        # A task the report has no history of is planned from its recorded cassettes (tokens and time, no outcomes).
        known = set() if summary is None else {t.task_id for t in summary.tasks if t.scored}
        suffix = SUFFIXES[settings.cassette_format]
        recorded = _recorded(state, {t: n for t, n in nodeids.items() if t not in known}, suffix)
        if summary is None and not recorded:
            where = "no --consistency-report FILE" if path is None else f"{path} does not exist"
            raise pytest.UsageError(
                f"--consistency-plan: nothing to plan from: {where}, and no collected task has a recorded cassette "
                f"under {state.cassette_root}; set --consistency-report FILE (or report: in consistency.yaml) to the "
                "JSON report of the last run, or record the cassettes first (--consistency-record=once)"
            )
        cassettes = f"the cassettes under {state.cassette_root}"
        source = cassettes if summary is None else (f"{path} and {cassettes}" if recorded else str(path))
        analysis = analysis_of(settings)  # the session's own: the plan reads the gates as it would
        try:
            plan = build_plan(
                source,
                list(planned.values()),
                summary,
                thresholds_of(settings.value),
                analysis,
                price_table(settings.prices),
                settings.concurrency or 1,
                settings.n_min,
                recorded,
            )
        except PlanError as exc:
            raise pytest.UsageError(f"--consistency-plan: {exc}") from None
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line("")
            for line in plan_lines(plan):
                terminal.write_line(line)
        return True
