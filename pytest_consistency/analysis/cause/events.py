"""A repetition as the cause analysis reads it: per step, the model's words it sends back, its route, its request
and its decision; then its end.

Why these, in this order: a step is one answered sampling call and the attempts before it (a retry, a failed
attempt, a call to another endpoint), or several calls sent together (``trajectory.steps``). What the model wrote
at earlier steps and the agent sends back was decided before anything of this step. Then the step's calls passed
through the route (which base URL, key, model and gateway deployment answered), then the request the agent sent,
and only then did the model decide. So the first of them that differs between two repetitions is the earliest
thing that made them differ: a route that differs outranks a request that differs at the same step, and a request
outranks the decision it led to. After the last step, how the repetition ended (passed or not, its answer's class)
is what is left to differ.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_consistency.analysis.drift import error_kind
from pytest_consistency.model.cause import Sent
from pytest_consistency.model.records import CallRecord

#: What the route of one attempt is compared on, in the order the route-drift kinds are named.
ROUTE_FIELDS = ("provider", "base_url", "key", "model_requested", "model_served", "deployment", "fallback")
#: The drift kind each route field is reported as (``provider`` changes the base URL too).
ROUTE_KINDS = {
    "provider": "base_url",
    "base_url": "base_url",
    "key": "key",
    "model_requested": "model_requested",
    "model_served": "model_served",
    "deployment": "deployment",
    "fallback": "fallback",
}

Attempt = tuple[Any, ...]
#: The index of an attempt's "sampling call" flag (see :func:`attempt_route`).
SAMPLING = 9


def attempt_route(call: CallRecord) -> Attempt:
    """One attempt's route: the fields of :data:`ROUTE_FIELDS`, then its error kind (None when answered)."""
    gateway = call.gateway
    fallbacks = gateway.get("x-litellm-attempted-fallbacks", "").strip()
    return (
        call.provider,
        call.base_url,
        call.route_key or call.key_fingerprint,
        call.model_requested,
        call.model_served,
        gateway.get("x-litellm-model-id"),
        fallbacks not in ("", "0"),
        gateway.get("x-litellm-attempted-retries", "").strip() not in ("", "0"),
        error_kind(call),
        call.sent is not None or call.decision is not None,
    )


def step_route(attempts: Sequence[Attempt]) -> tuple[Attempt, ...]:
    """A step's route: its sampling attempts in order (their number is the retries), then the distinct routes of
    its other calls (an embedding, a model list), sorted: an agent that embeds twice where another embeds once
    travelled the same route."""
    sampling = [a for a in attempts if a[SAMPLING]]
    others = sorted({a for a in attempts if not a[SAMPLING]}, key=repr)
    return (*sampling, *others)


def parallel_route(attempts: Sequence[Attempt]) -> tuple[Attempt, ...]:
    """The route of a step of overlapping calls: its sampling attempts as a multiset (sorted, whichever call left
    first), then the distinct routes of its other calls, as :func:`step_route`."""
    sampling = sorted((a for a in attempts if a[SAMPLING]), key=repr)
    others = sorted({a for a in attempts if not a[SAMPLING]}, key=repr)
    return (*sampling, *others)


#: What a request is compared on when what it sent is not known in every repetition (see ``find.events``).
UNKNOWN = "?"


@dataclass(frozen=True)
class Member:
    """One answered call of a step: what it sent, the part of it compared as the agent's request (``part``), the
    model's words it sent back (``resent``, see :func:`run_of`), its decision's aligned key, label, text and words."""

    sent: Sent | None
    part: Hashable
    resent: tuple[tuple[str, str], ...]
    key: str
    label: str
    text: str
    words: str


@dataclass(frozen=True)
class Step:
    """One step of a repetition: the routes of its attempts (the answered one last), what it sent, its decision
    key (aligned with the other repetitions', so equivalent texts share one key).

    A step of overlapping calls (``members``, more than one) compares its requests and its decisions as sets: ``sent``
    is its first member's, ``request`` the multiset of its members' requests, ``decision`` the multiset of (request,
    decision) pairs (which question got which answer)."""

    route: tuple[Attempt, ...]
    sent: Sent | None
    decision: str
    #: The decision as a person reads it (``tool search(...)``, ``text: ...``).
    label: str = ""
    members: tuple[Member, ...] = ()
    #: What is compared as the agent's request, and the model's words its request(s) sent back (digests of what the
    #: model wrote at earlier steps, in the order sent back).
    request: Hashable = None
    resent: Hashable = ()

    @property
    def known(self) -> bool:
        """Whether what every call of the step sent was recorded."""
        return all(member.sent is not None for member in self.members) if self.members else self.sent is not None


