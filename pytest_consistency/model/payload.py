"""What one phase's report of a repetition carries to the process that summarises the session.

A :class:`RepetitionPayload` is built once, where the repetition's phase reports (``plugin.payload``), and read once,
where every report arrives (``plugin.payload.Collector``). It crosses pytest-xdist's execnet channel as JSON text
(:meth:`RepetitionPayload.to_json`, :meth:`RepetitionPayload.from_json`), through the report model's own
serialisation (:mod:`.serial`), so a field added here travels without another line of code, and a payload that does
not fit (a field of the wrong type, one this version does not know) is a ``ReportFormatError`` naming the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.serial import from_data, to_data


@dataclass(frozen=True)
class RepetitionPayload:
    """A repetition as one of its phases left it: what the marker asked, what the repetition recorded, why it failed.

    Fields of the marker (``n``, ``k``, ``min_pass``, ``min_rate``, ``score_min``) and the repetition's place
    (``task_id``, ``repeat``, ``order``) come with every payload, as a phase may report before the repetition is
    known where the payload arrives. ``equivalence_plugins`` (the implementers of
    ``pytest_consistency_answers_equivalent``) and ``totals`` (the collected tasks and repetitions) ride on a
    process's first payload only; a payload without them (an older field set) reads as carrying none.
    """

    task_id: str
    repeat: int
    n: int
    k: int
    min_pass: float
    min_rate: float | None
    order: int
    answer_recorded: bool
    answer: Any
    normalized: Any
    calls: tuple[CallRecord, ...]
    notes: tuple[str, ...]
    cassette: str | None
    #: Cassette exchanges no observed client made.
    unobserved: int
    #: Skipped by adaptive mode before it started (a skipped setup says so).
    curtailed: bool
    added_cost_usd: float
    score: float | None
    score_min: float | None
    #: Why the phase failed when the reason is the setup's, not the agent's; and pytest's one line of why it failed.
    infrastructure: str | None
    message: str | None
    #: Call phases run (a retry plugin runs more than one), and when it ran again the first one's outcome, whether it
    #: recorded an answer, the answer, the normalised answer and the message.
    attempts: int
    first_attempt: tuple[str, bool, Any, Any, str | None] | None
    equivalence_plugins: tuple[str, ...] = ()
    totals: tuple[int, int] | None = None

    def to_json(self) -> str:
        """The payload as JSON text (a call's decision, asked messages and digests as their data)."""
        return json.dumps(to_data(self))

    @classmethod
    def from_json(cls, text: str) -> RepetitionPayload:
        """The payload :meth:`to_json` wrote, its records rebuilt (``ReportFormatError`` when it does not fit)."""
        return from_data(cls, json.loads(text), "payload")
