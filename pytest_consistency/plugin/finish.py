"""The end of a session, in the process that saw every report: one pass, records -> summary -> verdict -> outputs.

The order is the promise: the typed summary of the records, the session mode's figures part of it (pure but for the
answer hooks); the verdict (gates, tasks); the ``pytest_consistency_summary`` hooks, which receive it before anything
is written; every output checked and rendered (:mod:`.outputs`); the exit status settled once, with whatever failed
so far; each output written once. Failed repetitions that ``min_pass`` tolerates no longer fail the run; an exceeded
gate, a failed task, an exceeded token budget or an equivalence hook that raised fails a run whose tests all passed.
``passed`` in the report is exactly "the exit status is 0". An output that cannot be written or a summary hook that
raises is an error that names itself, in every output; it does not change the verdict the gates reached. The
terminal prints what was settled (:mod:`.terminal_summary`).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.analysis.adaptive import decided
from pytest_consistency.analysis.answers import default_equivalent
from pytest_consistency.analysis.gates import thresholds_of
from pytest_consistency.analysis.summary import EquivalenceError, build_summary, conclude
from pytest_consistency.config.settings import Settings
from pytest_consistency.config.shard import shard_of
from pytest_consistency.model.result import (
    VERDICT_OPTIONS,
    Analysis,
    CostBudget,
    RunFacts,
    SessionSummary,
    TokenBudget,
)
from pytest_consistency.plugin.defaults import DEFAULTS
from pytest_consistency.plugin.state import STATE, PluginState

#: Options of runs that collect (or not) but run no test: ``--collect-only``, ``--setup-plan``, ``--setup-only``,
#: ``--fixtures``, ``--fixtures-per-test`` and ``--cache-show``.
NO_TEST_OPTIONS = ("collectonly", "setupplan", "setuponly", "showfixtures", "show_fixtures_per_test", "cacheshow")


def runs_no_test(config: pytest.Config) -> bool:
    """A run that executes no test has nothing to score, so nothing to gate, print or write (``--consistency-plan``
    too: it prints the plan and runs none)."""
    if config.stash[STATE].settings.plan:
        return True
    return any(getattr(config.option, dest, False) for dest in NO_TEST_OPTIONS)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No automatic cyclic collection inside the block, the collector's earlier state restored after it (one the user
    disabled stays so). Why: the session end allocates millions of small acyclic objects (the summary, its dict form,
    the redacted copy, each output's text), freed by reference counting, and the collector, triggered by allocations
    alone, walked the whole heap again and again meanwhile: 12.3 s with it, 9.4 s without, for 1,000 tasks x 10
    repetitions x 20 calls (``benchmarks/trajectory.py``'s records)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def summarise(session: pytest.Session, exitstatus: int) -> None:
    with gc_paused():
        _summarise(session, exitstatus)


def _summarise(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash[STATE]
    if runs_no_test(config):
        return
    # One pass: records -> summary -> verdict -> outputs, each step once.
    thresholds = thresholds_of(state.settings.value)
    summary = summary_of(session, state, exitstatus, thresholds)
    conclude(summary, thresholds)
    state.tolerated = frozenset(summary.tolerated_nodeids)
    state.summary = summary
    recategorize_tolerated(config, state)

    def decide() -> None:
        summary.exit_status = exit_status_of(session, summary, state)
        summary.passed = summary.exit_status == pytest.ExitCode.OK

    decide()  # what the hooks read: the exit status the run has before them
    before = len(summary.errors)
    crash = summary_hooks(config, summary)
    if len(summary.errors) > before:
        decide()  # a hook that raised fails the run
    from pytest_consistency.plugin import outputs

    pending = outputs.prepare(config, summary, state, decide)  # every output checked and rendered: none written yet
    try:
        outputs.write(summary, state, pending, decide)  # each once
    finally:
        session.exitstatus = summary.exit_status or 0  # settled once, after everything that can fail the run
    if state.settings.otel:
        outputs.export_traces(summary, state)
    if crash is not None:
        raise crash


def summary_of(
    session: pytest.Session, state: PluginState, exitstatus: int, thresholds: Mapping[str, float | None]
) -> SessionSummary:
    """The typed summary of the session's records, complete before any verdict: the tasks' figures, the session
    mode's (``SessionMode.summarise``), the comparison with a baseline, the warnings of what the session missed."""
    config = session.config
    # ``-x``/``--maxfail`` set ``shouldfail``, ``--sw`` and xdist set ``shouldstop``; ``pytest.exit()`` sets
    # neither but leaves selected repetitions unrun, which is what "stopped early" means.
    unreached = expect_selected(session, state)
    interrupted = (
        exitstatus == pytest.ExitCode.INTERRUPTED
        or bool(session.shouldstop)
        or bool(session.shouldfail)
        or unreached > 0
    )

    impls = config.hook.pytest_consistency_answers_equivalent.get_hookimpls()
    local = {impl.plugin_name for impl in impls}
    custom = sorted(impl.plugin_name for impl in impls if impl.plugin_name != DEFAULTS)
    # Only the documented default answers (no other implementation, no wrapper): it is called directly, not through
    # pluggy for each of the session's answer comparisons; same result, same error when it raises.
    compare_answers = (
        (lambda left, right, task_id: default_equivalent(left, right))
        if not custom
        else (
            lambda left, right, task_id: config.hook.pytest_consistency_answers_equivalent(
                left=left, right=right, task_id=task_id
            )
        )
    )

    def equivalent(left: Any, right: Any, task_id: str) -> bool:
        try:
            return bool(compare_answers(left, right, task_id))
        except Exception as exc:
            raise EquivalenceError(
                f"{task_id}: pytest_consistency_answers_equivalent raised {type(exc).__name__}: {exc}; "
                "this task's answers could not be compared"
            ) from exc

    run = replace(
        run_facts(state, interrupted, ", ".join(plugin_shown(name, config) for name in custom) or "default"),
        shard=shard_of(state.settings.shard, config.option),
        run_id=state.run_id,
    )
    price_session(state)
    repetitions = list(state.collector.repetitions.values())
    if state.mode is not None:  # a session mode's items as the tasks' repetitions (re-judging: n x M samples -> n)
        repetitions = state.mode.fold(repetitions)
    summary = build_summary(repetitions, equivalent, run, analysis_of(state.settings))
    if state.mode is not None:
        state.mode.summarise(summary, repetitions)
    unseen = sorted(state.collector.worker_equivalence_plugins - local)
    if unseen:
        summary.warnings.append(
            "pytest_consistency_answers_equivalent is implemented in "
            + ", ".join(plugin_shown(name, config) for name in unseen)
            + ", which the controlling process did not load; answers were compared without it. "
            "Move the hook to a conftest.py at or above the paths given on the command line."
        )
    baseline = state.settings.path("baseline")
    if baseline is not None:
        # The comparison's statistics and the report reader load only for a session that compares.
        from pytest_consistency.analysis.baseline import compare_for_gates, untested_gates
        from pytest_consistency.report.json_report import ReportError, read_report

        try:
            label = str(state.settings.baseline)  # as given: the absolute path is in the errors
            summary.comparison = compare_for_gates(read_report(baseline), summary, label, thresholds)
        except (ReportError, ValueError) as exc:
            summary.errors.append(f"--consistency-baseline: {exc}")
        else:
            untested = untested_gates(summary, thresholds)
            if untested is not None:  # as the merge refuses it
                summary.errors.append(untested)
    return summary


