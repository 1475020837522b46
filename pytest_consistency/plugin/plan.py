"""``pytest --consistency-plan``: collect, print the plan of the run, exit without running a test.

Registered as ``consistency-plan`` (``configure.roles``) only when the option is set, in the process where every
report would arrive (never in an xdist worker). Its ``pytest_runtestloop`` comes first and returns True, so no test
runs, as ``--collect-only`` runs none; the session end then has nothing to summarise (``finish.runs_no_test``). The
plan itself is :mod:`..analysis.plan`'s: the collected tasks at their markers' n and bars, against the last report.
"""

from __future__ import annotations

import pytest

from pytest_consistency.plugin.state import STATE

#: The name the role is registered under.
NAME = "consistency-plan"


def _history_path(config: pytest.Config) -> str:
    settings = config.stash[STATE].settings
    path = settings.path("consistency_report")
    if path is None:
        raise pytest.UsageError(
            "--consistency-plan: no report to plan from: set --consistency-report FILE (or report: in "
            "consistency.yaml) to the JSON report of the last run, and record one first"
        )
    return str(path)


class PlanRole:
    """Prints the plan after collection and ends the run loop before the first test."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        from pathlib import Path

        from pytest_consistency.analysis.gates import thresholds_of
        from pytest_consistency.analysis.plan import PlanError, PlannedTask, build_plan
        from pytest_consistency.model.prices import price_table
        from pytest_consistency.model.result import Analysis
        from pytest_consistency.report.json_report import ReportError, read_report
        from pytest_consistency.report.plan import plan_lines

        state = self.config.stash[STATE]
        settings = state.settings
        path = _history_path(self.config)
        try:
            summary = read_report(Path(path))
        except ReportError as exc:
            raise pytest.UsageError(f"--consistency-plan: {exc}") from None
        planned: dict[str, PlannedTask] = {}
        for tracked in state.items.values():
            spec = tracked.spec
            if spec is not None and tracked.task_id not in planned:
                planned[tracked.task_id] = PlannedTask(tracked.task_id, spec.n, spec.min_pass, spec.min_rate)
        alpha = round(1 - settings.consistency_confidence, 12)
        analysis = Analysis(
            confidence=settings.consistency_confidence,
            target=settings.consistency_interval_target,
            gate_on=settings.consistency_gate_on,
            inconclusive=settings.consistency_inconclusive,
            test=settings.consistency_test,
            suite_regression=settings.consistency_suite_regression,
            sequential_alpha=(settings.consistency_sequential_alpha or alpha)
            if settings.consistency_sequential
            else None,
        )
        try:
            plan = build_plan(
                path,
                list(planned.values()),
                summary,
                thresholds_of(settings.value),
                analysis,
                price_table(settings.consistency_prices),
                settings.consistency_concurrency or 1,
                settings.consistency_n_min,
            )
        except PlanError as exc:
            raise pytest.UsageError(f"--consistency-plan: {exc}") from None
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line("")
            for line in plan_lines(plan):
                terminal.write_line(line)
        return True
