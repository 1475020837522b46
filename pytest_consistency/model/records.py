"""Plain records that travel from a repetition to the session summary and the JSON report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a repetition without calls makes no decision nor digest: the types load with the first call
    # (``serial`` finds them for the annotations when a report is written or read)
    from pytest_consistency.model.cause import Sent
    from pytest_consistency.model.trajectory import Decision, Message

#: Outcomes of one repetition. ``passed`` and ``xpassed`` are successes; ``failed``, ``error`` (setup or
#: teardown raised) and ``xfailed`` are failures; ``skipped`` repetitions are not scored at all;
#: ``not run`` marks a repetition the session never reached (interrupted or ``-x``); ``curtailed`` one that adaptive
#: mode skipped because its task's verdict was already decided.
SUCCESS = frozenset({"passed", "xpassed"})
FAILURE = frozenset({"failed", "error", "xfailed"})
OUTCOMES = SUCCESS | FAILURE | {"skipped", "not run", "curtailed"}
#: How a repetition of a task with no cassette at all says so (the first words of its message): not the route's
#: drift, not the agent's failure, a task to record (skipped; on CI, the setup's failure).
NOT_RECORDED = "not recorded yet"
#: A call's ``detail`` when it failed because no connection could be made (refused, no route to the host, a name
#: that does not resolve): a route no call reaches, as against an error of the client's own (a closed event loop).
CANNOT_CONNECT = "could not connect"


#: The endpoint kinds a call's URL ends with (longest first: ``/chat/completions`` before ``/completions``), each a
#: route of its own for drift: an agent's chat calls and its embedding calls are not drift from one another.
ENDPOINTS: tuple[tuple[str, str], ...] = (
    ("/chat/completions", "chat"),
    ("/responses", "responses"),
    ("/messages", "messages"),
    ("/completions", "completions"),
    ("/embeddings", "embeddings"),
)
#: The endpoint kinds that sample from the pinned model (an embedding call asks for an embedding model of its own).
SAMPLING_KINDS = frozenset({"chat", "responses", "messages", "completions"})
#: Who made a call (``CallRecord.role``): the agent under test (the default), an LLM judge deciding the outcome
#: (``judge_client``, ``consistency.judging()``), a simulated user driving the agent (``consistency.role("user")``).
ROLES = ("agent", "judge", "user")
AGENT = "agent"


def endpoint_kind(url: str) -> str:
    """The kind of endpoint a call went to (:data:`ENDPOINTS`), else its URL's last path segment (``models``)."""
    path = url.split("?", 1)[0].rstrip("/")
    for suffix, kind in ENDPOINTS:
        if path.endswith(suffix):
            return kind
    return path.rsplit("/", 1)[-1] or path


@dataclass
class CallRecord:
    """One HTTP attempt, as seen on the wire (retries are separate records)."""

    method: str
    url: str
    base_url: str
    key_fingerprint: str | None
    model_requested: str | None
    model_served: str | None = None
    system_fingerprint: str | None = None
    status: int | None = None
    error: str | None = None
    #: Why a replay did not match, or that token counts were estimated; None when there is nothing to add.
    detail: str | None = None
    retry_index: int = 0
    latency_ms: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    stream: bool = False
    pinned: bool = True
    replayed: bool = False
    gateway: dict[str, str] = field(default_factory=dict)
    #: Token counts were estimated (a stream closed before its usage arrived), not read from the response.
    tokens_estimated: bool = False
    #: The API the request spoke (``openai``, ``anthropic``): drift is checked against that provider's route.
    provider: str = "openai"
    #: Prompt tokens read from or written to the provider's prompt cache (Anthropic reports them apart from
    #: ``input_tokens``; they are included in ``total_tokens``).
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    #: Rate-limit headers of the response (``anthropic-ratelimit-*``, ``x-ratelimit-*``, ``retry-after``).
    rate_limit: dict[str, str] = field(default_factory=dict)
    #: Replayed: the key fingerprint of the route pinned when it was recorded (drift compares with it, as the
    #: replaying session has no key of its own).
    route_key: str | None = None
    #: Milliseconds this attempt waited for a slot (``--consistency-concurrency``, ``--consistency-rpm``) before
    #: it was sent; not part of ``latency_ms``.
    wait_ms: float = 0.0
    #: A sampling call: what the model decided, read from the response as it streamed past (live or replayed), and
    #: what the step asked that was new since the model's previous turn (:mod:`.trajectory`); None and () otherwise.
    decision: Decision | None = None
    asked: tuple[Message, ...] = ()
    #: A sampling call: the digests of what it sent, canonicalised (:mod:`.cause`), and the texts of its parts (cut,
    #: by digest; a text already kept by an earlier call of the same repetition is not kept again).
    sent: Sent | None = None
    texts: dict[str, str] = field(default_factory=dict)
    #: Wall-clock seconds since the epoch when the attempt was sent (after any throttle wait); replayed, when it was
    #: sent while recording (None for a cassette recorded before 0.1.0 kept it). Traces lay calls out by it.
    started_at: float | None = None
    #: OpenAI: the part of ``prompt_tokens`` read from the prompt cache (``prompt_tokens_details.cached_tokens``,
    #: ``input_tokens_details.cached_tokens`` on the Responses API), priced at the cached-input rate.
    cached_prompt_tokens: int = 0
    #: What the attempt cost in US dollars, from its usage and its model's price (:mod:`.prices`); None when it used
    #: tokens of a model with no price (or was never priced: a report of an older version).
    cost_usd: float | None = None
    #: Who made the call (:data:`ROLES`): route drift and the causes read the agent's calls only.
    role: str = AGENT