def summary_hooks(config: pytest.Config, summary: SessionSummary) -> BaseException | None:
    """The ``pytest_consistency_summary`` hooks, before any output is written: one that raises is an error of the
    session, which every output then names. A crash that is not an ``Exception`` (``SystemExit``,
    ``KeyboardInterrupt``) is returned, to be raised again once the outputs are written: it loses nothing."""
    try:
        config.hook.pytest_consistency_summary(summary=summary, config=config)
    except BaseException as exc:
        summary.errors.append(f"a pytest_consistency_summary hook raised {type(exc).__name__}: {exc}")
        return None if isinstance(exc, Exception) else exc
    return None


def price_session(state: PluginState) -> None:
    """Price every call of the session at the session's price table (the shipped one under ``prices:``)."""
    calls = [call for rep in state.collector.repetitions.values() for call in rep.calls]
    if calls:  # the table loads only for a session that made a call
        from pytest_consistency.model.prices import price_calls, price_table

        price_calls(calls, price_table(state.settings.prices))


def analysis_of(settings: Settings) -> Analysis:
    return Analysis(
        confidence=settings.confidence,
        target=settings.interval_target,
        gate_on=settings.gate_on,
        inconclusive=settings.inconclusive,
        test=settings.test,
        suite_regression=settings.suite_regression,
        sequential_alpha=(settings.sequential_alpha or round(1 - settings.confidence, 12))
        if settings.sequential
        else None,
        sequential_seed=suite_seed(settings),
        sequential_margin=settings.sequential_margin if settings.sequential else None,
    )


