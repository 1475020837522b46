"""A repetition's scope (:class:`RepetitionScope`): what is entered before its fixtures are set up and closed after
they are torn down, and the repetitions it refuses or curtails.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pytest

from pytest_consistency.analysis.adaptive import decided
from pytest_consistency.capture.active import ActiveRepetition, activate
from pytest_consistency.capture.observe import observe_transports
from pytest_consistency.cassette import paths
from pytest_consistency.cassette.match_rules import MatchRules, normalise
from pytest_consistency.config.marker import MARKER
from pytest_consistency.plugin.state import CassetteFolder, PluginState, Stop, Tracked, marker_of
from pytest_consistency.route.route import stand_in_keys, stand_in_variables
from pytest_consistency.shared.board import Board


def request_as_matched(rules: MatchRules, body: Any, url: str) -> Any:
    """A request body as the cassette matching compares it: what the rules ignore is left out."""
    return normalise(body, rules, url)


class RepetitionScope:
    """A repetition's life around pytest's own: the active repetition for the whole protocol; before its fixtures,
    its cassette (or the replay-only block), the network block and the observer, a stand-in key for a keyless
    replay; after them, the cassette saved. Registered as ``consistency-repetition-scope``."""

    def __init__(self, state: PluginState) -> None:
        self.state = state
        #: How a request body is normalised for the cause (the cassette matching's rules), once the rules are
        #: compiled (after collection): None when they leave the body as it is; False until first asked.
        self.normalize_request: Callable[[Any, str], Any] | bool | None = False

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        state = self.state
        running, state.item = state.item, item  # the ``consistency`` fixture's node
        tracked = state.items.get(item)
        spec = None if tracked is None else tracked.spec
        if tracked is None or spec is None:
            close_carried(state)  # no other test ever runs inside a repetition's block
        else:
            active = ActiveRepetition(task_id=tracked.task_id, repeat=tracked.repeat, n=spec.n, marked=True)
            active.route_hosts, active.warned_hosts = state.route_hosts(), state.warned_hosts
            if state.carried is not None and state.carried[0] != active.task_id:
                close_carried(state)
            normalize = self.normalize_request
            if normalize is False:  # the rules are compiled after collection, before the first protocol
                rules = state.match_rules
                normalize = self.normalize_request = (
                    functools.partial(request_as_matched, rules) if rules is not None and rules.active else None
                )
            active.normalize_request = normalize  # type: ignore[assignment]
            tracked.active = active
            activate(active)
        try:
            return (yield)
        finally:
            state.item = running
            activate(None)
            tracked = state.items.get(item)  # an unmarked test's handle is tracked from its fixture on
            if tracked is not None:
                # Its report has carried everything to the controller: an item kept until the session ends need
                # not keep its repetition (calls, notes, a lock) for the cyclic collector to walk.
                tracked.active = None
                # Teardown closes the repetition's cassette scope; when the protocol is cut short (pytest.exit or
                # Ctrl-C during the call) teardown never runs, and vcrpy's patches would outlive the repetition.
                stack, tracked.scope = tracked.scope, None
                if stack is not None:
                    stack.close()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Enter the repetition's cassette, network block and observer before its fixtures are set up, or fail or
        skip a repetition the plugin refuses or curtails.

        In setup, not around the whole protocol, so that a cassette that cannot be read fails this repetition (a
        setup error naming the file) instead of the session. A plain hook, not a wrapper: it runs inside every
        wrapper (pytest's logging and capture plugins set the item up in theirs), so that raising here is an
        ordinary setup failure, as a skip marker's is (``tryfirst``: before pytest's own setup of the fixtures).
        """
        state = self.state
        tracked = state.items.get(item)
        active = None if tracked is None else tracked.active
        if active is not None and tracked.attempts:  # type: ignore[union-attr]
            # A retry plugin runs the repetition again: this attempt records its own answer (the first is kept).
            active.answer_recorded, active.answer, active.normalized = False, None, None
        carried, state.carried = state.carried, None  # the previous repetition's of this task (see the teardown)
        stop = (None if tracked is None else tracked.stop) or self.refusal(item, tracked, state, active)
        if stop is not None:
            close(carried)
            halt(stop)
        if tracked is None or active is None or not active.marked:
            close(carried)
            return
        mode: str = state.settings.record
        path = None  # no cassette without recording: nothing to name or look up (a measurable cost per repetition)
        if mode != "off":
            path, mode, stop = self.cassette_of(item, tracked, state, active)
            if stop is not None:
                close(carried)
                halt(stop)
        active.recording = mode != "none"
        active.replaying = mode == "none" or (mode == "once" and tracked.existed)
        if carried is not None:
            if replay_only(mode, tracked):
                # The same scope as this repetition would enter, still open: adopted instead of left and re-entered.
                tracked.scope = carried[1]
                active.cassette_absent, active.stand_in = True, carried[2]
                if state.mode is not None:
                    state.mode.entered(active)
                return
            close(carried)
        if mode == "off":
            # No cassette and no network block: all a repetition would enter is the observer, entered once for
            # the session instead (it records only while a marked repetition runs).
            observe_session(state)
            return
        stack = tracked.scope = ExitStack()
        if active.replaying:
            # A replay sends nothing, but a client the agent builds itself (``openai.OpenAI()``) raises without a
            # key before any request: it gets a stand-in key where none is set, until the repetition ends.
            variables = stand_in_variables(state.routes.values(), os.environ)
            active.stand_in = stack.enter_context(stand_in_keys(variables)) if variables else ()
            if active.stand_in:  # and it never leaves the replay: refused at the network and to children
                from pytest_consistency.capture.standin import guard

                guard()
        scope = self.scope_of(item, tracked, state, active, mode)
        try:
            stack.enter_context(scope(path))
            if state.mode is not None:
                state.mode.entered(active)
        except Exception as exc:
            from pytest_consistency.cassette.messages import CassetteError

            if not isinstance(exc, CassetteError):
                raise
            # This repetition errors with the message that names the file; until its teardown, it is under the
            # network block with no cassette (nothing it sends goes out).
            stack.enter_context(scope(None))
            raise exc from None

    @staticmethod
    def refusal(
        item: pytest.Item, tracked: Tracked | None, state: PluginState, active: ActiveRepetition | None
    ) -> Stop | None:
        """Why this item must not run as it is: a misplaced marker, pytest-recording's marker on a repetition, or
        (adaptive mode) a task whose verdict is decided already."""
        if tracked is None or active is None or not active.marked:
            problem = marker_problem(item, tracked)
            return ("fail", f"{item.nodeid}: @pytest.mark.repeat_consistency: {problem}") if problem else None
        # A task's repetitions share its markers: looked at once per task, not once per repetition.
        checks = state.task_markers.get(active.task_id)
        if checks is None:
            problem = marker_problem(item, tracked)
            checks = state.task_markers[active.task_id] = (problem, bool(item.get_closest_marker("vcr")))
        problem, vcr = checks
        if problem:
            return "fail", f"{item.nodeid}: @pytest.mark.repeat_consistency: {problem}"
        if state.settings.record != "off" and vcr:
            return (
                "fail",
                f"{item.nodeid}: both pytest-recording (@pytest.mark.vcr) and pytest-consistency would patch this "
                "test's HTTP traffic. Repeated tasks get one cassette per repetition from pytest-consistency: remove "
                "@pytest.mark.vcr here, or pass --consistency-record=off to leave recording to pytest-recording.",
            )
        if state.board is not None and (state.settings.sequential or state.settings.adaptive):
            if state.settings.sequential:
                reason = not_needed(tracked, state, state.board, active, item)
            else:
                reason = curtail(tracked, state, state.board, active)
            if reason is not None:
                return "skip", reason
        return None

    @staticmethod
    def cassette_of(
        item: pytest.Item, tracked: Tracked, state: PluginState, active: ActiveRepetition
    ) -> tuple[Path | None, str, Stop | None]:
        """The repetition's cassette file and its record mode (a session mode may give an item its own of both), or
        why it must not be recorded. No file (None) in replay-only mode when the task has no cassette folder: nothing
        records, and the replay-only block names no file."""
        mode: str = state.settings.record
        wanted = state.settings.cassette_format
        own = None
        if state.mode is not None:  # a session mode (re-judging, resampling) may give an item its own cassette
            own = state.mode.cassette(
                active.task_id, active.repeat, cassette_folder(state, active.task_id, item).directory
            )
        if own is not None:
            path, mode, stop = own
            if stop is not None:
                return None, mode, stop
            active.cassette = display_path(path, item.config.rootpath)
        else:
            folder = cassette_folder(state, active.task_id, item)
            name = f"rep-{active.repeat}{paths.SUFFIXES[wanted]}"
            active.cassette = folder.prefix + name
            if mode == "none":  # nothing records in this mode: a task without a folder is looked at once
                if folder.present is None:
                    folder.present = folder.directory.is_dir()
                if not folder.present:
                    tracked.existed = False
                    return None, mode, None
            path = folder.directory / name
        existed = tracked.existed = paths.cassette_exists(path)
        other = paths.other_format(path) if not existed and mode in ("once", "new_episodes") else None
        if other is None:
            return path, mode, None
        # Recording would call the model live for a repetition that is recorded already, in the other format (a
        # switch of --consistency-cassette-format without converting): never silently. (A replay names the other
        # file only if a request finds no cassette: see ``outcome.other_format_shown``.)
        hint = paths.format_hint(display_path(other, item.config.rootpath), wanted)
        reason = f"{item.nodeid}: refusing to record {active.cassette} live: {hint} (or re-record with "
        return path, mode, ("fail", reason + "--consistency-record=all)")

    @staticmethod
    def scope_of(
        item: pytest.Item, tracked: Tracked, state: PluginState, active: ActiveRepetition, mode: str
    ) -> Callable[[Path | None], AbstractContextManager[Any]]:
        """What a cassette (or none) is entered with: the replay-only block when there is nothing to replay, else
        the cassette's own scope (vcrpy, the scrubber, the observer)."""
        if replay_only(mode, tracked):
            # Nothing to replay: what ``cassette.scope.repetition_scope`` enters for it (the network block and the
            # observer, no vcrpy), without loading the cassette wing for a session that may have no cassette.
            return lambda cassette: replay_only_scope(active, state)
        from pytest_consistency.cassette.messages import rerecord_advice
        from pytest_consistency.cassette.scope import repetition_scope
        from pytest_consistency.cassette.scrub import Scrubber

        scrubber = Scrubber(None, state.ignore, route_keys(state))
        scrubber.secrets.update(route_secrets(state))

        def scope(cassette: Path | None) -> AbstractContextManager[Any]:
            return repetition_scope(
                cassette,
                mode,
                scrubber,
                rerecord_advice(item.nodeid),
                lambda: not active.broken,
                lambda unpatched: observe_transports(state.ledger, state.ignore, state.throttles, unpatched=unpatched),
                tracked.existed if cassette is not None else None,
                state.match_rules,
            )

        return scope

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
        """After the fixtures are torn down: charge unclosed responses, then save the cassette (errors fail here).

        A replay-only repetition without a cassette entered nothing of its own (the network block, the observer,
        the stand-in keys): when the next item is a repetition of the same task, that scope stays open for it
        (``state.carried``) instead of being left here and entered again there. Any other item closes it first.
        """
        try:
            return (yield)
        finally:
            state = self.state
            tracked = state.items.get(item)
            if tracked is not None:
                active = tracked.active
                if active is not None:
                    for attempt in list(active.open_attempts):
                        attempt.finish()
                    if not active.marked:  # an unmarked test's handle (``consistency``) ends with its fixtures
                        activate(None)
                stack, tracked.scope = tracked.scope, None
                if stack is not None:
                    if active is not None and active.cassette_absent and same_task(state, nextitem, active.task_id):
                        state.carried = (active.task_id, stack, active.stand_in)
                    else:
                        stack.close()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """A scope left open for a repetition that never ran (``-x``, ``--maxfail``, an interrupt) closes here."""
        close_carried(self.state)


