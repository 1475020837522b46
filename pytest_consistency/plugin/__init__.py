"""pytest-consistency's hooks and fixtures: the table of contents of the plugin.

Each hook delegates to the module that owns the concern: ``marker`` (repetitions), ``settings`` (options),
``repetition`` and ``collect`` (what a repetition produced and how it reaches the controller), ``summary``
(figures and gates), ``terminal`` and ``report`` (output).
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from collections.abc import Generator, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import pytest

from pytest_consistency import report as formats
from pytest_consistency.analysis.adaptive import decided, refused_with_adaptive
from pytest_consistency.analysis.answers import default_equivalent, default_normalize
from pytest_consistency.analysis.gates import GATES
from pytest_consistency.analysis.infrastructure import call_reason, exception_reason
from pytest_consistency.capture.active import ActiveRepetition, Consistency, activate
from pytest_consistency.capture.observe import observe_transports
from pytest_consistency.cassette import paths
from pytest_consistency.cassette import tree as cassette_tree
from pytest_consistency.cassette.matching import MatchRules, compile_rules
from pytest_consistency.config import settings, shard
from pytest_consistency.config.marker import MARKER, MARKER_DOC, PARAM, MarkerError, repetition_id, task_id_of
from pytest_consistency.model.records import RepetitionResult
from pytest_consistency.plugin import hookspecs
from pytest_consistency.plugin.collect import ATTRIBUTE, MARKED, adds_nothing, payload, phase_outcome, sent
from pytest_consistency.plugin.secrets import SecretsHooks
from pytest_consistency.plugin.state import ACTIVE, SPEC, STATE, PluginState, is_worker, marker_of
from pytest_consistency.report import Format
from pytest_consistency.route import providers
from pytest_consistency.route.doctor import cross_route_problems
from pytest_consistency.route.providers import Provider
from pytest_consistency.route.resolve import resolve_route
from pytest_consistency.route.route import Route, stand_in_keys, stand_in_variables
from pytest_consistency.secrets.literals import redact_text
from pytest_consistency.shared.board import Board
from pytest_consistency.shared.ledger import Ledger
from pytest_consistency.shared.scratch import Scratch

#: The fixtures of each provider's route: a session that uses one needs that route to be usable.
ROUTE_FIXTURES = {
    "openai": frozenset({"pinned_route", "pinned_client", "async_pinned_client"}),
    "anthropic": frozenset({"pinned_anthropic_route", "pinned_anthropic_client", "async_pinned_anthropic_client"}),
}
LEDGER_KEY = "consistency_token_ledger"
THROTTLE_KEY = "consistency_throttle_dir"
BOARD_KEY = "consistency_adaptive_board"
SCRATCH = pytest.StashKey[Scratch]()
CASSETTE_EXISTED = pytest.StashKey[bool]()
SCOPE = pytest.StashKey[ExitStack]()
#: Call phases run so far for this repetition (more than one: a retry plugin ran it again).
CALL_ATTEMPTS = pytest.StashKey[int]()
#: A repetition the setup wrapper refused ("fail") or curtailed ("skip"), with the reason.
STOP = pytest.StashKey[tuple[Literal["fail", "skip"], str]]()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_DOC)
    scratch = config.stash[SCRATCH] = Scratch()  # removed at unconfigure, even if configure fails below
    state = PluginState(settings=settings.resolve(config))
    for name in ROUTE_FIXTURES:
        provider = config.hook.pytest_consistency_provider(name=name, config=config)
        if provider is None:
            raise pytest.UsageError(f"pytest-consistency: no provider called {name!r}")
        state.providers[name] = provider
        state.routes[name] = resolve_route(state.settings, os.environ, provider)
    for name, problems in cross_route_problems(state.routes, bool(state.settings["consistency_same_gateway"])).items():
        route = state.routes[name]
        state.routes[name] = replace(route, problems=(*route.problems, *problems))
    state.route = state.routes["openai"]
    concurrency, rpm = state.settings["consistency_concurrency"], state.settings["consistency_rpm"]
    if concurrency or rpm:
        from pytest_consistency.shared.throttle import Throttle

        workerinput = getattr(config, "workerinput", {})
        directory = scratch.directory(workerinput.get(THROTTLE_KEY), "consistency-throttle-")
        state.throttles = {name: Throttle(directory, name, concurrency, rpm) for name in state.routes}
    budget = state.settings["consistency_token_budget"]
    if budget:
        workerinput = getattr(config, "workerinput", {})
        handed = workerinput.get(LEDGER_KEY)
        path = Path(handed) if handed else scratch.directory(None, "consistency-") / "tokens"
        state.ledger = Ledger(path, int(budget))
    if state.settings["consistency_adaptive"]:
        refuse_figure_gates(state)
        workerinput = getattr(config, "workerinput", {})
        state.board = Board(scratch.directory(workerinput.get(BOARD_KEY), "consistency-adaptive-"))
    state.cassette_root = state.settings.path("consistency_cassettes") or config.rootpath / "cassettes"
    ignore = state.settings["consistency_ignore_url"]
    state.ignore = (re.compile(ignore),) if ignore else ()
    if state.settings["consistency_resample"] is not None:
        from pytest_consistency.resample.plan import ResampleError
        from pytest_consistency.resample.session import configure as configure_resample

        try:
            state.resample = configure_resample(state, config.rootpath)
        except ResampleError as exc:
            raise pytest.UsageError(str(exc)) from None
    config.stash[STATE] = state
    config.pluginmanager.register(SetupStop(), "consistency-setup-stop")
    config.pluginmanager.register(SecretsHooks(config), "consistency-secrets")
    if not is_worker(config):
        config.pluginmanager.register(Controller(config), "consistency-controller")
        config.pluginmanager.register(JUnitAnnotator(config), "consistency-junit")


def pytest_report_header(config: pytest.Config) -> list[str]:
    """A resample session says what it resamples and what the live samples will cost, before anything is sent."""
    state = config.stash.get(STATE, None)
    return [] if state is None or state.resample is None else state.resample.header()


def pytest_unconfigure(config: pytest.Config) -> None:
    observer = config.stash[STATE].observer if STATE in config.stash else None
    if observer is not None:
        observer.close()
    if SCRATCH in config.stash:
        config.stash[SCRATCH].remove()


def observe_session(state: PluginState) -> None:
    """The transport observer for the rest of the session (``--consistency-record=off``), entered once."""
    if state.observer is None:
        state.observer = ExitStack()
        state.observer.enter_context(observe_transports(state.ledger, state.ignore, state.throttles, marked_only=True))


@contextmanager
def replay_only_scope(active: ActiveRepetition, state: PluginState) -> Iterator[None]:
    """A replay-only repetition without a cassette file: every request it sends is unrecorded. The plugin's
    transports refuse httpx and httpx2 requests themselves (``cassette_absent``), the network block everything
    else, and the observer records what was refused (as ``cassettes.repetition_scope`` does for this case)."""
    from pytest_consistency.capture.network import (  # as ``off`` never blocks, it never loads the block
        REPLAY_ONLY,
        blocked,
    )

    active.cassette_absent = True
    with blocked(REPLAY_ONLY), observe_transports(state.ledger, state.ignore, state.throttles):
        yield


def cassettes_of(state: PluginState) -> ModuleType:
    """The ``cassettes`` module, with this session's match rules handed to it once.

    Looked up in ``sys.modules``, not as an attribute of the package: a module first loaded inside one in-process
    session (pytester) is dropped from ``sys.modules`` after it, while the package keeps the stale attribute, and
    the next session would set its rules on a copy that its own replay code no longer uses.
    """
    cassettes = importlib.import_module("pytest_consistency.cassette.cassettes")

    if state.match_rules is not None:
        cassettes.set_match_rules(state.match_rules)
        state.match_rules = None
    return cassettes


def route_keys(state: PluginState) -> dict[str, str]:
    """The pinned routes' key fingerprints by provider (for the cassettes), computed once per session."""
    if state.route_keys is None:
        state.route_keys = {name: r.key_fingerprint for name, r in state.routes.items() if r.key_fingerprint}
    return dict(state.route_keys)


