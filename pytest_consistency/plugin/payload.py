"""Carry each repetition's results from where it ran to where the session is summarised.

The payload rides on the test report itself (reports keep extra attributes, and pytest-xdist serialises them
to the controller), so the same code path serves a plain run and ``-n 2``, and no worker writes a file another
one could race on. The payload is a typed record (``model.payload.RepetitionPayload``), built once here and read once
by the :class:`Collector`; it travels as JSON text through the report model's own serialisation, so any recorded
answer and every call record cross the execnet channel intact.

One payload per repetition where the phases add nothing: a passed setup says nothing the call phase will not (the
repetition counts once its call reports), and a passed teardown adds nothing to the call's payload when nothing it
carries changed since (no call completed, no exchange or note added). Those reports carry only ``MARKED`` (their
duration still counts), which saves building, serialising and parsing two of every three payloads of a repetition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_consistency.analysis.answers import plain_scalar
from pytest_consistency.plugin.carried import ATTRIBUTE, MARKED

if TYPE_CHECKING:  # the report model loads when a repetition first reports, not with the plugin
    from pytest_consistency.capture.active import ActiveRepetition
    from pytest_consistency.config.marker import MarkerSpec
    from pytest_consistency.model.payload import RepetitionPayload
    from pytest_consistency.model.records import RepetitionResult


def adds_nothing(report: pytest.TestReport, state: ActiveRepetition) -> bool:
    """Whether this phase's report may go without a payload (see the module docstring)."""
    if report.outcome != "passed" or report.when == "call":  # (``outcome``, not the property: a call less)
        return False
    if report.when == "setup":
        return True
    return state.sent is not None and state.sent == _snapshot(state)


def sent(state: ActiveRepetition) -> None:
    """Note what the call phase's payload carried, so that an unchanged teardown need not repeat it."""
    state.sent = _snapshot(state)


def _snapshot(state: ActiveRepetition) -> tuple[Any, ...]:
    """What a teardown's payload would carry beyond the call's, as comparable values: every field of every call
    record (their dicts by items, as one is updated in place; decisions and messages are frozen), the unobserved
    exchanges, the notes, the cassette and the added cost. A call completed at teardown (a stream closed by the
    fixture), a late exchange, note or cost makes the teardown send its payload; an unchanged one sends none, as a
    repetition without calls already did."""
    with state.lock:
        calls = (
            tuple(
                tuple(tuple(value.items()) if isinstance(value, dict) else value for value in vars(call).values())
                for call in state.calls
            )
            if state.calls
            else ()
        )
        return (calls, state.unobserved, len(state.notes), state.cassette, state.added_cost_usd, state.score)


def payload(
    state: ActiveRepetition,
    spec: MarkerSpec,
    order: int,
    hook_plugins: list[str],
    infrastructure: str | None = None,
    message: str | None = None,
    in_process: bool = False,
    totals: tuple[int, int] | None = None,
) -> str | RepetitionPayload:
    """The repetition's payload: JSON text, or (``in_process``: this process is where every report arrives) the
    :class:`RepetitionPayload` itself when JSON would give it back unchanged, as for a repetition without calls whose
    answer is a plain scalar; a first attempt (answers of any shape) or a call's records always take the JSON round
    trip, as under xdist. ``totals``: the collected tasks and repetitions, on a process's first payload only (the
    status line's)."""
    from pytest_consistency.model.payload import RepetitionPayload  # the report model: only once a repetition reports

    with state.lock:  # built and written while no thread adds to the repetition
        data = RepetitionPayload(
            task_id=state.task_id,
            repeat=state.repeat,
            n=spec.n,
            k=spec.k,
            min_pass=spec.min_pass,
            min_rate=spec.min_rate,
            order=order,
            answer_recorded=state.answer_recorded,
            answer=state.answer,
            normalized=state.normalized,
            calls=tuple(state.calls),
            notes=tuple(state.notes),
            cassette=state.cassette,
            unobserved=state.unobserved,
            curtailed=state.curtailed,
            added_cost_usd=state.added_cost_usd,
            score=state.score,
            score_min=spec.score_min,
            infrastructure=infrastructure,
            message=message,
            attempts=state.attempts,
            first_attempt=state.first_attempt if state.attempts > 1 else None,
            equivalence_plugins=tuple(hook_plugins),
            totals=totals,
        )
        if (
            in_process
            and not data.calls
            and data.first_attempt is None
            and plain_scalar(data.answer)
            and plain_scalar(data.normalized)
        ):
            return data
        return data.to_json()


def spanned(
    span: tuple[float | None, float | None] | None, report: pytest.TestReport
) -> tuple[float | None, float | None]:
    """``(started, stopped)`` widened to the phase ``report`` covers (pytest's ``start``/``stop``, epoch seconds)."""
    start, stop = getattr(report, "start", 0.0) or None, getattr(report, "stop", 0.0) or None
    first, last = span if span is not None else (None, None)
    if start is not None:
        first = start if first is None else min(first, start)
    if stop is not None:
        last = stop if last is None else max(last, stop)
    return first, last


def phase_outcome(report: pytest.TestReport) -> str:
    """A phase's outcome as a repetition's (``report.outcome`` is read, not its properties: one per phase)."""
    outcome = report.outcome
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if outcome == "passed":
            return "xpassed" if xfail else "passed"
        if outcome == "skipped":
            return "xfailed" if xfail else "skipped"
        return "failed"
    if outcome == "failed":
        return "error"
    if outcome == "skipped":
        return "xfailed" if xfail else "skipped"
    return "passed"