def halt(stop: Stop) -> NoReturn:
    """Fail or skip the repetition being set up, with the reason the setup gives."""
    kind, reason = stop
    if kind == "skip":
        pytest.skip(reason)
    pytest.fail(reason, pytrace=False)


def replay_only(mode: str, tracked: Tracked) -> bool:
    """Whether a repetition replays without a cassette file: it enters the replay-only block, no vcrpy."""
    return mode == "none" and not tracked.existed


def same_task(state: PluginState, nextitem: pytest.Item | None, task_id: str) -> bool:
    """Whether the next item is a repetition of ``task_id`` (it may then take over a scope left open for it)."""
    following = None if nextitem is None else state.items.get(nextitem)
    return following is not None and following.spec is not None and following.task_id == task_id


def cassette_folder(state: PluginState, task_id: str, item: pytest.Item) -> CassetteFolder:
    """The task's cassette folder, named once for its n repetitions."""
    folder = state.cassette_folders.get(task_id)
    if folder is None:
        directory = paths.task_directory(state.cassette_root, task_id)
        prefix = os.path.join(display_path(directory, item.config.rootpath), "")
        folder = state.cassette_folders[task_id] = CassetteFolder(directory, prefix)
    return folder


def replayed_folder(state: PluginState, task_id: str, item: pytest.Item) -> CassetteFolder | None:
    """The task's cassette folder when this session replays it from its ``rep-N`` cassettes
    (``--consistency-record=none``, and no session mode gives the task cassettes of its own), with whether the
    folder is there found once; else None."""
    if state.settings.record != "none":
        return None
    if state.mode is not None and not state.mode.replays_task_folder(task_id):
        return None
    folder = cassette_folder(state, task_id, item)
    if folder.present is None:
        folder.present = folder.directory.is_dir()
    return folder