def route_secrets(state: PluginState) -> list[str]:
    """The routes' own keys (never written to a cassette), once per session: the routes do not change."""
    if state.route_secrets is None:
        state.route_secrets = [r.api_key for r in state.routes.values() if r.api_key and not r.replay_only]
    return state.route_secrets


def refuse_figure_gates(state: PluginState) -> None:
    """Adaptive mode keeps verdicts, not figures: a gate on a figure of fewer repetitions would mislead."""
    thresholds = {g.dest: state.settings[g.dest] for g in GATES}
    problem = refused_with_adaptive(
        thresholds, state.settings["consistency_suite_regression"], "--consistency-adaptive"
    )
    if problem is not None:
        raise pytest.UsageError(problem)


# --- default implementations of our own hooks -------------------------------------------------------------


@pytest.hookimpl(trylast=True)
def pytest_consistency_normalize_answer(answer: Any, task_id: str) -> Any:
    return default_normalize(answer)


@pytest.hookimpl(trylast=True)
def pytest_consistency_report_format(name: str, config: pytest.Config) -> Format | None:
    return formats.builtin(name)


@pytest.hookimpl(trylast=True)
def pytest_consistency_provider(name: str, config: pytest.Config) -> Provider | None:
    return providers.builtin(name)


@pytest.hookimpl(trylast=True)
def pytest_consistency_answers_equivalent(left: Any, right: Any, task_id: str) -> bool:
    return default_equivalent(left, right)


