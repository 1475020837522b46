"""A repetition as the cause analysis reads it: per step, the model's words it sends back, the endpoints it called,
its route, its request and its decision; then its end.

Why these, in this order: a step is one answered sampling call and the attempts before it (a retry, a failed
attempt, a call to another endpoint), or several calls sent together (``trajectory.steps``). What the model wrote
at earlier steps and the agent sends back was decided before anything of this step. Then the agent called its
endpoints (a chat call, an embedding), each kind through its route (which base URL, key, model and gateway
deployment answered: routes are compared per endpoint kind, a chat call and an embedding are not one route), then
the request the agent sent, and only then did the model decide. So the first of them that differs between two
repetitions is the earliest thing that made them differ: a route that differs outranks a request that differs at
the same step, and a request outranks the decision it led to. After the last step, how the repetition ended
(passed or not, its answer's class) is what is left to differ.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_consistency.analysis.drift import error_kind
from pytest_consistency.model.cause import Sent
from pytest_consistency.model.records import CallRecord, endpoint_kind

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
#: The index of an attempt's "sampling call" flag and of its endpoint kind (see :func:`attempt_route`).
SAMPLING, KIND = 9, 10


def attempt_route(call: CallRecord) -> Attempt:
    """One attempt's route: the fields of :data:`ROUTE_FIELDS`, its gateway's retries, its error kind (None when
    answered), whether it is a sampling call, its endpoint kind."""
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
        endpoint_kind(call.url),
    )


def calls_of(attempts: Sequence[Attempt]) -> tuple[str, ...]:
    """The kinds of endpoint a step's attempts called (chat, embeddings, ...), once each: what the agent asked for,
    compared before the route (an agent that embeds twice where another embeds once asked for the same)."""
    return tuple(sorted({a[KIND] for a in attempts}))


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
    #: The kinds of endpoint its attempts called (:func:`calls_of`).
    calls: tuple[str, ...] = ()

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
    #: The kinds of endpoint the attempts after its last step called.
    trailing_calls: tuple[str, ...] = ()


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
                step_route(attempts),
                member.sent,
                keys[index],
                member.label,
                (member,),
                member.part,
                member.resent,
                calls_of(attempts),
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
                calls_of(attempts),
            )
        steps.append(step)
        written.update(member.words for member in members)
    trailing = [attempt_route(call) for call in after]
    return Run(repeat, tuple(steps), step_route(trailing), passed, answer, texts, calls_of(trailing))


def by_kind(attempts: Sequence[Attempt]) -> dict[str, list[Attempt]]:
    """``attempts`` by their endpoint kind."""
    out: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        out.setdefault(attempt[KIND], []).append(attempt)
    return out


def route_kinds(left: Sequence[Attempt], right: Sequence[Attempt]) -> list[str]:
    """The drift kinds in which two steps' routes differ: a field of an attempt, the number of attempts
    (``retries``), their errors (``errors``), a gateway's own retries. Compared per endpoint kind, for the kinds both
    called: a chat call and an embedding call are not one route (their models differ by design), and a kind only one
    side called is another request (see ``find``), not another route."""
    kinds: list[str] = []
    ours, theirs = by_kind(left), by_kind(right)
    common = [(ours[kind], theirs[kind]) for kind in sorted(ours) if kind in theirs]

    def add(kind: str) -> None:
        if kind not in kinds:
            kinds.append(kind)

    for index, name in enumerate(ROUTE_FIELDS):
        if any(route_values(mine, index) != route_values(other, index) for mine, other in common):
            add(ROUTE_KINDS[name])
    for mine, other in common:
        tried = (sum(1 for a in mine if a[SAMPLING]), sum(1 for a in other if a[SAMPLING]))
        if tried[0] != tried[1] or {a[7] for a in mine} != {a[7] for a in other}:
            add("retries")
        if sorted(str(a[8]) for a in mine if a[8]) != sorted(str(a[8]) for a in other if a[8]):
            add("errors")
    return kinds


def differing(left: Sequence[Attempt], right: Sequence[Attempt], index: int) -> tuple[list[Attempt], list[Attempt]]:
    """The attempts of the endpoint kinds whose route field ``index`` differs between two steps (both called them):
    what a route fact shows (the embedding model that changed, not the chat model beside it)."""
    ours, theirs = by_kind(left), by_kind(right)
    kinds = [k for k in sorted(ours) if k in theirs and route_values(ours[k], index) != route_values(theirs[k], index)]
    return [a for k in kinds for a in ours[k]], [a for k in kinds for a in theirs[k]]


def route_values(attempts: Sequence[Attempt], index: int) -> set[Any]:
    """The values of one route field over ``attempts``; a failed attempt's missing value (a 429 names no model
    served) is no value: a retried step did not travel another model, it failed once (``retries``, ``errors``)."""
    return {a[index] for a in attempts if a[index] is not None or a[8] is None}
