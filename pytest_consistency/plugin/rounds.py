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
    from pytest_consistency.plugin.state import PluginState, Tracked
    from pytest_consistency.shared.board import Board

#: Seconds a repetition waits at most for the earlier rounds on other workers; then it runs.
WAIT = 60.0
#: Seconds between two reads of the board while waiting.
POLL = 0.02


def in_rounds(state: PluginState) -> bool:
    """The session decides the gap gate in rounds: sequential mode with ``--consistency-gap-max``."""
    settings = state.settings
    return bool(settings.consistency_sequential) and settings.value("consistency_gap_max") is not None


def pin_k_problem(spec: MarkerSpec) -> str | None:
    """A gap gate in rounds needs k pinned below n: with k = n there is one round, and the gap moves with n."""
    if spec.k < spec.n:
        return None
    return (
        f"--consistency-gap-max with --consistency-sequential decides the gap in rounds of k repetitions, and k = n "
        f"= {spec.n} here (k follows n unless pinned, so the gap would move with n and there would be one round): "
        f"pin k in the marker, e.g. repeat_consistency(n={max(2 * spec.n, 20)}, k=5)"
    )


def round_major(state: PluginState, items: list[pytest.Item]) -> None:
    """Order the items round-major (every task's round 1, then round 2, ...), keeping the order within a round; an
    item that is not a repetition keeps its place before the rounds."""

    def round_of(item: pytest.Item) -> int:
        marker = marker_of(item)
        callspec = getattr(item, "callspec", None)
        if marker is None or callspec is None or PARAM not in callspec.params:
            return 0
        try:
            spec = state.spec(marker)
        except Exception:  # a broken marker fails at its own item
            return 0
        return (int(callspec.params[PARAM]) - 1) // spec.k + 1

    items.sort(key=round_of)  # stable: the collection order within a round


def rounds_state(state: PluginState, board: Board) -> GapRounds | None:
    """The gate as the board has it, or None when the tasks share no k."""
    from pytest_consistency.analysis.suite_sequential import gap_rounds

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
    alpha = settings.consistency_sequential_alpha or round(1.0 - settings.consistency_confidence, 12)
    return gap_rounds(
        {task: board.outcomes(task) for task in specs},
        k,
        n,
        settings.value("consistency_gap_max"),
        alpha,  # the family's division is the summary's: a smaller level there only needs more rounds
        settings.consistency_seed or 0,
        stop=settings.consistency_shard is None,  # a shard sees its own tasks only: the merge decides
    )


def suite_needs(tracked: Tracked, state: PluginState, board: Board, active: ActiveRepetition) -> bool | None:
    """Whether the rounds need this repetition (waiting for the earlier rounds, see the module docstring); None when
    the gate is not decided in rounds or cannot be (the tasks share no k: every repetition runs)."""
    spec = tracked.spec
    if spec is None or not in_rounds(state) or active.repeat <= spec.k:
        return None if spec is None or not in_rounds(state) else True
    deadline = time.monotonic() + WAIT
    while True:
        found = rounds_state(state, board)
        if found is None:
            return None
        needed = found.needs(active.task_id, active.repeat)
        if needed is not None:
            return needed
        if time.monotonic() >= deadline:
            return True  # run it: harmless, the summary decides from the records
        time.sleep(POLL)
