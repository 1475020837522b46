"""A repetition's trajectory: its model steps, read from the calls it made, in the order it sent them.

Why from the call records: every call of a repetition is already recorded (live or replayed, in-process or on an
xdist worker) with its decision parsed as the response streamed past, so the trajectory costs no second parse and
is the same wherever the repetition ran. A step is a sampling call that was answered (a decision was read);
attempts that failed (a 429 the SDK retried, a timeout) are not steps: the retry that was answered is.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.trajectory import Decision, Step


def steps_of(calls: Iterable[CallRecord]) -> tuple[Step, ...]:
    """The model steps of one repetition's calls, numbered from 1."""
    answered = [call for call in calls if call.decision is not None and call.error is None]
    return tuple(
        Step(index, call.asked, call.decision) for index, call in enumerate(answered, start=1) if call.decision
    )


def decisions_of(calls: Iterable[CallRecord]) -> tuple[Decision, ...]:
    """Only the decisions, in order: what alignment needs."""
    return tuple(call.decision for call in calls if call.decision is not None and call.error is None)