def close(carried: tuple[str, ExitStack, tuple[str, ...]] | None) -> None:
    if carried is not None:
        carried[1].close()


def close_carried(state: PluginState) -> None:
    carried, state.carried = state.carried, None
    close(carried)


def observe_session(state: PluginState) -> None:
    """The transport observer for the rest of the session (``--consistency-record=off``), entered once."""
    if state.observer is None:
        state.observer = ExitStack()
        state.observer.enter_context(observe_transports(state.ledger, state.ignore, state.throttles, marked_only=True))


@contextmanager
def replay_only_scope(active: ActiveRepetition, state: PluginState) -> Iterator[None]:
    """A replay-only repetition without a cassette file: every request it sends is unrecorded. The plugin's
    transports refuse httpx and httpx2 requests themselves (``cassette_absent``), the network block everything
    else, and the observer records what was refused (as ``cassette.scope.repetition_scope`` does for this case)."""
    from pytest_consistency.capture.network import (  # as ``off`` never blocks, it never loads the block
        REPLAY_ONLY,
        blocked,
    )

    active.cassette_absent = True
    with blocked(REPLAY_ONLY), observe_transports(state.ledger, state.ignore, state.throttles):
        yield


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


def curtail(tracked: Tracked, state: PluginState, board: Board, active: ActiveRepetition) -> str | None:
    """Why this repetition is skipped when its task's verdict is already decided (adaptive mode, beyond n_min)."""
    spec = tracked.spec
    assert spec is not None  # a marked repetition
    if active.repeat <= state.settings.n_min:
        return None
    tally = board.tally(active.task_id)
    alpha = round(1.0 - state.settings.confidence, 12)
    verdict = decided(tally.passes, tally.failures, spec.n, spec.min_pass, spec.min_rate, alpha)
    if verdict is None or tally.skipped:
        return None
    active.curtailed = True
    bar = f"min_pass {spec.min_pass:g}" if spec.min_rate is None else f"min_rate {spec.min_rate:g}"
    return (
        f"curtailed (--consistency-adaptive): {active.task_id} is {verdict} at n={spec.n} whatever the remaining "
        f"repetitions do ({tally.passes} passed, {tally.failures} failed, {bar})"
    )


