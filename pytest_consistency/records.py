"""Plain records that travel from a repetition to the session summary and the JSON report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: Outcomes of one repetition. ``passed`` and ``xpassed`` are successes; ``failed``, ``error`` (setup or
#: teardown raised) and ``xfailed`` are failures; ``skipped`` repetitions are not scored at all;
#: ``not run`` marks a repetition the session never reached (interrupted or ``-x``).
SUCCESS = frozenset({"passed", "xpassed"})
FAILURE = frozenset({"failed", "error", "xfailed"})


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallRecord:
        return cls(**data)


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

    @property
    def scored(self) -> bool:
        return self.outcome in SUCCESS or self.outcome in FAILURE

    @property
    def succeeded(self) -> bool:
        return self.outcome in SUCCESS


@dataclass
class GateResult:
    name: str
    option: str
    threshold: float
    value: float | None
    passed: bool
    comparison: str
    unit: str

    def describe(self) -> str:
        """One line such as ``consistency gap 24.4 pp > 12.0 pp``; says why when it cannot be measured."""
        label = self.name.replace("_", " ")
        if self.value is None:
            return f"{label}: not measurable in this session (threshold {self.threshold:.1f}{self.unit})"
        sign = {"max": ("<=", ">"), "min": (">=", "<")}[self.comparison][0 if self.passed else 1]
        return f"{label} {self.value:.1f}{self.unit} {sign} {self.threshold:.1f}{self.unit}"


@dataclass
class TaskResult:
    task_id: str
    n: int
    k: int
    min_pass: float
    repetitions: list[RepetitionResult]
    passes: int
    scored: int
    distinct_answers: int | None
    disagrees: bool | None
    verdict: str
    mean_at_k: float | None
    pass_hat_k: float | None
    pass_at_k: float | None
    gap_pp: float | None
    #: "route drift" or "agent" for an inconsistent task once route records exist; None otherwise.
    attribution: str | None = None
    #: Route facts of this task (drift kinds, tokens, errors), filled by the route module.
    route: dict[str, Any] = field(default_factory=dict)
    #: Errors that left a figure of this task undetermined (an equivalence hook that raised).
    errors: list[str] = field(default_factory=list)


@dataclass
class SessionSummary:
    repeat: int | None
    k: int | None
    task_count: int
    mean_at_k: float | None
    pass_hat_k: float | None
    pass_at_k: float | None
    consistency_gap_pp: float | None
    answer_disagreement_pp: float | None
    gates: list[GateResult]
    passed: bool
    interrupted: bool
    tasks: list[TaskResult]
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    #: Errors of the plugin's outputs and of user hooks, each naming itself.
    errors: list[str] = field(default_factory=list)
    #: The session's exit status as settled by the plugin (None until settled).
    exit_status: int | None = None