@dataclass(frozen=True)
class Run:
    """One scored repetition: its steps, the attempts after its last step, whether it passed, its answer's class."""

    repeat: int
    steps: tuple[Step, ...]
    trailing: tuple[Attempt, ...]
    passed: bool
    answer: int | None
    #: Texts of what its calls sent, by digest.
    texts: dict[str, str]


def answered(call: CallRecord) -> bool:
    """A step's call: a sampling call that was answered with a decision (as :mod:`..trajectory.steps` counts)."""
    return call.decision is not None and call.error is None


def compared(sent: Sent | None, written: set[str]) -> tuple[Hashable, tuple[tuple[str, str], ...]]:
    """What of a request is the agent's, and the model's turns it sent back.

    A model's turn the request sends back as the model wrote it (its words are among ``written``, what this
    repetition's model wrote at its earlier steps) is the model's: it is held apart (``Sent.model``), to be compared
    where the model wrote it, and the request is compared as the agent sent it (``Sent.own``, each model's turn a
    placeholder) with the turns it wrote itself or changed (their position and digest). A request that sent back
    none of its model's turns as written is compared whole, as before."""
    if sent is None:
        return UNKNOWN, ()
    if sent.model and sent.own:
        model = tuple(pair for pair in sent.model if pair[0] in written)
        if model:
            agent = tuple((index, turn) for index, (words, turn) in enumerate(sent.model) if words not in written)
            return ("own", sent.own, agent), model
    return sent.digest, ()


def run_of(
    repeat: int,
    calls: Sequence[CallRecord],
    keys: Sequence[str],
    passed: bool,
    answer: int | None,
    classes: Mapping[str, str] | None = None,
) -> Run:
    """A repetition's run: its calls grouped into steps as the trajectory groups them (``keys`` are its aligned
    decision keys, one per step; ``classes`` the key each text decision stands for, for the members of a step of
    overlapping calls, see ``trajectory.align.text_classes``)."""
    from pytest_consistency.analysis.trajectory.steps import step_calls

    classes = classes or {}
    grouped, after = step_calls(calls)
    texts: dict[str, str] = {}
    for call in calls:
        if call.texts:
            texts.update(call.texts)
    steps: list[Step] = []
    written: set[str] = set()
    for index, group in enumerate(grouped):
        members = []
        for call in group.answered:
            decision = call.decision
            assert decision is not None
            part, resent = compared(call.sent, written)
            key = classes.get(decision.key(), decision.key())
            members.append(Member(call.sent, part, resent, key, decision.detail(), decision.text, decision.words()))
        attempts = [attempt_route(call) for call in group.attempts]
        if len(members) == 1:
            (member,) = members
            step = Step(
                step_route(attempts), member.sent, keys[index], member.label, (member,), member.part, member.resent
            )
        else:
            pairs = sorted((repr(m.part), m.key) for m in members)
            step = Step(
                parallel_route(attempts),
                members[0].sent,
                "together:" + repr(pairs),
                group.decision.detail(),
                tuple(members),
                tuple(sorted((m.part for m in members), key=repr)),
                tuple(sorted(m.resent for m in members)),
            )
        steps.append(step)
        written.update(member.words for member in members)
    return Run(repeat, tuple(steps), step_route([attempt_route(call) for call in after]), passed, answer, texts)


def route_kinds(left: Sequence[Attempt], right: Sequence[Attempt]) -> list[str]:
    """The drift kinds in which two steps' routes differ: a field of an attempt, the number of attempts
    (``retries``), their errors (``errors``), a gateway's own retries."""
    kinds: list[str] = []

    def add(kind: str) -> None:
        if kind not in kinds:
            kinds.append(kind)

    for index, name in enumerate(ROUTE_FIELDS):
        if route_values(left, index) != route_values(right, index):
            add(ROUTE_KINDS[name])
    tried = (sum(1 for a in left if a[SAMPLING]), sum(1 for a in right if a[SAMPLING]))
    if tried[0] != tried[1] or {a[7] for a in left} != {a[7] for a in right}:
        add("retries")
    if sorted(str(a[8]) for a in left if a[8]) != sorted(str(a[8]) for a in right if a[8]):
        add("errors")
    return kinds


def route_values(attempts: Sequence[Attempt], index: int) -> set[Any]:
    """The values of one route field over ``attempts``; a failed attempt's missing value (a 429 names no model
    served) is no value: a retried step did not travel another model, it failed once (``retries``, ``errors``)."""
    return {a[index] for a in attempts if a[index] is not None or a[8] is None}
