"""The suite gap gate's rounds at run time (``--consistency-sequential --consistency-gap-max``): the items in
round order, the k = n refusal, and whether a repetition is needed, read from the shared board with
:func:`..analysis.suite_sequential.gap_rounds` (the function the summary decides with).

Waiting. A repetition of round r >= 2 needs every task's round r - 1 (whether the gate is decided, and its own
task's earlier rounds for its inclusion). Another xdist worker may still run one of those: the board is polled until
they are known, at most :data:`WAIT` seconds. This cannot deadlock: the items are ordered round-major at collection
and every worker runs the items it is handed in that order, so an item of round r - 1 still to run on any worker
comes before that worker's items of round r, and by induction on r none of them waits on an item of a later round;
round 1 never waits. (A scheduler that reorders items, ``--dist loadfile`` or ``loadscope``, or a repetition left
out of the session breaks the premise: the wait then ends at :data:`WAIT` and the repetition runs, which is
harmless: the summary recomputes the decision from the records and reports a repetition run after it as such.)
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from pytest_consistency.config.marker import PARAM, MarkerSpec
from pytest_consistency.plugin.state import marker_of

if TYPE_CHECKING:
    from pytest_consistency.analysis.suite_sequential import GapRounds
    from pytest_consistency.capture.active import ActiveRepetition
    from pytest_consistency.config.settings import Settings
    from pytest_consistency.plugin.state import PluginState, Tracked
    from pytest_consistency.shared.board import Board

#: Seconds a repetition waits at most for the earlier rounds on other workers; then it runs.
WAIT = 60.0
#: Seconds between two reads of the board while waiting.
POLL = 0.02


def gap_in_rounds(state: PluginState) -> bool:
    """The session decides the gap gate in rounds: sequential mode with ``--consistency-gap-max``."""
    settings = state.settings
    return bool(settings.sequential) and settings.value("gap_max") is not None


def in_rounds(state: PluginState) -> bool:
    """The session runs in rounds: the gap gate, or the regression gate with a margin, in sequential mode."""
    settings = state.settings
    return gap_in_rounds(state) or (bool(settings.sequential) and settings.sequential_margin is not None)


def margin_problem(settings: Settings) -> str | None:
    """Why the regression gate cannot run as asked in sequential mode: without a margin an unchanged agent can never
    be shown "not worse", and a margin needs a baseline."""
    if settings.sequential_margin is None:
        if settings.suite_regression is True:
            return (
                "--consistency-suite-regression with --consistency-sequential needs a margin: without one an "
                "unchanged agent can never be shown not worse. Set --consistency-sequential-margin=PP (the drop of "
                "the suite pass rate from the baseline that counts as a regression), or drop "
                "--consistency-sequential"
            )
        return None
    if settings.baseline is None:
        return (
            "--consistency-sequential-margin gates the drop from a baseline: set --consistency-baseline=REPORT "
            "(a report of a fixed-n run)"
        )
    return None


def batch(state: PluginState, k: int) -> int:
    """The repetitions of one round per task: k with the gap gate, 1 for the regression gate alone."""
    return k if gap_in_rounds(state) else 1


def pin_k_problem(spec: MarkerSpec) -> str | None:
    """A gap gate in rounds needs k pinned below n: with k = n there is one round, and the gap moves with n."""
    if spec.k < spec.n:
        return None
    return (
        f"--consistency-gap-max with --consistency-sequential decides the gap in rounds of k repetitions, and k = n "
        f"= {spec.n} here (k follows n unless pinned, so the gap would move with n and there would be one round): "
        f"pin k in the marker, e.g. repeat_consistency(n={max(2 * spec.n, 20)}, k=5)"
    )


def round_major(state: PluginState, items: list[pytest.Item], per_repetition: bool = False) -> None:
    """Order the items round-major (every task's round 1, then round 2, ...), keeping the order within a round; an
    item that is not a repetition keeps its place before the rounds. ``per_repetition``: rounds of one repetition
    (sequential mode without a suite gate: every task's repetition 1, then 2, ..., so xdist's workers move through
    the repetition numbers together and a task's decision, read along them, waits less on another worker)."""

    def round_of(item: pytest.Item) -> int:
        marker = marker_of(item)
        callspec = getattr(item, "callspec", None)
        if marker is None or callspec is None or PARAM not in callspec.params:
            return 0
        try:
            spec = state.spec(marker)
        except Exception:  # a broken marker fails at its own item
            return 0
        size = 1 if per_repetition else batch(state, spec.k)
        return (int(callspec.params[PARAM]) - 1) // size + 1

    items.sort(key=round_of)  # stable: the collection order within a round


#: A baseline report's per-task [passes, scored], read once per process (by path).
_BASELINES: dict[str, dict[str, tuple[int, int]] | None] = {}


def baseline_counts(state: PluginState) -> dict[str, tuple[int, int]] | None:
    """The baseline's (passes, scored) per task (tasks not curtailed), or None when it cannot be read or ran in
    sequential mode (not a baseline: the session end says why)."""
    path = state.settings.path("baseline")
    if path is None:
        return None
    key = str(path)
    if key not in _BASELINES:
        from pytest_consistency.report.json_report import ReportError, read_report

        try:
            report = read_report(path)
        except (ReportError, ValueError, OSError):
            _BASELINES[key] = None
        else:
            _BASELINES[key] = (
                None
                if report.analysis.sequential_alpha is not None
                else {t.task_id: (t.passes, t.scored) for t in report.tasks if t.is_scored and not t.curtailed}
            )
    return _BASELINES[key]


def rounds_states(state: PluginState, board: Board) -> list[GapRounds] | None:
    """Each suite gate in rounds as the board has it (the gap gate, the regression gate), or None when they cannot
    be read in rounds (the tasks share no k; no baseline): every repetition then runs."""
    from pytest_consistency.analysis.suite_sequential import drop_rounds, gap_rounds
    from pytest_consistency.stats.suite_sequential import baseline_bounds

    specs: dict[str, MarkerSpec] = {}
    for tracked in state.items.values():
        if tracked.spec is not None:
            specs.setdefault(tracked.task_id, tracked.spec)
    ks = {spec.k for spec in specs.values()}
    if len(ks) != 1:
        return None
    k = ks.pop()
    n = min(spec.n for spec in specs.values())
    settings = state.settings
    alpha = settings.sequential_alpha or round(1.0 - settings.confidence, 12)
    seed, stop = settings.seed or 0, settings.shard is None  # a shard: the merge decides
    # The family's division is the summary's: a smaller level there only needs more rounds than read here.
    found = []
    if gap_in_rounds(state):
        outcomes = {task: board.outcomes(task) for task in specs}
        found.append(gap_rounds(outcomes, k, n, settings.value("gap_max"), alpha, seed, stop=stop))
    margin = settings.sequential_margin
    if margin is not None:
        counts = baseline_counts(state)
        if counts is None:
            return None
        common = [task for task in specs if task in counts]
        low, high = baseline_bounds([counts[task] for task in common], alpha / 2.0)
        estimate = sum(c / m for c, m in (counts[task] for task in common)) / max(1, len(common))
        outcomes = {task: board.outcomes(task) for task in common}
        found.append(drop_rounds(outcomes, batch(state, k), n, margin, alpha, seed, (low, high, estimate), stop=stop))
    return found


#: The gates as last read from the board, per session state: a repetition whose round they resolve reads nothing.
_READ: dict[int, list[GapRounds] | None] = {}


def suite_needs(tracked: Tracked, state: PluginState, board: Board, active: ActiveRepetition) -> bool | None:
    """Whether the rounds need this repetition (waiting for the earlier rounds, see the module docstring); None when
    no suite gate runs in rounds or they cannot be read (every repetition then runs)."""
    spec = tracked.spec
    if spec is None or not in_rounds(state):
        return None
    if active.repeat <= batch(state, spec.k):
        return True  # round 1 runs every task
    deadline = time.monotonic() + WAIT
    found = _READ.get(id(state))
    while True:
        if found is not None:  # what an earlier read resolved stays resolved: first outcomes never change
            answers = [gate.needs(active.task_id, active.repeat) for gate in found]
            if any(answers) or None not in answers:
                return any(answers)
        found = _READ[id(state)] = rounds_states(state, board)
        if found is None:
            return None
        answers = [gate.needs(active.task_id, active.repeat) for gate in found]
        if any(answers):
            return True
        if None not in answers:
            return False
        if time.monotonic() >= deadline:
            return True  # run it: harmless, the summary decides from the records
        time.sleep(POLL)