# --- collection: one item per repetition -----------------------------------------------------------------


@pytest.hookimpl(trylast=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("repeat_consistency")
    if marker is None:
        return
    try:
        spec = metafunc.config.stash[STATE].spec(marker)
        problem = None
    except MarkerError as exc:
        problem = str(exc)
    if problem is None:
        problem = repeat_plugin_problem(metafunc)
    if problem is not None:  # outside the except block, so the error shows without a chained traceback
        pytest.fail(f"{metafunc.definition.nodeid}: @pytest.mark.repeat_consistency: {problem}", pytrace=False)
    resample = metafunc.config.stash[STATE].resample
    count = spec.n if resample is None else resample.repetitions(metafunc.definition.nodeid, spec.n)
    metafunc.fixturenames.append(PARAM)
    metafunc.parametrize(PARAM, range(1, count + 1), indirect=True, ids=repetition_id)


def repeat_plugin_problem(metafunc: pytest.Metafunc) -> str | None:
    """pytest-repeat (``--count``, ``@pytest.mark.repeat``) on a marked task would make n x count items of which
    the task counts n: every task would read ``incomplete``. Refused, naming the fix."""
    count = getattr(metafunc.config.option, "count", None)
    marker = metafunc.definition.get_closest_marker("repeat")
    if marker is not None and marker.args:
        count = marker.args[0]  # as pytest-repeat reads it: the marker wins over --count
    if isinstance(count, int) and count > 1:
        what = f"--count={count}" if marker is None else f"@pytest.mark.repeat({count})"
        return (
            f"pytest-repeat's {what} would repeat a task that repeat_consistency already repeats. Use "
            "repeat_consistency(n=...) for the repetitions, and drop --count (or run the marked tests apart)"
        )
    return None


@pytest.fixture
def _consistency_repetition(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Number the items before any selection (``-k``, ``-m``, shard plugins): every shard of a suite then gives a
    task the same position, and a merged report lists tasks as one run over everything would."""
    state = config.stash[STATE]
    for index, item in enumerate(items):
        state.order.setdefault(item.nodeid, index)
    spec = state.settings["consistency_shard"]
    if spec is not None:
        kept, dropped = shard.select(items, *spec)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    if state.resample is not None:  # only the target task's samples run
        kept, dropped, problem = state.resample.select(items, lambda item: resample_task_and_n(item, state))
        if problem is not None and not is_worker(config):
            raise pytest.UsageError(problem)
        if problem is not None:  # an xdist worker cannot stop the session: one item fails with the message
            kept, dropped = items[:1], items[1:]
            for item in kept:
                item.stash[STOP] = ("fail", problem)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """pytest's walk leaves out the directories that hold only the plugin's cassettes (see ``cassette_tree``); not
    ``tryfirst``, so that a conftest's own answer wins."""
    state = config.stash.get(STATE, None)
    if state is None or not cassette_tree.skip(collection_path, state.cassette_root, config, state.cassette_dirs):
        return None
    return True


def resample_task_of(item: pytest.Item) -> str | None:
    """The task id of a marked repetition item, None for any other item."""
    callspec = getattr(item, "callspec", None)
    if marker_of(item) is None or callspec is None or PARAM not in callspec.params:
        return None
    return task_id_of(item.nodeid, int(callspec.params[PARAM]))


def resample_task_and_n(item: pytest.Item, state: PluginState) -> tuple[str, int, int] | None:
    """(task id, repetition, the n its marker asks for) of a marked repetition item; None for any other item."""
    marker, task = marker_of(item), resample_task_of(item)
    if marker is None or task is None:
        return None
    return task, int(item.callspec.params[PARAM]), state.spec(marker).n  # type: ignore[attr-defined]


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    state = session.config.stash[STATE]
    items = session.items
    for item in items:
        marker = marker_of(item)
        callspec = getattr(item, "callspec", None)
        if marker is not None and callspec is not None and PARAM in callspec.params:
            item.stash[SPEC] = state.spec(marker)
            if state.resample is not None and state.resample.covers(resample_task_of(item)):
                item.stash[SPEC] = state.resample.spec(item.stash[SPEC])
    for name, fixtures in ROUTE_FIXTURES.items():
        route = state.routes.get(name)
        if route is None or not any(fixtures & set(getattr(item, "fixturenames", ())) for item in items):
            continue
        state.used_routes.add(name)
        if route.problems and not is_worker(session.config):
            # An xdist worker cannot stop the session from collection; there the route fixture fails every
            # test that uses it, with the same message, before any call is made.
            raise pytest.UsageError(route.error_message())
    # Compiled here (a bad rule is an error of the session), handed to ``cassettes`` when it is loaded: now if it
    # already is, else at the first cassette scope (a session without one never loads it).
    state.match_rules = match_rules(session.config, state.settings["consistency_match_ignore"])
    if "pytest_consistency.cassette.cassettes" in sys.modules:
        cassettes_of(state)
    if state.settings["consistency_preflight"] and state.settings["consistency_record"] != "none":
        # The clients and their providers' SDK glue: only for a live session (``sys.modules``: see ``cassettes_of``).
        preflight = importlib.import_module("pytest_consistency.capture.preflight")

        state.preflight, problems = preflight.check_used(state.routes, state.used_routes)
        for name, problem in problems.items():
            if not is_worker(session.config):
                raise pytest.UsageError(problem)
            state.routes[name] = replace(state.routes[name], problems=(*state.routes[name].problems, problem))


def match_rules(config: pytest.Config, rules: tuple[str, ...]) -> MatchRules:
    """What replays leave out of body matching, once every conftest is loaded (after collection)."""
    hook = config.hook.pytest_consistency_normalize_request
    if not hook.get_hookimpls():
        return compile_rules(rules)
    return compile_rules(rules, lambda body, url: hook(body=body, url=url))


# --- running a repetition --------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    spec = item.stash.get(SPEC, None)
    if spec is not None:
        repeat = int(item.callspec.params[PARAM])  # type: ignore[attr-defined]
        active = ActiveRepetition(task_id=task_id_of(item.nodeid, repeat), repeat=repeat, n=spec.n, marked=True)
        item.stash[ACTIVE] = active
        activate(active)
    try:
        return (yield)
    finally:
        activate(None)
        # Teardown closes the repetition's cassette scope; when the protocol is cut short (pytest.exit or Ctrl-C
        # during the call) teardown never runs, and vcrpy's patches would outlive the repetition in this process.
        stack = item.stash.get(SCOPE, None)
        if stack is not None:
            del item.stash[SCOPE]
            stack.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Enter the repetition's cassette, network block and observer before its fixtures are set up.

    In setup, not around the whole protocol, so that a cassette that cannot be read fails this repetition (a
    setup error naming the file) instead of the session.
    """
    state = item.config.stash[STATE]
    active = item.stash.get(ACTIVE, None)
    mode = state.settings["consistency_record"]
    if active is not None and item.stash.get(CALL_ATTEMPTS, 0):
        # A retry plugin runs the repetition again: this attempt records its own answer (the first is kept).
        active.answer_recorded, active.answer, active.normalized = False, None, None
    # A repetition refused or curtailed here fails or skips in ``stop_before_setup`` (a plain hook), not in this
    # wrapper: raising before the other wrappers (pytest's logging plugin) set the item up gives every such
    # repetition a stray teardown error. Nothing is entered for it.
    problem = marker_problem(item)
    if problem:
        item.stash[STOP] = ("fail", f"{item.nodeid}: @pytest.mark.repeat_consistency: {problem}")
        return (yield)
    if active is not None and active.marked and mode != "off" and item.get_closest_marker("vcr"):
        item.stash[STOP] = (
            "fail",
            f"{item.nodeid}: both pytest-recording (@pytest.mark.vcr) and pytest-consistency would patch this "
            "test's HTTP traffic. Repeated tasks get one cassette per repetition from pytest-consistency: remove "
            "@pytest.mark.vcr here, or pass --consistency-record=off to leave recording to pytest-recording.",
        )
        return (yield)
    if active is not None and active.marked and state.board is not None:
        reason = curtail(item, state, state.board, active)
        if reason is not None:
            item.stash[STOP] = ("skip", reason)
            return (yield)
    if active is not None and active.marked:
        path = None  # no cassette without recording: nothing to name or look up (a measurable cost per repetition)
        if mode != "off":
            folder = paths.task_directory(state.cassette_root, active.task_id)
            path = folder / f"rep-{active.repeat}{paths.SUFFIXES[state.settings['consistency_cassette_format']]}"
            if state.resample is not None and state.resample.covers(active.task_id):
                path, mode = state.resample.sample_scope(active.repeat)  # this repetition is sample ``repeat``
                active.cassette = display_path(path, item.config.rootpath)
            else:
                active.cassette = os.path.join(display_path(folder, item.config.rootpath), path.name)
            existed = item.stash[CASSETTE_EXISTED] = paths.cassette_exists(path)
            other = paths.other_format(path) if not existed and mode in ("once", "new_episodes") else None
            if other is not None:
                # Recording would call the model live for a repetition that is recorded already, in the other
                # format (a switch of --consistency-cassette-format without converting): never silently. (A replay
                # names the other file only if a request finds no cassette: see ``other_format_shown``.)
                wanted = state.settings["consistency_cassette_format"]
                item.stash[STOP] = (
                    "fail",
                    f"{item.nodeid}: refusing to record {active.cassette} live: "
                    f"{paths.format_hint(display_path(other, item.config.rootpath), wanted)} (or re-record with "
                    "--consistency-record=all)",
                )
                return (yield)
        active.recording = mode != "none"
        active.replaying = mode == "none" or (mode == "once" and item.stash.get(CASSETTE_EXISTED, False))
        if mode == "off":
            # No cassette and no network block: all a repetition would enter is the observer, entered once for
            # the session instead (it records only while a marked repetition runs).
            observe_session(state)
            return (yield)
        stack = ExitStack()
        item.stash[SCOPE] = stack
        if active.replaying:
            # A replay sends nothing, but a client the agent builds itself (``openai.OpenAI()``) raises without a
            # key before any request: it gets a stand-in key where none is set, until the repetition ends.
            variables = stand_in_variables(state.routes.values(), os.environ)
            active.stand_in = stack.enter_context(stand_in_keys(variables)) if variables else ()
        if mode == "none" and not item.stash.get(CASSETTE_EXISTED, False):
            # Nothing to replay: what ``cassettes.repetition_scope`` enters for it (the network block and the
            # observer, no vcrpy), without loading ``cassettes`` for a session that may have no cassette at all.
            def scope(cassette: Path | None) -> Any:
                return replay_only_scope(active, state)

        else:
            cassettes = cassettes_of(state)
            scrubber = cassettes.Scrubber(None, state.ignore, route_keys(state))
            scrubber.secrets.update(route_secrets(state))

            def scope(cassette: Path | None) -> Any:
                return cassettes.repetition_scope(
                    cassette,
                    mode,
                    scrubber,
                    cassettes.rerecord_advice(item.nodeid),
                    lambda: not active.broken,
                    lambda: observe_transports(
                        state.ledger, state.ignore, state.throttles, unpatched=cassettes.unpatched_network
                    ),
                    item.stash.get(CASSETTE_EXISTED, False) if cassette is not None else None,
                )

        try:
            stack.enter_context(scope(path))
            if state.resample is not None and state.resample.covers(active.task_id):
                state.resample.guard(active)
        except Exception as exc:
            from pytest_consistency.cassette.cassettes import CassetteError

            if not isinstance(exc, CassetteError):
                raise
            # pytest's own setup must still run (its teardown expects it), under the network block but with no
            # cassette; then this repetition errors with the message that names the file.
            stack.enter_context(scope(None))
            yield
            raise exc from None
    return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """After the fixtures are torn down: charge unclosed responses, then save the cassette (errors fail here)."""
    try:
        return (yield)
    finally:
        active = item.stash.get(ACTIVE, None)
        if active is not None:
            for attempt in list(active.open_attempts):
                attempt.finish()
        stack = item.stash.get(SCOPE, None)
        if stack is not None:
            del item.stash[SCOPE]
            stack.close()


class SetupStop:
    """Fail or skip a repetition that the setup wrapper refused or curtailed, once every wrapper has set it up
    (a plain hook, so it runs inside pytest's own wrappers; a module holds one implementation per hook name)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        stop = item.stash.get(STOP, None)
        if stop is not None:
            kind, reason = stop
            if kind == "skip":
                pytest.skip(reason)
            pytest.fail(reason, pytrace=False)


def curtail(item: pytest.Item, state: PluginState, board: Board, active: ActiveRepetition) -> str | None:
    """Why this repetition is skipped when its task's verdict is already decided (adaptive mode, beyond n_min)."""
    spec = item.stash[SPEC]
    if active.repeat <= state.settings["consistency_n_min"]:
        return None
    tally = board.tally(active.task_id)
    verdict = decided(tally.passes, tally.failures, spec.n, spec.min_pass)
    if verdict is None or tally.skipped:
        return None
    active.curtailed = True
    return (
        f"curtailed (--consistency-adaptive): {active.task_id} is a {verdict} whatever the remaining "
        f"repetitions do ({tally.passes} passed, {tally.failures} failed of n={spec.n}, min_pass {spec.min_pass:g})"
    )


def board_outcome(report: pytest.TestReport, curtailed: bool) -> Literal["pass", "fail", "skip"] | None:
    """A repetition's outcome for the adaptive board, from the phase that decides it (None: not decided here)."""
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.skipped:
            return "fail" if xfail else "skip"
        return "pass" if report.passed else "fail"
    if report.when == "setup" and (report.failed or (report.skipped and xfail)):
        return "fail"
    if report.when == "setup" and report.skipped and not curtailed:
        return "skip"
    return None


def marker_problem(item: pytest.Item) -> str | None:
    """A marker that would otherwise be ignored silently: stacked twice, or on a unittest.TestCase method."""
    own = [m for m in getattr(item, "own_markers", []) if m.name == MARKER]
    if len(own) > 1:
        return f"applied {len(own)} times to one test; keep one marker (the arguments of the others would be lost)"
    if SPEC not in item.stash and marker_of(item) is not None:
        return (
            "not supported on unittest.TestCase methods (they cannot be parametrized into repetitions); "
            "write the task as a plain pytest test function or method"
        )
    return None


@functools.lru_cache(maxsize=1024)
def display_path(path: Path, rootpath: Path) -> str:
    """The path relative to rootdir when it is inside it, else absolute."""
    try:
        return str(path.relative_to(rootpath))
    except ValueError:
        return str(path)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    active = item.stash.get(ACTIVE, None)
    spec = item.stash.get(SPEC, None)
    if active is not None and spec is not None:
        state = item.config.stash[STATE]
        infrastructure = message = None
        if report.when == "call" and not report.failed:
            # A replay mismatch or a refused call the agent caught: the repetition passed on something the setup
            # could not answer, so it is still the setup's failure, never a pass.
            infrastructure = call_reason(active.calls)
        if report.failed:
            raised = call.excinfo.value if call.excinfo else None
            infrastructure = exception_reason(raised, active.replaying, active.stand_in) or call_reason(active.calls)
            message = failure_message(call, report, state)
            expected = call.excinfo is not None and call.excinfo.errisinstance((AssertionError, pytest.fail.Exception))
            if not expected and not state.settings["consistency_record_on_exception"]:
                active.broken = True  # an unfinished trajectory: its recording is dropped
            mismatched = active.cassette and any(c.error == "replay_mismatch" for c in active.calls)
            if mismatched:  # only a replay loaded ``cassettes``
                cassettes = importlib.import_module("pytest_consistency.cassette.cassettes")  # see ``cassettes_of``
                mismatched = call.excinfo is None or not call.excinfo.errisinstance(cassettes.CassetteError)
            if mismatched:
                report.longrepr = cassettes.mismatch_message(
                    item.nodeid,
                    active.repeat,
                    active.cassette,
                    item.stash.get(CASSETTE_EXISTED, False),
                    active.calls,
                    other_format_shown(item, active),
                ) + (f"\n\nThe test then failed with: {_first_line(call.excinfo)}" if call.excinfo else "")
                if state.resample is not None and state.resample.covers(active.task_id):
                    prefix = state.resample.mismatch_message(active.repeat, active.calls)
                    report.longrepr = report.longrepr if prefix is None else f"{prefix}\n\n{report.longrepr}"
        if state.board is not None and active.marked:
            outcome = board_outcome(report, active.curtailed)
            if outcome is not None:
                state.board.record(active.task_id, item.nodeid, outcome)
        if state.equivalence_plugins is None:  # conftests register before the first test runs
            hook = item.config.hook.pytest_consistency_answers_equivalent
            state.equivalence_plugins = [impl.plugin_name for impl in hook.get_hookimpls()]
        if report.when == "call":
            note_attempt(item, active, report, message)
        if adds_nothing(report, active):
            setattr(report, MARKED, True)
        else:
            result = RepetitionResult(
                task_id=active.task_id,
                nodeid=item.nodeid,
                repeat=active.repeat,
                n=spec.n,
                k=spec.k,
                min_pass=spec.min_pass,
                order=state.order.get(item.nodeid, 0),
            )
            setattr(report, ATTRIBUTE, payload(active, result, state.equivalence_plugins, infrastructure, message))
            if report.when == "call":
                sent(active)
    return report


def other_format_shown(item: pytest.Item, active: ActiveRepetition) -> str | None:
    """A missing cassette's file in the other format (``--consistency-cassette-format``), as shown, when it is there:
    looked up only when a request found no cassette, not in every repetition's setup."""
    if item.stash.get(CASSETTE_EXISTED, False) or not active.cassette:
        return None
    other = paths.other_format(item.config.rootpath / active.cassette)
    return None if other is None else display_path(other, item.config.rootpath)


def failure_message(call: pytest.CallInfo[None], report: pytest.TestReport, state: PluginState) -> str:
    """Why the repetition failed, in one line, with every key this process knows redacted: it travels with the
    repetition into the report, JUnit, Markdown and the HTML page, where a CI reviewer reads it."""
    if call.excinfo is not None:
        text = _first_line(call.excinfo)
    else:
        lines = str(report.longreprtext).strip().splitlines()
        text = lines[-1][:300] if lines else report.when + " failed"
    secrets = [r.api_key for r in state.routes.values() if r.api_key and not r.replay_only]
    return redact_text(text, secrets)


def note_attempt(item: pytest.Item, active: ActiveRepetition, report: pytest.TestReport, message: str | None) -> None:
    """Count the call phases of this repetition: a retry plugin (flaky, pytest-retry, pytest-rerunfailures) runs it
    again in the same protocol. The first attempt's outcome and answer are kept: a failure that passes on retry
    is the inconsistency being measured."""
    attempts = item.stash.get(CALL_ATTEMPTS, 0) + 1
    item.stash[CALL_ATTEMPTS] = attempts
    active.attempts = attempts
    if attempts == 1:
        active.first_attempt = (
            phase_outcome(report),
            active.answer_recorded,
            active.answer,
            active.normalized,
            message,
        )


def _first_line(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """The exception in one line; vcrpy's own message (advice about options that do not exist here) is left out."""
    if type(excinfo.value).__name__ == "CannotOverwriteExistingCassetteException":
        return "no recorded response (vcrpy's CannotOverwriteExistingCassetteException)"
    lines = excinfo.exconly().splitlines()
    return lines[0][:300] if lines else excinfo.typename


@pytest.fixture
def consistency(request: pytest.FixtureRequest) -> Consistency:
    """Handle of the current repetition: ``record(answer)``, ``repeat``, ``n``, ``task_id``, ``calls``."""
    node = request.node
    active = node.stash.get(ACTIVE, None)
    if active is None:
        active = ActiveRepetition(task_id=node.nodeid, repeat=1, n=1, marked=False)
        node.stash[ACTIVE] = active
        activate(active)
    hook = request.config.hook.pytest_consistency_normalize_answer
    impls = hook.get_hookimpls()
    if len(impls) == 1 and impls[0].plugin is sys.modules[__name__]:
        # Only the documented default (no conftest hook, no wrapper): called directly, not through pluggy.
        return Consistency(active, lambda answer, task_id: default_normalize(answer))
    return Consistency(active, lambda answer, task_id: hook(answer=answer, task_id=task_id))


# --- the route ----------------------------------------------------------------------------------------


def _route(config: pytest.Config, name: str) -> Route:
    route = config.stash[STATE].routes[name]
    if route.problems:
        pytest.fail(route.error_message(), pytrace=False)
    return route


def _client(config: pytest.Config, route: Route, is_async: bool) -> Any:
    from pytest_consistency.capture.clients import (
        build_client,  # the clients' transports: only for a session that builds a client
    )

    state = config.stash[STATE]
    return build_client(
        route,
        state.ledger,
        is_async=is_async,
        provider=state.providers[route.provider],
        throttle=state.throttles.get(route.provider),
    )


@pytest.fixture(scope="session")
def pinned_route(pytestconfig: pytest.Config) -> Route:
    """The session's OpenAI route (base URL, model, key fingerprint, timeout, retries); ``api_key`` is never
    shown."""
    return _route(pytestconfig, "openai")


@pytest.fixture
def pinned_client(pinned_route: Route, pytestconfig: pytest.Config) -> Iterator[Any]:
    """``openai.OpenAI`` on the pinned route; every HTTP attempt is recorded on the current repetition."""
    client = _client(pytestconfig, pinned_route, is_async=False)
    yield client
    client.close()


@pytest.fixture
def async_pinned_client(pinned_route: Route, pytestconfig: pytest.Config) -> Any:
    """``openai.AsyncOpenAI`` on the pinned route.

    A plain (sync) fixture, so it works under pytest-asyncio's strict mode and anyio alike; its connections
    belong to the test's event loop, which is gone at teardown, so it is left to the garbage collector.
    """
    return _client(pytestconfig, pinned_route, is_async=True)


@pytest.fixture(scope="session")
def pinned_anthropic_route(pytestconfig: pytest.Config) -> Route:
    """The session's Anthropic route (ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN or ANTHROPIC_API_KEY,
    ANTHROPIC_MODEL, or their options)."""
    return _route(pytestconfig, "anthropic")


@pytest.fixture
def pinned_anthropic_client(pinned_anthropic_route: Route, pytestconfig: pytest.Config) -> Iterator[Any]:
    """``anthropic.Anthropic`` on the pinned Anthropic route; every HTTP attempt is recorded like the OpenAI
    client's."""
    client = _client(pytestconfig, pinned_anthropic_route, is_async=False)
    yield client
    client.close()


@pytest.fixture
def async_pinned_anthropic_client(pinned_anthropic_route: Route, pytestconfig: pytest.Config) -> Any:
    """``anthropic.AsyncAnthropic`` on the pinned Anthropic route (a sync fixture, as ``async_pinned_client``)."""
    return _client(pytestconfig, pinned_anthropic_route, is_async=True)


# --- the controller: collect, summarise, gate, print, write ---------------------------------------------


class Controller:
    """Hooks of the process that sees every report: the only process without xdist, the controller with it.

    Registered from ``pytest_configure`` so that it holds the config; workers never register it.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        state = self.config.stash[STATE]
        if state.settings["consistency_preflight"] and state.settings["consistency_record"] == "none":
            state.preflight = "skipped: cassettes are replayed only (--consistency-record=none), no live call"
        elif state.settings["consistency_preflight"] and self.config.pluginmanager.has_plugin("dsession"):
            # The routes are checked after collection (:mod:`.preflight`); under xdist only workers collect.
            state.preflight = "checked by each xdist worker, for the routes its tests use"

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        state = self.config.stash[STATE]
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
        self.config.stash[STATE].collector.add(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(
        self, report: pytest.TestReport, config: pytest.Config
    ) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        if not isinstance(report, pytest.TestReport) or not report.failed:  # only a failure can be tolerated
            return None
        from pytest_consistency.plugin.finish import (
            report_status,  # the session-end modules load when first needed, not with the plugin
        )

        return report_status(report, config.stash[STATE])

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.config.stash[STATE].collection_errors.add(report.nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        from pytest_consistency.plugin.finish import summarise

        summarise(session, exitstatus)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        from pytest_consistency.plugin.finish import print_summary

        print_summary(terminalreporter, self.config)


class JUnitAnnotator:
    """Adds the session's figures to pytest's own ``--junitxml`` file, once pytest has written it (trylast)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from pytest_consistency.plugin.finish import annotate_junit

        annotate_junit(self.config)
