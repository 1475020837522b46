"""The records of a cause: what a sampling call sent (canonical digests), and why a task's repetitions part.

Why digests on every call record: repetitions run in different processes (xdist workers, shards, a replay days
later), so what they sent can only be compared from what each call record carries. :class:`Sent` holds the digest
of the whole canonical request and of its parts, so a merge of shards, a replayed session and ``-n 2`` compare the
same values; the texts of the parts (cut) ride beside them on the call record, once per repetition, so the step
where repetitions part can be shown side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pytest_consistency.stats.interval import Interval

#: The causes, in the order a step is read: the route of its attempts, the request, the model's decision; then the
#: outcome after the last step, and ``judge``: the agent's calls agree, an LLM judge's verdicts do not (last, so
#: that the columns of the causes before it keep their places). Keep the words: users' dashboards and gates read them.
Cause = Literal["route", "input", "environment", "sampling", "outside the model", "judge"]
CAUSES: tuple[Cause, ...] = ("route", "input", "environment", "sampling", "outside the model", "judge")
#: Characters of a part's canonical text kept on a call record (its digest covers the whole text).
MAX_PART_TEXT = 4000


@dataclass(frozen=True)
class Sent:
    """What one sampling call sent, canonicalised (JSON keys sorted, SDK-generated ids numbered in order of first
    appearance, the fields the cassette matching ignores left out): digests only, 16 hex characters each.

    ``standing`` is every top-level field but the conversation (model, system prompt, tools, sampling parameters),
    each ``(name, digest)``; ``history`` the conversation before this step's new turns (the model's previous turns
    and what answered them); ``new`` each new turn (the user's, a tool result), ``(label, digest)``; ``sampling`` the
    sampling parameters as sent (``(name, JSON text)``; a parameter not sent is absent). A report keeps only
    ``sampling`` of a task it holds whole (``digest`` is then empty: :func:`..analysis.summary.lightened`).

    ``model`` holds each model's turn the request sends back, in order, as ``(words, turn)``: the digest of its
    words (its text, tool calls and refusal, as :meth:`..trajectory.Decision.words` digests a decision) and of the
    turn whole (its reasoning too); ``own`` is the digest of the whole request with each such turn held as a
    placeholder: what the agent sent of its own, when the turns are what its model wrote (the cause compares their
    words with the repetition's decisions). Both empty for a request without such a turn.
    """

    digest: str
    standing: tuple[tuple[str, str], ...] = ()
    history: str = ""
    new: tuple[tuple[str, str], ...] = ()
    sampling: tuple[tuple[str, str], ...] = ()
    own: str = ""
    model: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Evidence:
    """One side of the difference: a repetition's part at the step, cut around where the two sides first differ."""

    repeat: int
    text: str
    #: The part was longer than what the call record kept, and the kept texts are equal: it differs after them.
    beyond: bool = False


@dataclass(frozen=True)
class Finding:
    """Why one task's repetitions part: the first thing that differed between them, and the others found later."""

    cause: Cause
    #: The step (from 1) where it was found; None for ``outside the model`` (after the last step).
    step: int | None
    #: The repetitions that differ there, one per side (the first repetition of each branch).
    repeats: tuple[int, ...]
    #: What differs, in the plugin's words: ``the system message``, ``the tool result of search``, a drift kind.
    where: str
    #: One sentence: what the calls show.
    detail: str
    #: The fix to advise (one line).
    advice: str
    #: The two differing spans, redacted when rendered; empty when the difference is not in a text.
    sides: tuple[Evidence, ...] = ()
    #: ``route``: the drift kinds that differ at the step (``model_served``, ``deployment``, ...).
    kinds: tuple[str, ...] = ()
    #: ``sampling``: the sampling parameters actually sent at the step (``(name, JSON text)``), and those that were
    #: not pinned (no temperature 0, no seed where the API takes one).
    sampling: tuple[tuple[str, str], ...] = ()
    unpinned: tuple[str, ...] = ()
    #: The route differed at the same step as a difference of another kind (which it outranks): that kind.
    outranked: str | None = None
    #: Causes found later, in repetitions that had already parted from the others: ``sampling at step 3``.
    others: tuple[str, ...] = ()
    #: ``--consistency-resample`` of this step: whether its samples agree with the finding (None: not resampled).
    confirmed: bool | None = None

    @property
    def line(self) -> str:
        """``sampling at step 2: ...`` as the terminal and Markdown print it."""
        where = "after the last step" if self.step is None else f"at step {self.step}"
        text = f"{self.cause} {where}: {self.detail}"
        if self.others:
            text += f" (also: {', '.join(self.others)})"
        if self.confirmed is not None:
            text += " [resampling agrees]" if self.confirmed else " [resampling does not agree]"
        return text


@dataclass
class CauseShare:
    """One cause across the suite: the inconsistent tasks it was found in, and the points of the consistency gap
    they account for (each task's share of the gap goes to its cause; the shares add up to the gap)."""

    tasks: int = 0
    gap_pp: float = 0.0
    task_ids: list[str] = field(default_factory=list)
    #: The interval of ``gap_pp`` (pp) at the session's confidence and interval target, conditional on the causes
    #: named: the suite interval of the gap of the tasks with this cause, scaled by their share of the scored tasks
    #: (``analysis.cause.attribute.share_interval``); [0, 0] for a cause no task has; None in a report made before.
    interval: Interval | None = None