def suite_seed(settings: Settings) -> int | None:
    """The seed of the suite gates' rounds in sequential mode (``--consistency-seed``, else 0); None when no suite
    gate is decided in rounds (the gap gate, the regression gate with a margin)."""
    gated = settings.value("gap_max") is not None or settings.sequential_margin is not None
    if not settings.sequential or not gated:
        return None
    return settings.seed or 0


def used_routes(state: PluginState) -> set[str]:
    """Routes whose fixtures were collected here, or whose API was called (an xdist controller collects nothing)."""
    called = {c.provider for rep in state.collector.repetitions.values() for c in rep.calls}
    return state.used_routes | called


def plugin_shown(name: str, config: pytest.Config) -> str:
    """A hook implementer's name as the outputs show it: a conftest (registered by its absolute path) relative to the
    rootdir, so that no report or page carries the machine's directories."""
    if not os.path.isabs(name):
        return name
    from pytest_consistency.plugin.lifecycle import display_path

    return display_path(Path(name), config.rootpath)


def run_facts(state: PluginState, interrupted: bool, equivalence: str) -> RunFacts:
    """What the session knew besides its repetitions: the route it pinned, the cassette mode, the budget."""
    route = state.route
    other = sorted((state.collector.failed_nodeids - set(state.collector.repetitions)) | state.collection_errors)
    return RunFacts(
        route=None if route is None else route.settings(state.settings.retries_max),
        record_mode=state.settings.record,
        preflight=state.preflight,
        token_budget=None
        if state.ledger is None or state.ledger.limit is None
        else TokenBudget(state.ledger.limit, state.ledger.spent()),
        cost_budget=None
        if state.ledger is None or state.ledger.cost_limit is None
        else CostBudget(state.ledger.cost_limit, state.ledger.spent_usd()),
        interrupted=interrupted,
        equivalence=equivalence,
        other_failures=len(other),
        other_failed=other,
        adaptive_n_min=state.settings.n_min if state.settings.adaptive else None,
        repetition_budget=state.settings.repetition_budget,
        verdict_settings={
            flag: f"{value:g}" if isinstance(value, float) else str(value)
            for attribute, flag in VERDICT_OPTIONS
            if (value := state.settings.value(attribute)) is not None
        },
        other_routes=[
            state.routes[name].settings(state.settings.retries_max)
            for name in sorted(used_routes(state))
            if name != "openai" and name in state.routes
        ],
    )


def expect_selected(session: pytest.Session, state: PluginState) -> int:
    """List every selected repetition, run or not, so a task the session never reached is ``incomplete``.

    Only the process that collected knows the selection; under xdist the controller has no items and the
    tasks it lists are those some worker reported on. Returns how many selected repetitions never ran.
    """
    unreached = 0
    reported = state.collector.repetitions
    for item in getattr(session, "items", ()):
        known = reported.get(item.nodeid)
        if known is not None:  # it reported: nothing to add
            unreached += known.outcome == "not run"
            continue
        tracked = state.items.get(item)
        spec = None if tracked is None else tracked.spec
        if tracked is None or spec is None:
            continue
        order = state.order.get(item.nodeid, 0)
        unreached += state.collector.expect(item.nodeid, tracked.task_id, tracked.repeat, spec, order)
    return unreached


