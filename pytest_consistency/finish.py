"""The end of a session, in the process that saw every report: summarise, gate, write the report, print.

The exit status is settled here too: failed repetitions that ``min_pass`` tolerates no longer fail the run, and an
exceeded gate or token budget fails a run whose tests all passed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import settings
from .drift import PinnedRoute
from .records import FAILURE
from .report import to_dict, write_atomic
from .state import STATE
from .summary import add_route, build_summary, finish
from .terminal import render


def summarise(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash[STATE]
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldstop)

    def equivalent(left: Any, right: Any, task_id: str) -> bool:
        return bool(config.hook.pytest_consistency_answers_equivalent(left=left, right=right, task_id=task_id))

    summary = build_summary(state.collector.repetitions.values(), equivalent, interrupted=interrupted)
    local = {impl.plugin_name for impl in config.hook.pytest_consistency_answers_equivalent.get_hookimpls()}
    unseen = sorted(state.collector.worker_equivalence_plugins - local)
    if unseen:
        summary.warnings.append(
            "pytest_consistency_answers_equivalent is implemented in "
            + ", ".join(unseen)
            + ", which the controlling process did not load; answers were compared without it. "
            "Move the hook to a conftest.py at or above the paths given on the command line."
        )
    route = state.route
    if route is not None:
        retries_max = state.settings["consistency_retries_max"]
        pinned = PinnedRoute(
            base_url=route.base_url,
            key_fingerprint=route.key_fingerprint,
            model=route.model,
            retries_max=route.max_retries if retries_max is None else int(retries_max),
        )
        add_route(summary, pinned, route.describe())
        summary.extra["record_mode"] = state.settings["consistency_record"]
        if state.preflight:
            summary.extra["preflight"] = state.preflight
        if state.ledger is not None:
            spent = state.ledger.spent()
            summary.extra["token_budget"] = {"limit": state.ledger.limit, "spent": spent}
            if spent > state.ledger.limit:
                summary.warnings.append(
                    f"token budget exceeded: {spent} tokens used > --consistency-token-budget={state.ledger.limit}; "
                    "later live calls were refused"
                )
                summary.extra["token_budget"]["exceeded"] = True
    finish(summary, {option.dest: state.settings[option.dest] for option in settings.GATE_OPTIONS})
    state.summary = summary
    config.hook.pytest_consistency_summary(summary=summary, config=config)

    report_path = state.settings["consistency_report"]
    if report_path:
        path = Path(report_path)
        if not path.is_absolute():
            path = Path(config.invocation_params.dir) / path
        write_atomic(path, to_dict(summary))
        state.report_path = str(path)

    tolerated = {r.nodeid for t in summary.tasks if t.verdict == "pass" for r in t.repetitions}
    failed = state.collector.failed_nodeids
    if session.exitstatus == pytest.ExitCode.TESTS_FAILED and failed and failed <= tolerated:
        session.exitstatus = pytest.ExitCode.OK
    budget_exceeded = bool(summary.extra.get("token_budget", {}).get("exceeded"))
    if (budget_exceeded or any(not gate.passed for gate in summary.gates)) and session.exitstatus in (
        pytest.ExitCode.OK,
        pytest.ExitCode.NO_TESTS_COLLECTED,
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def print_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    state = config.stash[STATE]
    summary = state.summary
    if summary is None or (not summary.tasks and not summary.gates):
        return
    width = min(terminalreporter._tw.fullwidth, 120)
    terminalreporter.write_sep("=", "consistency")
    for line in render(summary, config.get_verbosity(), width):
        failed = line.endswith("FAILED")
        terminalreporter.write_line(line, red=failed, bold=failed)
    tolerated = sum(1 for t in summary.tasks if t.verdict == "pass" for r in t.repetitions if r.outcome in FAILURE)
    if tolerated:
        terminalreporter.write_line(f"{tolerated} failed repetition(s) tolerated by min_pass")
    if state.report_path:
        terminalreporter.write_line(f"report: {state.report_path}")