def not_needed(
    tracked: Tracked, state: PluginState, board: Board, active: ActiveRepetition, item: pytest.Item
) -> str | None:
    """Why this repetition is not needed when its task is decided (sequential mode, beyond n_min): by the
    sequential test read in the repetitions' order (min_rate), or by curtailment (min_pass); or why it is not
    started when the session's repetition budget is used up (every repetition that starts takes one of it)."""
    from pytest_consistency.analysis.sequential import UNRECORDED, task_decision

    spec = tracked.spec
    assert spec is not None  # a marked repetition
    missing = unrecorded_cassette(state, active, item)
    if missing is not None:
        board.record(active.task_id, item.nodeid, "unrecorded", active.repeat)
        active.curtailed = True
        return (
            f"{UNRECORDED}: {active.task_id} repetition {active.repeat} has no cassette at {missing}; a replay never "
            "calls live, so the task's sequence ends here, as at the cap"
        )
    settings = state.settings
    alpha = settings.sequential_alpha or round(1.0 - settings.confidence, 12)
    decision = None
    if active.repeat > settings.n_min:
        decision = task_decision(board.outcomes(active.task_id), spec.n, spec.min_pass, spec.min_rate, alpha)
    budget = settings.repetition_budget
    spent = budget is not None and board.started() >= budget  # read before any wait for the rounds
    if budget is not None and spent and decision is None:
        return budget_reached(active, budget)
    over = ledger_over(state) if decision is None else None
    if over is not None:  # the token or cost budget: no repetition starts, as no call would be made
        active.curtailed = True
        return over
    rounds = (
        None
        if spent
        else suite_round_need(tracked, state, board, active, decision is None and spec.min_rate is not None)
    )
    if rounds:  # neither the rounds nor the task's own test need it
        return rounds
    if decision is None or rounds == "":
        if budget is None or board.claim(budget):
            return None
        return budget_reached(active, budget)
    active.curtailed = True
    if decision.decided_by == "evidence":
        how = f"by evidence after {decision.at} repetition(s) (min_rate {spec.min_rate:g}, alpha {alpha:g})"
    elif decision.decided_by == "cap":
        how = f"at the cap: n={spec.n} can no longer be crossed (min_rate {spec.min_rate:g})"
    else:
        how = f"at n={spec.n} whatever the remaining repetitions do (min_pass {spec.min_pass:g})"
    return f"not needed (--consistency-sequential): {active.task_id} is {decision.verdict} {how}"