class Collector:
    """Assembles repetitions from the reports of their setup, call and teardown phases."""

    def __init__(self) -> None:
        self.repetitions: dict[str, RepetitionResult] = {}
        #: The same repetitions by task, so a task's outcomes so far are read without scanning the session.
        self.by_task: dict[str, list[RepetitionResult]] = {}
        self.failed_nodeids: set[str] = set()
        self.worker_equivalence_plugins: set[str] = set()
        #: The collected selection's tasks and repetitions, from the first payload that carried them.
        self.totals: tuple[int, int] | None = None
        #: Repetitions whose first attempt failed and was re-run (pytest-rerunfailures): their outcome is settled.
        self.settled: set[str] = set()
        #: Durations of payload-less phases (``MARKED``) that reported before their repetition's first payload, and
        #: when they started and stopped.
        self.pending: dict[str, float] = {}
        self.pending_span: dict[str, tuple[float | None, float | None]] = {}

    def expect(self, nodeid: str, task_id: str, repeat: int, spec: MarkerSpec, order: int) -> bool:
        """Note a selected repetition; one that never reported stays ``not run``. True when it never reported."""
        rep = self.repetitions.get(nodeid)
        if rep is None:
            from pytest_consistency.model.records import RepetitionResult

            rep = RepetitionResult(
                task_id=task_id,
                nodeid=nodeid,
                repeat=repeat,
                n=spec.n,
                k=spec.k,
                min_pass=spec.min_pass,
                order=order,
                min_rate=spec.min_rate,
            )
            rep.duration += self.pending.pop(nodeid, 0.0)
            rep.started, rep.stopped = self.pending_span.pop(nodeid, (None, None))
            self._keep(rep)
            return True
        return rep.outcome == "not run"

    def _keep(self, rep: RepetitionResult) -> None:
        self.repetitions[rep.nodeid] = rep
        self.by_task.setdefault(rep.task_id, []).append(rep)

    def add(self, report: pytest.TestReport) -> bool:
        """Add a phase's report to its repetition; True when the report failed."""
        nodeid = report.nodeid  # a property of pytest's report: read once
        failed = report.outcome == "failed"  # (not the property ``failed``: every report comes here)
        if failed:
            self.failed_nodeids.add(nodeid)
        raw = getattr(report, ATTRIBUTE, None)
        if raw is None:
            if getattr(report, MARKED, False):
                known = self.repetitions.get(nodeid)
                if known is None:
                    self.pending[nodeid] = self.pending.get(nodeid, 0.0) + report.duration
                    self.pending_span[nodeid] = spanned(self.pending_span.get(nodeid), report)
                else:
                    known.duration += report.duration
                    known.started, known.stopped = spanned((known.started, known.stopped), report)
            return failed
        from pytest_consistency.model.payload import RepetitionPayload
        from pytest_consistency.model.records import RepetitionResult

        # The object itself: made in this process (``payload``); else the JSON text it was written as.
        data = raw if isinstance(raw, RepetitionPayload) else RepetitionPayload.from_json(raw)
        self.worker_equivalence_plugins.update(data.equivalence_plugins)
        if data.totals is not None:
            self.totals = data.totals
        rep = self.repetitions.get(nodeid)
        if rep is None:
            rep = RepetitionResult(
                task_id=data.task_id,
                nodeid=nodeid,
                repeat=data.repeat,
                n=data.n,
                k=data.k,
                min_pass=data.min_pass,
                order=data.order,
                min_rate=data.min_rate,
            )
            rep.duration += self.pending.pop(nodeid, 0.0)
            rep.started, rep.stopped = self.pending_span.pop(nodeid, (None, None))
            self._keep(rep)
        rep.calls = list(data.calls)
        rep.notes = list(data.notes)
        rep.cassette = data.cassette
        rep.unobserved = data.unobserved
        rep.added_cost_usd = data.added_cost_usd
        rep.score, rep.score_min = data.score, data.score_min
        if nodeid not in self.settled:  # the first phase that failed says why
            if data.infrastructure and rep.infrastructure is None:
                rep.infrastructure = data.infrastructure
            if data.message and rep.message is None:
                rep.message = data.message
        rep.duration += report.duration
        rep.started, rep.stopped = spanned((rep.started, rep.stopped), report)
        if str(report.outcome) not in ("passed", "failed", "skipped"):
            # pytest-rerunfailures ("rerun") and pytest-retry ("retried", or its --retry-outcome) report the attempt
            # they retry under an outcome of their own and hide the failure behind a later pass: the first attempt
            # is the repetition.
            rep.reruns += 1
            if nodeid not in self.settled:
                self.settled.add(nodeid)
                rep.outcome = "failed" if report.when == "call" else "error"  # setup or teardown raised
                rep.answer_recorded, rep.answer, rep.normalized = data.answer_recorded, data.answer, data.normalized
            return failed
        if nodeid in self.settled:
            return failed
        first = data.first_attempt
        if first is not None and report.when == "call":
            # flaky runs the repetition again without reporting the first attempt: the payload carries it.
            self.settled.add(nodeid)
            rep.reruns += data.attempts - 1
            rep.outcome, rep.answer_recorded, rep.answer, rep.normalized, rep.message = first
            return failed
        rep.answer_recorded = data.answer_recorded
        rep.answer = data.answer
        rep.normalized = data.normalized
        outcome = phase_outcome(report)
        if report.when == "setup":
            # A passed setup says nothing yet: the repetition counts once its call phase reports.
            rep.outcome = "not run" if outcome == "passed" else outcome
            if data.curtailed and outcome == "skipped":
                rep.outcome = "curtailed"
        elif report.when == "call":
            rep.outcome = outcome
        elif outcome == "error" and rep.outcome in ("passed", "xpassed", "not run"):
            rep.outcome = "error"
        return failed
