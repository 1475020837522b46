"""The end of a session, in the process that saw every report: summarise, gate, settle, write, call hooks, print.

The order is the promise: figures and gates first (pure), then the exit status, then the report (before any user
code runs, so a crashing hook loses nothing), then the ``pytest_consistency_summary`` hook. Failed repetitions that
``min_pass`` tolerates no longer fail the run; an exceeded gate, a failed task, an exceeded token budget or an
equivalence hook that raised fails a run whose tests all passed. ``passed`` in the report is exactly "the exit
status is 0". A report that cannot be written or a summary hook that raises is an error that names itself; it
does not change the verdict the gates reached.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.analysis.adaptive import decided
from pytest_consistency.analysis.answers import default_equivalent
from pytest_consistency.analysis.gates import thresholds_of
from pytest_consistency.analysis.summary import EquivalenceError, build_summary, conclude
from pytest_consistency.config.options import CoreOptions
from pytest_consistency.config.parse import absolute_path
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
from pytest_consistency.plugin.redaction import known_secrets
from pytest_consistency.plugin.state import STATE, PluginState
from pytest_consistency.report import BUILTIN, UnknownFormat
from pytest_consistency.report.terminal import MARKUP, render
from pytest_consistency.secrets.literals import redact_text
from pytest_consistency.secrets.structures import redact_strings

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
    summary = build_summary(state.collector.repetitions.values(), equivalent, run, analysis_of(state.settings))
    if state.mode is not None:
        state.mode.summarise(summary, list(state.collector.repetitions.values()))
    unseen = sorted(state.collector.worker_equivalence_plugins - local)
    if unseen:
        summary.warnings.append(
            "pytest_consistency_answers_equivalent is implemented in "
            + ", ".join(plugin_shown(name, config) for name in unseen)
            + ", which the controlling process did not load; answers were compared without it. "
            "Move the hook to a conftest.py at or above the paths given on the command line."
        )
    thresholds = thresholds_of(state.settings.value)
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
    conclude(summary, thresholds)
    state.tolerated = frozenset(summary.tolerated_nodeids)
    settle_exit_status(session, summary, state)
    state.summary = summary
    recategorize_tolerated(config, state)

    path = state.settings.path("report")
    before = len(summary.errors)
    if path is not None:
        write_report(path, summary, state)  # first, so that a hook that crashes loses nothing
    try:
        config.hook.pytest_consistency_summary(summary=summary, config=config)
    except Exception as exc:
        summary.errors.append(f"a pytest_consistency_summary hook raised {type(exc).__name__}: {exc}")
    # A report that could not be written, a hook that raised, an output that was lost: an error fails the run (as
    # ``pytest-consistency merge`` of this report would), and every output written says so.
    if len(summary.errors) > before:
        settle_exit_status(session, summary, state)
    write_outputs(config, summary, state, lambda: settle_exit_status(session, summary, state))
    if len(summary.errors) > before and path is not None and state.report_path is not None:
        write_report(path, summary, state)
    if state.settings.otel:
        export_traces(summary, state)


def export_traces(summary: SessionSummary, state: PluginState) -> None:
    """``--consistency-otel``: the session's spans to the collector, from the redacted result every output renders;
    whatever happens is one line, never a change of the verdict (the collector is not part of the run)."""
    from pytest_consistency.report.otlp import export_session

    try:
        redacted = SessionSummary.from_dict(redacted_report(summary, state))
        line = export_session(redacted, known_secrets(state), state.settings.otel_content)
    except Exception as exc:  # an SDK that cannot encode a span: say so, as for a collector that is down
        line = f"otel: the spans could not be exported ({type(exc).__name__}: {exc})"
    state.otel_line = redact_text(line, known_secrets(state))


def outputs(config: pytest.Config, settings: Settings) -> list[tuple[str, str, Path]]:
    """(format, option, file) for every output asked for, the GitHub step summary included."""
    wanted = []
    for option, name in ((CoreOptions.md, "markdown"), (CoreOptions.html, "html")):
        path = settings.path(option.name)
        if path is not None:
            wanted.append((name, option.flag, path))
    other = settings.output
    if other is not None:
        name, _, file = other.partition("=")
        wanted.append((name, "--consistency-output", absolute_path(file, settings.bases.get("output"))))
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary and not settings.no_md:
        wanted.append(("markdown", "$GITHUB_STEP_SUMMARY", Path(step_summary)))
    return wanted


def write_outputs(
    config: pytest.Config, summary: SessionSummary, state: PluginState, settle: Callable[[], None] = lambda: None
) -> None:
    """Render and write every other format; a format or file that fails is an error naming itself, which fails the
    run: then the files already written are written again (they said "passed"), and the step summary, which is
    appended to, is written last, once."""
    wanted = outputs(config, state.settings)
    files = [w for w in wanted if w[1] != "$GITHUB_STEP_SUMMARY"]
    before = len(summary.errors)
    written = _write_outputs(config, summary, state, files)
    if len(summary.errors) > before:
        settle()
        _write_outputs(config, summary, state, written, again=True)
    _write_outputs(config, summary, state, [w for w in wanted if w not in files])


def _write_outputs(
    config: pytest.Config,
    summary: SessionSummary,
    state: PluginState,
    wanted: list[tuple[str, str, Path]],
    again: bool = False,
) -> list[tuple[str, str, Path]]:
    """Write ``wanted``; returns those written."""
    if not wanted:
        return []
    secrets = known_secrets(state)
    done = []
    # Render from a redacted copy, so each format escapes the redaction marker like any other text; then redact
    # the text again, for whatever a format added of its own.
    redacted = SessionSummary.from_dict(redacted_report(summary, state))
    for name, option, path in wanted:
        try:
            fmt = config.hook.pytest_consistency_report_format(name=name, config=config)
            if fmt is None:
                raise UnknownFormat(
                    f"no report format {name!r} (built in: {', '.join(BUILTIN)}; others come from a "
                    "pytest_consistency_report_format hook)"
                )
            text = redact_text(fmt.render(redacted), secrets)
            if option == "$GITHUB_STEP_SUMMARY":  # appended: other steps of the job write there too
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(text)
            else:
                from pytest_consistency.report.json_report import write_text_atomic

                write_text_atomic(path, text)
        except Exception as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
            summary.errors.append(f"{option}: cannot write the {name} output to {path} ({reason})")
        else:
            done.append((name, option, path))
            if not again:
                state.written.append(f"{name}: {path}")
    return done


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


def settle_exit_status(session: pytest.Session, summary: SessionSummary, state: PluginState) -> None:
    """One story: tolerated failures do not fail the run; a failed verdict or gate does; ``passed`` follows."""
    failed = state.collector.failed_nodeids
    if (
        session.exitstatus == pytest.ExitCode.TESTS_FAILED
        and failed
        and failed <= state.tolerated
        and not state.collection_errors
    ):
        session.exitstatus = pytest.ExitCode.OK
    if summary.run.shard is not None:
        # One shard of a run: its tasks' failures and its gates are the merge's to judge; what broke is its own.
        broke = shard_broke(summary, state)
        # A shard dealt no task (3 shards, 2 tasks) is not broken: it ran its share, which was nothing.
        deferred = (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED)
        if session.exitstatus in deferred and not broke:
            session.exitstatus = pytest.ExitCode.OK
        elif broke and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    elif (not summary.passed or summary.errors) and session.exitstatus in (
        pytest.ExitCode.OK,
        pytest.ExitCode.NO_TESTS_COLLECTED,
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    summary.exit_status = int(session.exitstatus)
    summary.passed = summary.exit_status == pytest.ExitCode.OK


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


def redacted_report(summary: SessionSummary, state: PluginState) -> dict[str, Any]:
    """The report's data with every secret redacted, computed once for the JSON report and every other output.

    Only ``errors`` change after the verdict is settled (an output that cannot be written, a hook that raised), so
    the data is computed again only when they did; at 10,000 tasks x 10 redaction is the costliest step of the end.
    """
    errors = tuple(summary.errors)
    key = (*errors, f"exit status {summary.exit_status}")  # errors and the status they settle change together
    if state.redacted is None or state.redacted[0] != key:
        state.redacted = (key, redact_strings(summary.to_dict(), known_secrets(state)))
    return state.redacted[1]


def write_report(path: Path, summary: SessionSummary, state: PluginState) -> None:
    from pytest_consistency.report.json_report import write_atomic  # only for a session that writes its report

    try:
        write_atomic(path, redacted_report(summary, state))
    except (OSError, ValueError, TypeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        error = f"cannot write the report to {path} ({reason}); choose a writable path with --consistency-report"
        if error not in summary.errors:
            summary.errors.append(error)
        state.report_path = None
    else:
        state.report_path = str(path)


def annotate_junit(config: pytest.Config) -> None:
    """Rewrite pytest's ``--junitxml`` file with the consistency properties; a failure is an error naming itself."""
    state = config.stash[STATE]
    xmlpath = getattr(config.option, "xmlpath", None)
    summary = state.summary
    if not xmlpath or summary is None or not summary.tasks:
        return
    path = Path(xmlpath).expanduser().absolute()
    try:
        from pytest_consistency.report import junit

        junit.annotate(path, summary, known_secrets(state))
    except Exception as exc:
        summary.errors.append(
            f"--junitxml: cannot add the consistency properties to {path} ({type(exc).__name__}: {exc})"
        )


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