def ledger_over(state: PluginState) -> str | None:
    """In sequential mode, why a repetition does not start once the token or cost budget is exhausted: its calls
    would be refused, so it would end in error; not started, its task's sequence ends here (undecided unless decided
    before), as with the repetition budget."""
    from pytest_consistency.shared.ledger import CostBudgetExceeded, TokenBudgetExceeded

    if state.ledger is None:
        return None
    try:
        state.ledger.check()
    except TokenBudgetExceeded as exc:
        return f"budget reached (--consistency-token-budget): {exc}"
    except CostBudgetExceeded as exc:
        return f"budget reached (--consistency-cost-budget): {exc}"
    return None


def budget_reached(active: ActiveRepetition, budget: int) -> str:
    """Why a repetition is not started once the session's repetition budget is used up."""
    from pytest_consistency.analysis.sequential import BUDGET

    active.curtailed = True
    return (
        f"{BUDGET}: the session has started its {budget} repetition(s), so {active.task_id} repetition "
        f"{active.repeat} is not; the task is undecided unless decided before it"
    )


def suite_round_need(
    tracked: Tracked, state: PluginState, board: Board, active: ActiveRepetition, task_needs: bool
) -> str | None:
    """With the gap gate in rounds (plugin/rounds.py): "" when this repetition runs (its round needs it, or its own
    min_rate task is still undecided), the reason when neither needs it; None without rounds (the task decides)."""
    from pytest_consistency.plugin.rounds import suite_needs

    needed = suite_needs(tracked, state, board, active)
    if needed is None:
        return None
    if needed or task_needs:
        return ""
    active.curtailed = True
    return (
        f"not needed (--consistency-sequential): {active.task_id} repetition {active.repeat} is in no round the "
        "suite gap gate reads (its task was not drawn for the round, or the gate is decided)"
    )


def unrecorded_cassette(state: PluginState, active: ActiveRepetition, item: pytest.Item) -> str | None:
    """The cassette this repetition would replay, as shown, when replaying (``--consistency-record=none``) a task
    that has recordings but none for this repetition; else None (a task with no recording at all is a first run,
    which the replay says how to record)."""
    folder = replayed_folder(state, active.task_id, item)
    if folder is None or not folder.present:
        return None
    name = f"rep-{active.repeat}{paths.SUFFIXES[state.settings.cassette_format]}"
    if paths.cassette_exists(folder.directory / name):
        return None
    if not any(paths.cassette_exists(path) for path in folder.directory.glob("rep-*")):
        return None
    return folder.prefix + name


def marker_problem(item: pytest.Item, tracked: Tracked | None) -> str | None:
    """A marker that would otherwise be ignored silently: stacked twice, on a unittest.TestCase method, on one
    parameter set (``pytest.param(..., marks=...)``), or added to the item after collection made its repetitions.
    Each message names what was done and what to do instead."""
    own = [m for m in getattr(item, "own_markers", []) if m.name == MARKER]
    callspec = getattr(item, "callspec", None)
    if callspec is not None and len(own) > 1 and any(m.name == MARKER for m in callspec.marks):
        own = own[:1]  # the function's marker copied with the parameter set's: reported below
    if len(own) > 1:
        return f"applied {len(own)} times to one test; keep one marker (the arguments of the others would be lost)"
    if (tracked is None or tracked.spec is None) and marker_of(item) is not None:
        if type(item).__name__ == "TestCaseFunction":
            return (
                "not supported on unittest.TestCase methods (they cannot be parametrized into repetitions); "
                "write the task as a plain pytest test function or method"
            )
        if callspec is not None and any(m.name == MARKER for m in callspec.marks):
            return (
                "applied to one parameter set through pytest.param(..., marks=...): the repetitions are made when "
                "the test function is collected, from a marker on the function, its class or its module; mark the "
                "test function (every parameter set then repeats), or move the parameter sets that should repeat to "
                "a test function of their own"
            )
        return (
            "added to the test after it was collected (item.add_marker, e.g. in pytest_collection_modifyitems), "
            "when its repetitions had been made already: apply the marker where collection reads it, on the test "
            "function, its class or its module (pytestmark)"
        )
    return None


@functools.lru_cache(maxsize=1024)
def display_path(path: Path, rootpath: Path) -> str:
    """The path relative to rootdir when it is inside it, else absolute."""
    try:
        return str(path.relative_to(rootpath))
    except ValueError:
        return str(path)
