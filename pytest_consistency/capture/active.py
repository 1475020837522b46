"""The state of the repetition that is running now, and the ``consistency`` handle tests receive.

pytest runs one test at a time per process (xdist workers are processes), so one module-level slot is
enough to let code that has no access to the test — an HTTP transport, a patched client class — attach
what it saw to the running repetition, from any thread the agent starts.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
import numbers
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from pytest_consistency.analysis.answers import NormalizeError, check_answer, plain_scalar
from pytest_consistency.config.marker import shown

if TYPE_CHECKING:
    from pytest_consistency.model.records import CallRecord


class ConsistencyWarning(pytest.PytestWarning):
    """Something about a repetition's recording deserves attention but does not fail it."""


@dataclass
class ActiveRepetition:
    """The repetition running now: what it recorded (answer, calls, notes) until its payload reports it."""

    task_id: str
    repeat: int
    n: int
    marked: bool
    answer_recorded: bool = False
    answer: Any = None
    normalized: Any = None
    calls: list[CallRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The cassette of this repetition, and whether it is being recorded (not only replayed).
    cassette: str | None = None
    recording: bool = False
    #: Replay-only and this repetition has no cassette file: every request it sends is unrecorded (no vcrpy
    #: cassette is entered for it; the plugin's transports refuse the request themselves).
    cassette_absent: bool = False
    #: Every request is answered from the cassette (``none``, or ``once`` with a cassette): nothing is throttled.
    replaying: bool = False
    #: The key variables that hold the stand-in key during this replayed repetition (``route.stand_in_keys``).
    stand_in: tuple[str, ...] = ()
    #: The vcrpy cassette entered for this repetition (``new_episodes`` asks it which requests it answers).
    vcr_cassette: Any = field(default=None, repr=False)
    #: The fast replay path of this repetition's cassette (``replay.Replay``), answering the pinned clients.
    replay: Any = field(default=None, repr=False)
    #: Set by the cassette's scope: whether its cassette answers a request (``new_episodes`` throttles only what
    #: goes live), and what a replay error means in the plugin's words (a call record's ``detail``).
    answers: Callable[[Any], bool] | None = field(default=None, repr=False)
    explain: Callable[[BaseException], str | None] | None = field(default=None, repr=False)
    #: Set when the repetition raised something other than an assertion: its recording is not kept.
    broken: bool = False
    #: Attempts whose response has not been closed yet; charged to the token budget when the repetition ends.
    open_attempts: list[Any] = field(default_factory=list)
    #: Cassette exchanges that no observed client made (set when the cassette closes).
    unobserved: int = 0
    #: Skipped by adaptive mode: the task's verdict was decided before this repetition started.
    curtailed: bool = False
    #: Call phases run (a retry plugin runs more than one), and the first one's outcome and answer.
    attempts: int = 0
    first_attempt: tuple[str, bool, Any, Any, str | None] | None = None
    #: Every credential this repetition sent (headers, URL, body), redacted from every output (see ``known``).
    secrets: set[str] = field(default_factory=set, repr=False)
    #: What the call phase's payload carried (calls, unobserved, notes, cassette), see ``payload.adds_nothing``.
    sent: tuple[Any, ...] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    #: The cassette matching's normalisation of a request body (what it ignores is not part of the cause either).
    normalize_request: Callable[[Any, str], Any] | None = field(default=None, repr=False)
    #: Digests of the request texts the repetition's calls already keep: a text is kept once per repetition.
    texts_kept: set[str] = field(default_factory=set, repr=False)
    #: While recording: the start and latency each attempt's cassette entry keeps, by the attempt's
    #: ``x-consistency-sent-at`` value (set by the cassette's request filter, taken by the attempt's record), so the
    #: recording session's calls carry the values its replays will read.
    recorded_timings: dict[str, tuple[float, float]] = field(default_factory=dict, repr=False)
    #: The hosts the session's routes name (a live call of the agent's own client elsewhere is warned about once:
    #: ``check_host``), and the hosts warned about so far in the session (shared by its repetitions).
    route_hosts: frozenset[str] = frozenset()
    warned_hosts: set[str] = field(default_factory=set, repr=False)
    #: US dollars the test added with ``consistency.cost(usd)`` (what the plugin cannot see: a tool's API).
    added_cost_usd: float = 0.0
    #: The roles opened with ``consistency.role`` and not closed yet, innermost last: the role of a call made from a
    #: thread whose own context opened none (a thread does not copy its starter's context variables).
    roles: list[str] = field(default_factory=list, repr=False)
    #: The graded outcome the test gave with ``consistency.score(x)`` (in [0, 1]); None when it gave none.
    score: float | None = None

    def add_call(self, call: CallRecord) -> None:
        with self.lock:
            if call.texts:
                kept = self.texts_kept
                call.texts = {key: text for key, text in call.texts.items() if key not in kept}
                kept.update(call.texts)
            self.calls.append(call)
        if not call.pinned and self.route_hosts and not call.replayed:
            self.check_host(call)

    def check_host(self, call: CallRecord) -> None:
        """Warn, once per host in a session, when a model call of the agent's own client went live to a host no
        route of the session names: it is not on the pinned route (a recipe followed halfway, an SDK's module-wide
        default), so it used whatever key and endpoint that client found, and it is neither pinned nor checked."""
        host = urlsplit(call.base_url or call.url).netloc.rpartition("@")[2]
        if not host or host in self.route_hosts or host in self.warned_hosts:
            return
        from pytest_consistency.model.records import SAMPLING_KINDS, endpoint_kind  # (a session with calls has it)

        if endpoint_kind(call.url) not in SAMPLING_KINDS:
            return  # a tool's own HTTP call, an embedding service: not the model the route pins
        self.warned_hosts.add(host)
        warnings.warn(
            ConsistencyWarning(
                f"{self.task_id}: a model call went to {host}, which no route of this session names: the agent's own "
                "client is not on the pinned route, so it sent its own key to its own endpoint. Build it from "
                "pinned_route (base_url and api_key), or for LiteLLM set litellm.api_base and litellm.api_key from "
                "it (docs: recipes, LiteLLM)"
            ),
            stacklevel=2,
        )

    def note(self, text: str) -> None:
        with self.lock:
            if text not in self.notes:
                self.notes.append(text)


_active: ActiveRepetition | None = None

#: The roles a call can have (``model.records.ROLES``, spelled here: the records load with the first call).
ROLES = ("agent", "judge", "user")
#: The role opened in this context (``Consistency.role``); asyncio copies it into every task it creates.
_role: contextvars.ContextVar[str | None] = contextvars.ContextVar("consistency_role", default=None)


def call_role(state: ActiveRepetition | None) -> str:
    """The role of a call made now: the one opened in this context, else (a thread started inside, which does not
    copy its starter's context) the innermost one open in the repetition, else ``agent``."""
    role = _role.get()
    if role is not None:
        return role
    if state is not None and state.roles:
        return state.roles[-1]
    return "agent"


#: Requests and child processes refused for carrying the replay's stand-in key (``standin``), since the last report
#: took them (``take_refusals``): the test phase during which one happened is the setup's failure.
refusals: list[str] = []


def take_refusals() -> list[str]:
    """The refusals noted since the last call, each once, in order."""
    if not refusals:
        return []
    taken = list(dict.fromkeys(refusals))
    del refusals[:]
    return taken


def activate(state: ActiveRepetition | None) -> None:
    global _active
    _active = state


def current() -> ActiveRepetition | None:
    return _active


class Consistency:
    """Handle of the current repetition, returned by the ``consistency`` fixture.

    In an unmarked test it stands for a single repetition (n = 1) that is not part of the consistency
    figures, so helpers that call ``record`` work in every test.
    """

    def __init__(self, state: ActiveRepetition, normalize: Callable[[Any, str], Any], ledger: Any = None) -> None:
        self._state = state
        self._normalize = normalize
        #: The session's shared ledger (``shared.ledger``) when it has a budget: an added cost counts against it.
        self._ledger = ledger

    @property
    def repeat(self) -> int:
        """1-based index of this repetition."""
        return self._state.repeat

    @property
    def n(self) -> int:
        return self._state.n

    @property
    def task_id(self) -> str:
        return self._state.task_id

    @property
    def calls(self) -> list[CallRecord]:
        """HTTP attempts observed so far in this repetition (a copy)."""
        with self._state.lock:
            return list(self._state.calls)

    @property
    def total_tokens(self) -> int:
        return sum(call.total_tokens for call in self.calls)

    @contextlib.contextmanager
    def role(self, name: str) -> Iterator[None]:
        """Tag every call made inside the block with the role ``name`` (``agent``, ``judge`` or ``user``): a judge
        built on a client of your own, a simulated user. Code the block awaits, tasks it creates and threads it
        starts inherit it; a role opened inside wins, and so does a judge client's own role. Route drift and the
        causes read the agent's calls only."""
        if name not in ROLES:
            raise ValueError(f"consistency.role() takes one of {', '.join(ROLES)}, not {shown(name)}")
        token = _role.set(name)
        state = self._state
        with state.lock:
            state.roles.append(name)
        try:
            yield
        finally:
            _role.reset(token)
            with state.lock:
                index = len(state.roles) - 1 - state.roles[::-1].index(name)
                del state.roles[index]

    def judging(self) -> contextlib.AbstractContextManager[None]:
        """``role("judge")``: the calls made inside decide the outcome, they are not the agent's."""
        return self.role("judge")

    def score(self, value: float) -> None:
        """This repetition's graded outcome: ``value`` in [0, 1] (a judge's score, an F1). The report keeps it, the
        mean score is shown beside the figures, and with the marker's ``score_min`` the repetition passes only when
        its score reaches it. Called again, the last score is kept (with a warning). A value that is not a number is
        a TypeError; NaN, an infinity or one outside [0, 1] a ValueError, and nothing is kept."""
        number = isinstance(value, numbers.Number) and not isinstance(value, numbers.Complex)
        if isinstance(value, bool) or not (isinstance(value, numbers.Real) or number):
            raise TypeError(f"consistency.score() takes a number in [0, 1], not {shown(value)}")
        amount = float(value)
        if not math.isfinite(amount) or not 0.0 <= amount <= 1.0:
            raise ValueError(f"consistency.score() takes a finite number in [0, 1], not {value!r}")
        with self._state.lock:
            again = self._state.score is not None
            self._state.score = amount
        if again:
            warnings.warn(
                ConsistencyWarning(
                    f"{self.task_id} repetition {self.repeat}: score() called again; keeping the last score"
                ),
                stacklevel=2,
            )

    def cost(self, usd: float) -> None:
        """Add ``usd`` US dollars to this repetition's cost: what the plugin cannot see, e.g. a paid tool's API.

        Added to the repetition, its task and the session in every output, and counted against
        ``--consistency-cost-budget`` (a later live call is refused once the budget is used up). Called more than
        once, the amounts add up. A negative, infinite or NaN amount, or one that is not a number, is a ValueError
        (TypeError) and adds nothing.
        """
        # a Decimal is a Number but not Real; a complex is Complex but not Real
        number = isinstance(usd, numbers.Number) and not isinstance(usd, numbers.Complex)
        real = isinstance(usd, numbers.Real) or number
        if isinstance(usd, bool) or not real:
            raise TypeError(f"consistency.cost() takes an amount in US dollars (a number), not {shown(usd)}")
        amount = float(usd)
        if not math.isfinite(amount) or amount < 0:
            raise ValueError(f"consistency.cost() takes a finite amount of US dollars of at least 0, not {usd!r}")
        with self._state.lock:
            self._state.added_cost_usd += amount
        if self._ledger is not None and amount:
            self._ledger.add(0, amount)

    def record(self, answer: Any) -> None:
        """Record this repetition's answer; it is compared across the task's repetitions.

        The answer must be JSON-serialisable, because it goes into the report and, under xdist, travels from
        the worker to the controller. Recording twice keeps the last answer and warns. NaN and infinities (not
        valid JSON), nesting deeper than ``MAX_ANSWER_DEPTH`` and more than ``MAX_ANSWER_ITEMS`` values are a
        ValueError, checked without recursion before anything else touches the answer.
        """
        if not plain_scalar(answer):  # a plain scalar passes both checks: they are skipped for it
            self._check(answer)
        if self._state.answer_recorded:
            warnings.warn(
                ConsistencyWarning(
                    f"{self.task_id} repetition {self.repeat}: record() called again; keeping the last answer"
                ),
                stacklevel=2,
            )
        try:
            normalized = self._normalize(answer, self.task_id)
        except Exception as exc:
            raise NormalizeError(
                f"pytest_consistency_normalize_answer raised {type(exc).__name__}: {exc} "
                f"({self.task_id} repetition {self.repeat}); fix the hook: the answer could not be normalised"
            ) from exc
        if not plain_scalar(normalized):
            check_answer(normalized, "the value pytest_consistency_normalize_answer returned")
            try:
                json.dumps(normalized, allow_nan=False)
            except (TypeError, ValueError):
                raise TypeError(
                    "pytest_consistency_normalize_answer returned a value that is not JSON-serialisable: "
                    f"{shown(normalized)}"
                ) from None
        self._state.answer = answer
        self._state.normalized = normalized
        self._state.answer_recorded = True

    @staticmethod
    def _check(answer: Any) -> None:
        """``record()``'s checks of an answer that is not a plain scalar: limits first, then JSON."""
        check_answer(answer)
        try:
            json.dumps(answer, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"consistency.record() needs a JSON-serialisable answer ({exc}); record a str, number, list "
                "or dict, e.g. the agent's final text or a dict of the fields you compare"
            ) from None