def agent_calls(calls: list[CallRecord]) -> list[CallRecord]:
    """The calls the agent made (``role`` ``agent``): what route drift and the causes are about. A judge's or a
    simulated user's calls are sampled too, but their retries and their answers are not the agent's."""
    if all(call.role == AGENT for call in calls):  # the commonest case: no judge, the same list
        return calls
    return [call for call in calls if call.role == AGENT]


@dataclass
class RepetitionResult:
    """What one repetition of a task produced, assembled from its setup, call and teardown reports."""

    task_id: str
    nodeid: str
    repeat: int
    n: int
    k: int
    min_pass: float
    order: int = 0
    outcome: str = "not run"
    answer_recorded: bool = False
    answer: Any = None
    normalized: Any = None
    duration: float = 0.0
    calls: list[CallRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cassette: str | None = None
    #: Times pytest-rerunfailures ran this repetition again; the first outcome is the one that counts.
    reruns: int = 0
    #: HTTP exchanges in the cassette that no observed client made (aiohttp, requests, ...): unseen route.
    unobserved: int = 0
    #: Why this repetition failed when the reason is the setup's, not the agent's (a corrupt cassette, a refused
    #: call, a hook that raised: :mod:`.infrastructure`); such a repetition is never tolerated. None otherwise.
    infrastructure: str | None = None
    #: Why it failed, in one line (the assertion or exception, pytest's own wording), redacted; None when it did not.
    message: str | None = None
    #: Wall-clock seconds since the epoch when its first phase (setup) started and its last (teardown) stopped, as
    #: pytest's reports say; None until a phase reported.
    started: float | None = None
    stopped: float | None = None
    #: The marker's ``min_rate`` (the task is decided on exact tests against it), None when it is decided by
    #: ``min_pass``.
    min_rate: float | None = None
    #: US dollars the test added for what the plugin cannot see (``consistency.cost(usd)``: a tool's API).
    added_cost_usd: float = 0.0
    #: What the repetition cost: its priced calls and ``added_cost_usd`` (derived by the summary), and its calls
    #: that used tokens of a model with no price (so ``cost_usd`` is a lower bound when this is not 0).
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    #: The graded outcome the test gave (``consistency.score(x)``, in [0, 1]), None when it gave none; and the
    #: marker's ``score_min``, the score at or above which the repetition passes (None: its assertions decide).
    score: float | None = None
    score_min: float | None = None
    #: A re-judged repetition (``--consistency-rejudge``, ``--consistency-judge-votes``): its judge samples, one record
    #: each (``repeat`` the sample's item number), folded into this one, whose outcome is the mode's (sample 1's, or
    #: the majority's); empty for any other repetition.
    samples: list[RepetitionResult] = field(default_factory=list)

    @property
    def scored(self) -> bool:
        return self.outcome in SUCCESS or self.outcome in FAILURE

    @property
    def succeeded(self) -> bool:
        return self.outcome in SUCCESS