def exit_status_of(session: pytest.Session, summary: SessionSummary, state: PluginState) -> int:
    """One story: tolerated failures do not fail the run; a failed verdict or gate, or an error, does. Pure: the
    session's exit status is assigned once, from the last answer (``_summarise``)."""
    status = session.exitstatus
    failed = state.collector.failed_nodeids
    if status == pytest.ExitCode.TESTS_FAILED and failed and failed <= state.tolerated and not state.collection_errors:
        status = pytest.ExitCode.OK
    if summary.run.shard is not None:
        # One shard of a run: its tasks' failures and its gates are the merge's to judge; what broke is its own.
        broke = shard_broke(summary, state)
        # A shard dealt no task (3 shards, 2 tasks) is not broken: it ran its share, which was nothing.
        deferred = (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED)
        if status in deferred and not broke:
            status = pytest.ExitCode.OK
        elif broke and status == pytest.ExitCode.OK:
            status = pytest.ExitCode.TESTS_FAILED
    elif (not summary.passed or summary.errors) and status in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        status = pytest.ExitCode.TESTS_FAILED
    return int(status)


def shard_broke(summary: SessionSummary, state: PluginState) -> bool:
    """What fails a shard itself: collection errors, a task in ``error`` (a broken setup), an interruption, an
    error of the plugin's outputs or hooks. A failed task or gate is not: the merge decides those."""
    return bool(
        state.collection_errors
        or summary.interrupted
        or summary.errors
        or any(t.verdict == "error" for t in summary.tasks)
    )


TOLERATED = "tolerated"


def recategorize_tolerated(config: pytest.Config, state: PluginState) -> None:
    """Move the reports of tolerated failures out of pytest's ``failed``/``error`` categories into ``tolerated``.

    The terminal's closing line (``12 passed, 18 tolerated``), its short test summary and its failure tracebacks
    are built from these categories after this runs; a failure of a task that fails as a whole stays a failure.
    """
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    tolerated = state.tolerated
    # A failure shown as tolerated while it happened is a failure after all when the run stopped early.
    for report in [r for r in reporter.stats.get(TOLERATED, []) if r.nodeid not in tolerated]:
        reporter.stats[TOLERATED].remove(report)
        reporter.stats.setdefault("failed" if report.when == "call" else "error", []).append(report)
    if not reporter.stats.get(TOLERATED):
        reporter.stats.pop(TOLERATED, None)
    for category in ("failed", "error"):
        reports = reporter.stats.get(category, [])
        kept = [r for r in reports if getattr(r, "nodeid", None) not in tolerated]
        moved = [r for r in reports if getattr(r, "nodeid", None) in tolerated]
        if moved:
            reporter.stats.setdefault(TOLERATED, []).extend(moved)
            if kept:
                reporter.stats[category] = kept
            else:
                del reporter.stats[category]


def report_status(report: pytest.TestReport, state: PluginState) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """The progress letter of a failed repetition whose task already passes whatever its other repetitions do."""
    if not report.failed or report.when == "teardown":
        return None
    if state.summary is not None:
        # Asked again for the short test summary, after the verdicts are settled: the settled answer, so a partial
        # run (``-x``, ``-k rep1``) calls the repetition failed everywhere, as its closing line does.
        if report.nodeid in state.tolerated:
            return TOLERATED, "t", ("TOLERATED", {"yellow": True})
        return None
    rep = state.collector.repetitions.get(report.nodeid)
    if rep is None:
        return None
    others = [r for r in state.collector.by_task.get(rep.task_id, ()) if r.nodeid != rep.nodeid]
    passes = sum(r.succeeded for r in others if r.scored)
    failures = sum(not r.succeeded for r in others if r.scored) + 1
    settings = state.settings
    verdict = decided(passes, failures, rep.n, rep.min_pass, rep.min_rate, round(1 - settings.confidence, 12))
    if not (verdict == "pass" or (verdict == "undecided" and settings.inconclusive == "pass")):
        return None
    return TOLERATED, "t", ("TOLERATED", {"yellow": True})
