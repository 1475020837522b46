"""A repetition's trajectory: its model steps, read from the calls it made, in the order it sent them.

Why from the call records: every call of a repetition is already recorded (live or replayed, in-process or on an
xdist worker) with its decision parsed as the response streamed past, so the trajectory costs no second parse and
is the same wherever the repetition ran. A step is a sampling call that was answered (a decision was read);
attempts that failed (a 429 the SDK retried, a timeout) are not steps: the retry that was answered is.

**Calls that overlap in time are one step** (issue 41): an agent that sends two requests at once (threads,
``asyncio.gather``) sends them in another order on another repetition, and neither could have read the other's
answer. Their requests form a set, and so do their decisions (:class:`~..model.trajectory.Parallel`). Two calls
overlap when one was sent before the other's answer was in (``started_at`` plus ``latency_ms``); a call overlapping
one of a step's calls joins that step. An SDK retry (``retry_index`` one above a failed attempt of the same request)
continues its attempt: from the first attempt's start to the answer, it is one call. Only recorded values decide:
a replayed call carries the start and latency its recording measured, so a replay groups as the recording did,
whatever order and speed the replay sends its calls in. A call without both values (a cassette recorded before they
were kept) overlaps nothing: such calls read as the sequence they were recorded in, as before.

Both the divergence map (:func:`decisions_of`) and the cause (``cause.events.run_of``) read steps through
:func:`step_calls`, so they group alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.trajectory import Decision, Message, Parallel, Step


def answered(call: CallRecord) -> bool:
    """A step's call: a sampling call that was answered with a decision."""
    return call.decision is not None and call.error is None


@dataclass(frozen=True)
class StepCalls:
    """One step's calls: ``attempts`` every call of the step, in the order recorded (failed attempts, calls to other
    endpoints, the answered ones); ``answered`` its answered calls, ordered by what each was asked, then by decision
    (the order of :class:`~..model.trajectory.Parallel`'s members), one for a step of one call."""

    attempts: tuple[CallRecord, ...]
    answered: tuple[CallRecord, ...]

    @property
    def decision(self) -> Decision:
        """The step's decision: its one call's, or the set of its overlapping calls' (:class:`Parallel`)."""
        if len(self.answered) == 1:
            decision = self.answered[0].decision
            assert decision is not None
            return decision
        return Parallel.of_calls([(question(call), call.decision) for call in self.answered if call.decision])


def question(call: CallRecord) -> str:
    """What an answered call of a step of overlapping calls is told apart by: the new messages it asked (kept on
    every call record, and in a report whose digests were left out)."""
    return repr(call.asked)


def span(call: CallRecord) -> tuple[float, float] | None:
    """When a call was in flight, from its recorded start and latency (epoch seconds); None without either."""
    if call.started_at is None or call.latency_ms is None:
        return None
    return call.started_at, call.started_at + call.latency_ms / 1000


def _chains(calls: Sequence[CallRecord]) -> list[list[int]]:
    """The calls as the agent made them: an SDK retry continues the failed attempt of the same request before it
    (its ``retry_index`` one above, the same URL, model and new messages asked), so a retried call is one chain of
    attempts; every other call is its own. Read from what every call record keeps (a report without the requests'
    digests chains alike)."""
    owner = list(range(len(calls)))
    continued: set[int] = set()
    for later, call in enumerate(calls):
        if call.retry_index <= 0:
            continue
        for earlier in range(later - 1, -1, -1):
            before = calls[earlier]
            if (
                earlier not in continued
                and not answered(before)
                and before.retry_index == call.retry_index - 1
                and (before.method, before.url, before.model_requested, before.asked)
                == (call.method, call.url, call.model_requested, call.asked)
            ):
                owner[later] = owner[earlier]
                continued.add(earlier)
                break
    chains: dict[int, list[int]] = {}
    for index, root in enumerate(owner):
        chains.setdefault(root, []).append(index)
    return list(chains.values())


def step_calls(calls: Sequence[CallRecord]) -> tuple[list[StepCalls], tuple[CallRecord, ...]]:
    """A repetition's calls grouped into steps, in order, and the calls after its last step.

    Calls (retries chained) whose spans overlap, directly or through another call of the step, are one step. Calls
    are taken in the order of their recorded start when every call has a span, else in the order recorded. A group
    without an answered call (a failed attempt that was not retried, an embedding) joins the step after it, as the
    attempts before a step always did, or trails the last step.
    """
    chains = _chains(calls)
    spans = [span(call) for call in calls]
    timed = all(s is not None for s in spans)
    units: list[tuple[list[int], tuple[float, float] | None]] = []
    for chain in chains:
        ends = [spans[i] for i in chain]
        units.append((chain, (min(s[0] for s in ends if s), max(s[1] for s in ends if s)) if all(ends) else None))
    if timed:
        units.sort(key=lambda unit: (unit[1][0] if unit[1] else 0.0, unit[0][0]))
    groups: list[tuple[list[int], tuple[float, float] | None]] = []
    for chain, where in units:
        last = groups[-1][1] if groups else None
        if where is not None and last is not None and where[0] < last[1] and where[1] > last[0]:
            groups[-1] = (groups[-1][0] + chain, (min(last[0], where[0]), max(last[1], where[1])))
        else:
            groups.append((list(chain), where))
    steps: list[StepCalls] = []
    pending: list[int] = []
    for members, _ in groups:
        pending += members
        made = [i for i in members if answered(calls[i])]
        if not made:
            continue
        order = sorted(pending)
        ranked = sorted(made, key=lambda i: (question(calls[i]), _key(calls[i]), i))
        steps.append(StepCalls(tuple(calls[i] for i in order), tuple(calls[i] for i in ranked)))
        pending = []
    return steps, tuple(calls[i] for i in sorted(pending))


def _key(call: CallRecord) -> str:
    return call.decision.key() if call.decision is not None else ""


def steps_of(calls: Iterable[CallRecord]) -> tuple[Step, ...]:
    """The model steps of one repetition's calls, numbered from 1 (a step of overlapping calls asked what each of
    them asked)."""
    steps, _ = step_calls(list(calls))
    return tuple(Step(index, _asked(step.answered), step.decision) for index, step in enumerate(steps, start=1))


def _asked(calls: Sequence[CallRecord]) -> tuple[Message, ...]:
    return tuple(message for call in calls for message in call.asked)


def decisions_of(calls: Iterable[CallRecord]) -> tuple[Decision, ...]:
    """Only the decisions, in order: what alignment needs."""
    steps, _ = step_calls(list(calls))
    return tuple(step.decision for step in steps)
