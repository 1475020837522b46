"""The session result: typed data that every output (terminal, JSON report, ``pytest-consistency show``) renders.

Data flows one way: repetition records (:mod:`.records`) and the facts of the run (:class:`RunFacts`) go into
:func:`.summary.build_summary`, a pure function that derives every figure; :mod:`.gates` decides the gates;
renderers only read. Nothing is stored as a loose dict to be read back by string key, and the JSON report is
:func:`.serial.to_data` of :class:`SessionSummary`, so ``from_dict(to_dict(x)) == x`` and a report carries what a
merge needs to recompute every figure: per-repetition outcomes and normalised answers, calls, the route pinned and
the analysis settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pytest_consistency.model.records import FAILURE, NOT_RECORDED, RepetitionResult
from pytest_consistency.model.schema import (
    READABLE,
    SCHEMA,
    judge_from_tasks,
    judge_onto_tasks,
    schema_problem,
    upgraded,
)
from pytest_consistency.model.serial import ReportFormatError, from_data, to_data
from pytest_consistency.model.stopping import AdaptiveFacts, SequentialFacts, SuiteSequentialFacts
from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.suite import SuiteIntervals

if TYPE_CHECKING:  # each loads when a session uses it: a cause, a trajectory, resampling, a baseline (``serial``
    # finds them for the annotations when a report is written or read; issue 30)
    from pytest_consistency.model.cause import Cause, CauseShare, Finding
    from pytest_consistency.model.judge import JudgeSummary
    from pytest_consistency.model.resample import ResampleSummary
    from pytest_consistency.model.trajectory import DivergenceMap
    from pytest_consistency.model.user import UserSplitSummary
    from pytest_consistency.stats.stratified import StratifiedDrop


#: ``error``: a repetition failed for a reason of the setup, not the agent's (:mod:`.infrastructure`); in no figure,
#: never tolerated, and it fails the run.
#: ``undecided``: a task with ``min_rate`` whose repetitions show neither that its rate is at least the bar nor that
#: it is below (:mod:`..stats.rate`); scored, and ``--consistency-inconclusive`` says whether it fails the run.
Verdict = Literal["pass", "fail", "undecided", "xfail", "error", "incomplete", "skipped"]
#: Verdicts of tasks that count in the figures.
SCORED: tuple[Verdict, ...] = ("pass", "fail", "undecided", "xfail")
#: ``undecided``: the evidence shows neither side of the threshold (see :mod:`..analysis.gates`).
GateState = Literal["pass", "fail", "undecided"]
Target = Literal["suite", "population"]
GateOn = Literal["point", "bound"]


@dataclass(frozen=True)
class PinnedRoute:
    """What the calls are compared with; a field that is None is not compared."""

    base_url: str | None
    key_fingerprint: str | None
    model: str | None
    retries_max: int


@dataclass
class TaskDrift:
    """One task's route drift: what differed between its calls and the pinned route, and how many calls it saw."""

    kinds: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    calls: int = 0
    unobserved: int = 0
    unpinned_calls: int = 0
    retries: int = 0
    tokens: dict[str, int] = field(default_factory=dict)
    tokens_per_repetition: list[int] = field(default_factory=list)

    @property
    def drifted(self) -> bool:
        return bool(self.kinds)


@dataclass(frozen=True)
class Analysis:
    """How intervals are computed and gates decided; kept in the report so a merge decides the same way."""

    confidence: float = 0.95
    #: What the suite intervals describe: ``suite`` (these tasks, repetition noise only) or ``population``.
    target: Target = "suite"
    #: ``bound``: gates decided on one-sided bounds at their level (error-controlled); ``point``: on the estimate.
    gate_on: GateOn = "bound"
    #: What an undecided gate or task does to the exit status: ``pass`` (fail only on evidence) or ``fail``.
    inconclusive: Literal["fail", "pass"] = "pass"
    #: The one-sided exact test of a per-task regression against a baseline.
    test: Literal["boschloo", "fisher"] = "boschloo"
    #: The suite-level (stratified exact) test: None (the default) gates every run compared with a baseline, True
    #: requires a comparison (it fails as not measurable without one), False switches it off.
    suite_regression: bool | None = None
    #: ``--consistency-sequential``: the level of its sequential verdicts (min_rate tasks decided by an anytime-valid
    #: test, docs/sequential.md); None when the mode was off.
    sequential_alpha: float | None = None
    #: ``--consistency-sequential`` with ``--consistency-gap-max``: the seed of the rounds' inclusion draws
    #: (``--consistency-seed``, else 0); None when the suite gap gate did not run in rounds.
    sequential_seed: int | None = None
    #: ``--consistency-sequential-margin``: the regression gate's margin (pp) in sequential mode, else None.
    sequential_margin: float | None = None

    @property
    def alpha(self) -> float:
        return round(1 - self.confidence, 12)


@dataclass(frozen=True)
class RouteSettings:
    """The route every repetition was pinned to, as configured (never the key itself)."""

    base_url: str
    model: str | None
    key_fingerprint: str | None
    key_env: str
    replay_only: bool
    timeout: float
    max_retries: int
    temperature: float | None
    seed: int | None
    #: Retries per request above which a repetition counts as drift.
    retries_max: int
    #: The API the route speaks (``openai``, ``anthropic``).
    provider: str = "openai"
    #: Whose calls travel it: the agent's, or a judge's (``judge_client``), whose calls are no part of route drift.
    role: str = "agent"

    @property
    def name(self) -> str:
        """How outputs name the route: its provider, and its role when it is not the agent's (``openai judge``)."""
        return self.provider if self.role == "agent" else f"{self.provider} {self.role}"

    def pinned(self) -> PinnedRoute:
        return PinnedRoute(self.base_url, self.key_fingerprint, self.model, self.retries_max)


@dataclass(frozen=True)
class TokenBudget:
    """The session's token budget (``--consistency-token-budget``) and what the calls spent of it."""

    limit: int
    spent: int
    #: Merged reports: the shards whose own budget was exceeded (a shard over its budget stays over it when the
    #: sums of several shards are not).
    exceeded_in: tuple[str, ...] = ()

    @property
    def exceeded(self) -> bool:
        return self.spent > self.limit or bool(self.exceeded_in)


@dataclass(frozen=True)
class CostBudget:
    """The session's cost budget (``--consistency-cost-budget``, US dollars) and what its live calls (priced) and the
    costs its tests added spent of it, as the shared ledger counted them."""

    limit: float
    spent: float
    #: Merged reports: the shards whose own budget was exceeded.
    exceeded_in: tuple[str, ...] = ()

    @property
    def exceeded(self) -> bool:
        return self.spent > self.limit or bool(self.exceeded_in)


@dataclass(frozen=True)
class CostFacts:
    """What the session cost in US dollars (``analysis.summary.cost_facts``; every total an exact sum, so shards
    merged give the figure of one unsharded run). With unpriced calls (a model with no price) ``usd`` is a lower
    bound: "at least"."""

    #: Priced calls and the costs tests added (``consistency.cost``), and each part.
    usd: float
    calls_usd: float
    added_usd: float
    #: Calls that used tokens of a model with no price, and those models (as the calls name them).
    unpriced_calls: int
    unpriced_models: list[str]
    #: ``usd`` per task and per repetition that ran (None when none ran).
    per_task: float | None
    per_repetition: float | None
    #: Tasks with a decided verdict (pass or fail; undecided, in error, incomplete or skipped ones are not), and
    #: ``usd`` divided by them (None when there is none).
    decided: int
    per_decided_verdict: float | None
    #: The shipped price table's date.
    prices_as_of: str

    @property
    def at_least(self) -> bool:
        return self.unpriced_calls > 0


#: The options whose value changes a task's verdict without the task's own marker saying so: every shard of a run
#: must share them (``merge`` compares them), by their ``Settings`` attribute and flag.
VERDICT_OPTIONS: tuple[tuple[str, str], ...] = (
    ("repeat", "--consistency-repeat"),
    ("min_pass", "--consistency-min-pass"),
    ("min_rate", "--consistency-min-rate"),
)


@dataclass(frozen=True)
class RunFacts:
    """What the session knew besides its repetitions: the inputs of the summary other than the records."""

    route: RouteSettings | None = None
    record_mode: str | None = None
    preflight: str | None = None
    token_budget: TokenBudget | None = None
    interrupted: bool = False
    #: ``default`` or the plugins that implement ``pytest_consistency_answers_equivalent``.
    equivalence: str = "default"
    #: Failed tests that are not repetitions, and collection errors: they fail the run whatever the figures say.
    other_failures: int = 0
    #: Their node ids (a collection error's is its file's), so a merge counts once what every shard collected.
    other_failed: list[str] = field(default_factory=list)
    #: ``--consistency-n-min`` when adaptive repetitions were on, else None.
    adaptive_n_min: int | None = None
    #: ``--consistency-repetition-budget`` (sequential mode), else None.
    repetition_budget: int | None = None
    #: Pinned routes besides ``route`` that the session's tests used (the Anthropic route).
    other_routes: list[RouteSettings] = field(default_factory=list)
    #: ``I/N`` when the session was one CI shard (``--consistency-shard``, pytest-split): its verdicts are deferred
    #: to ``pytest-consistency merge``.
    shard: str | None = None
    #: The run this session belongs to (``--consistency-run-id``, else the CI's run, else random): the shards of one
    #: run share it, and a task's trace id is derived from it (docs/traces.md). None in a report of an older version.
    run_id: str | None = None
    #: The options set that change a task's verdict (:data:`VERDICT_OPTIONS`: n, the default bar), by flag, as text;
    #: an option not set is absent. A merge refuses shards that ran with different ones. None in an older report.
    verdict_settings: dict[str, str] | None = None
    #: ``--consistency-cost-budget`` and what was spent of it; None without one.
    cost_budget: CostBudget | None = None

    @property
    def shard_position(self) -> tuple[int, int] | None:
        """``(I, N)`` of :attr:`shard` when it reads ``I/N`` with 1 <= I <= N, else None."""
        index, sep, count = (self.shard or "").partition("/")
        if not (sep and index.isdecimal() and count.isdecimal() and 1 <= int(index) <= int(count)):
            return None
        return int(index), int(count)


@dataclass
class TaskResult:
    """One task's verdict and figures, from its repetitions (:func:`.summary.build_task`)."""

    task_id: str
    n: int
    k: int
    min_pass: float
    repetitions: list[RepetitionResult]
    #: Per repetition, in order: its outcome, and its recorded answer (None where none was recorded).
    outcomes: list[str]
    answers: list[Any]
    passes: int
    scored: int
    distinct_answers: int | None
    answers_disagree: bool | None
    verdict: Verdict
    mean_at_k: float | None
    pass_hat_k: float | None
    pass_at_k: float | None
    gap_pp: float | None
    #: Exact (Clopper–Pearson) interval of the pass rate, and that interval raised to the k-th power for pass^k.
    pass_rate_interval: Interval | None = None
    pass_hat_k_interval: Interval | None = None
    #: "route drift" or "agent" for an inconsistent task once route records exist; None otherwise.
    attribution: str | None = None
    drift: TaskDrift | None = None
    #: Errors that left a figure of this task undetermined (an equivalence hook that raised).
    errors: list[str] = field(default_factory=list)
    #: Repetitions adaptive mode skipped because the verdict was decided without them.
    curtailed: int = 0
    #: Where the scored repetitions' model steps part (:mod:`.trajectory`); None when none made a model call.
    trajectory: DivergenceMap | None = None
    #: ``min_rate``: the bar the task's rate is decided against (None: the task is decided by ``min_pass``), the
    #: one-sided exact bounds it was read on (each at 1 - alpha), and for an undecided task the repetitions a fresh
    #: run would likely need to decide it (:func:`..stats.rate.planning_n`; None when none would).
    min_rate: float | None = None
    rate_bounds: Interval | None = None
    plan_n: int | None = None
    #: An inconsistent task: why its repetitions part, as one word (:data:`.cause.CAUSES`), and the finding behind it.
    cause: Cause | None = None
    why: Finding | None = None
    #: ``--consistency-sequential``: how the verdict was reached: a crossing of the sequential test (``evidence``),
    #: none by the cap (``cap``: undecided), or the count rule's curtailment (``curtailed``: a min_pass task).
    decided_by: Literal["evidence", "cap", "curtailed", "rounds"] | None = None
    #: The repetition number the decision was reached at (skips counted; 0 when none was read), so that
    #: ``pytest-consistency verify`` can check it; None without sequential mode, and in a report written before it.
    decided_at: int | None = None
    #: US dollars its repetitions cost (priced calls and added costs), and its calls with no price (``cost_usd`` is
    #: then a lower bound).
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    #: Graded outcomes (``consistency.score``): the mean score of its scored repetitions that gave one, with its
    #: Hoeffding interval (``stats.bounded``), and how many gave one; None and 0 without scores.
    score_mean: float | None = None
    score_interval: Interval | None = None
    scores: int = 0

    @property
    def is_scored(self) -> bool:
        """A verdict from repetitions that ran (not a task the repetition budget left undecided before any ran)."""
        return self.verdict in SCORED and self.scored > 0

    @property
    def drifted(self) -> bool:
        return self.drift is not None and self.drift.drifted

    @property
    def tolerated_failures(self) -> int:
        """Failed repetitions of a passing task (``min_pass`` below 1, or ``min_rate``)."""
        return len([r for r in self.repetitions if r.outcome in FAILURE]) if self.verdict == "pass" else 0

    @property
    def not_recorded(self) -> str | None:
        """How to record this task when it has no cassette yet (its repetitions were skipped, or on CI failed, for
        that alone); None otherwise."""
        if self.verdict not in ("skipped", "error"):
            return None
        lines = {r.message for r in self.repetitions if r.outcome != "not run"}
        line = lines.pop() if len(lines) == 1 else None
        return line if line is not None and line.startswith(NOT_RECORDED) else None

    @property
    def bar(self) -> str:
        """The task's bar in the words of its marker: ``min_rate 0.8`` or ``min_pass 1``."""
        return f"min_rate {self.min_rate:g}" if self.min_rate is not None else f"min_pass {self.min_pass:g}"


@dataclass(frozen=True)
class RouteFacts:
    """What the calls of the session show about its route, beside the route as configured."""

    settings: RouteSettings
    #: The key fingerprint to show: the route's, or in replay-only mode the ones the cassettes were recorded with.
    key_shown: str
    calls: int
    retries: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    #: Total tokens of scored tasks / their repetitions.
    avg_tokens_per_task: float | None
    errors: dict[str, int]
    drift_pp: float | None
    drift_tasks: list[str]
    tasks_with_calls: int
    #: The session's other pinned routes (the Anthropic one), each checked against its own provider's calls.
    other_routes: list[RouteSettings] = field(default_factory=list)
    #: The key to show for each of ``other_routes``, by provider (as ``key_shown``).
    other_keys_shown: dict[str, str] = field(default_factory=dict)
    #: Calls per provider, when more than one provider was called.
    calls_by_provider: dict[str, int] = field(default_factory=dict)
    #: The OpenAI route (``settings``) was called, or no other route is pinned: its line is worth printing.
    route_used: bool = True
    #: Milliseconds all attempts waited for --consistency-concurrency/--consistency-rpm slots (not in any latency).
    wait_ms: float = 0.0


@dataclass
class GateResult:
    """One gate as the session decided it: the figure, its threshold and direction, and the outcome."""

    name: str
    option: str
    threshold: float
    direction: Literal["max", "min"]
    unit: str
    #: The point estimate (None: not measurable in this session) and, when decided on the bound, the one-sided
    #: bounds it was decided on (each at 1 - ``level``).
    value: float | None
    interval: Interval | None
    on: GateOn
    state: GateState
    #: The state as the exit status counts it (an undecided gate counts as ``--consistency-inconclusive``).
    passed: bool
    #: The level the gate was decided at: the session's alpha (or ``--mcnemar-p-min``'s P) divided by ``family``,
    #: the number of statistical gates the session decides (Bonferroni); None for a fact (route drift).
    level: float | None = None
    family: int = 1
    #: For an undecided gate: the repetitions per task a FRESH run would likely need to decide it (None: none would).
    plan_n: int | None = None
    #: For an undecided gate: what to do, in one sentence (a fresh run at ``plan_n``, or pin k).
    advice: str | None = None


@dataclass(frozen=True)
class TaskChange:
    """One task, baseline against current."""

    task_id: str
    status: Literal["newly failing", "newly flaky", "recovered", "still flaky", "unchanged", "new", "removed"]
    baseline: str | None
    current: str | None
    p_value: float | None
    q_value: float | None
    regression: bool
    #: The baseline or the current run of this task had route drift: a change may be the route, not the agent.
    confounded: bool


@dataclass(frozen=True)
class TaskJudgeChange:
    """One task's judge figures in the baseline and in the current run, both re-judged (``--consistency-rejudge``):
    the judge's flip rate (0..1) and its part of the gap (pp) beside the gap observed; None where a run has no figure
    (the task is not in it, or no repetition of it gave two verdicts). Compared, never tested: no gate reads it."""

    task_id: str
    baseline_flip_rate: float | None
    current_flip_rate: float | None
    baseline_judge_gap_pp: float | None
    current_judge_gap_pp: float | None
    baseline_gap_pp: float | None
    current_gap_pp: float | None


@dataclass(frozen=True)
class Comparison:
    """The current run against a baseline report (``--consistency-baseline``)."""

    baseline: str
    test: str
    alpha: float
    tasks: list[TaskChange]
    regressions: int
    #: Smallest drop from a clean baseline (c = n) the test can flag for one task alone, and with every task's
    #: share of the false discovery rate (Benjamini–Hochberg's smallest threshold, alpha / tasks).
    minimum_detectable_drop: int | None
    minimum_detectable_drop_all: int | None
    #: Exact McNemar p-value of pass^n flips between the runs (tasks that went all-pass → not vs not → all-pass).
    flips_worse: int
    flips_better: int
    flips_p_value: float | None
    common_tasks: int
    gap_change_pp: float | None
    gap_change_interval: Interval | None
    route_changes: list[str]
    baseline_tokens_per_task: float | None
    current_tokens_per_task: float | None
    #: The suite-level test over the tasks both runs scored: exact stratified (conditional, Cochran–Mantel–Haenszel)
    #: test of a drop, and the pooled pass-rate change with its interval (None when no task is in both runs).
    suite_change: StratifiedDrop | None = None
    #: The suite-level test found a drop at ``alpha``.
    suite_regression: bool = False
    #: Why the tests that assume binomial counts (per task, McNemar, the gap change, the suite-level test) were not
    #: run: a run with curtailed tasks (``--consistency-adaptive``). None when they were.
    untested: str | None = None
    #: How the runs were made comparable when their k or n differ (the common k of the gap change, the repetitions
    #: McNemar's flips are read on), one sentence each.
    notes: list[str] = field(default_factory=list)
    #: The gap change's one-sided bounds at the gap-increase gate's level (each at 1 - ``alpha``), the interval that
    #: gate is decided on; None without tasks in both runs.
    gap_change_bounds: Interval | None = None
    #: The baseline's [passes, scored] of each task both runs have (none curtailed): what the sequential regression
    #: gate (``--consistency-sequential-margin``) bounds the baseline's pass rate from, kept so it can be recomputed.
    baseline_counts: dict[str, list[int]] = field(default_factory=dict)
    #: The baseline ran with ``--consistency-sequential``: it is not a baseline for the exact tests, nor for the margin.
    baseline_sequential: bool = False
    #: Both runs re-judged: each task's judge figures in both (:mod:`..analysis.judge_change`); empty otherwise.
    judge: list[TaskJudgeChange] = field(default_factory=list)
    #: Only one of the runs re-judged: which, in one sentence (the judge is then not compared); None otherwise.
    judge_missing: str | None = None


@dataclass
class SessionSummary:
    """Every figure, verdict and gate of a session: what the terminal, every report and ``merge`` render."""

    repeat: int | None
    k: int | None
    task_count: int
    mean_at_k: float | None
    pass_hat_k: float | None
    pass_at_k: float | None
    consistency_gap_pp: float | None
    answer_disagreement_pp: float | None
    tasks: list[TaskResult]
    analysis: Analysis = field(default_factory=Analysis)
    run: RunFacts = field(default_factory=RunFacts)
    intervals: SuiteIntervals | None = None
    route: RouteFacts | None = None
    comparison: Comparison | None = None
    adaptive: AdaptiveFacts | None = None
    sequential: SequentialFacts | None = None
    sequential_suite: SuiteSequentialFacts | None = None
    #: With both suite gates in rounds: the regression gate's (``sequential_suite`` is the gap gate's).
    sequential_regression: SuiteSequentialFacts | None = None
    gates: list[GateResult] = field(default_factory=list)
    passed: bool = True
    #: The session's exit status as settled by the plugin (None until settled).
    exit_status: int | None = None
    warnings: list[str] = field(default_factory=list)
    #: Errors of the plugin's outputs and of user hooks, each naming itself.
    errors: list[str] = field(default_factory=list)
    #: ``--consistency-resample``: the decisions the samples took at the resampled step (None otherwise).
    resample: ResampleSummary | None = None
    #: ``--consistency-rejudge``: the judge's flip rate, agreement and gap split (None otherwise).
    judge: JudgeSummary | None = None
    #: ``--consistency-rejudge-role=agent``: the agent's flip rate on the simulated user's recorded turns and the
    #: gap split between the simulated user and the agent (None otherwise).
    simulated_user: UserSplitSummary | None = None
    #: Per cause (every word of :data:`.cause.CAUSES`), the inconsistent tasks and their points of the gap; None
    #: when no task was scored.
    causes: dict[str, CauseShare] | None = None
    #: pass^k of the suite (the mean over its scored tasks) for k = 1 .. n, as τ-bench plots it; None when the scored
    #: tasks do not share one n.
    pass_hat_k_curve: list[float] | None = None
    #: What the session cost in US dollars; None when no call used a token and no test added a cost.
    cost: CostFacts | None = None
    #: Graded outcomes: the mean score over every scored repetition of the scored tasks that gave one, with its
    #: Hoeffding interval (these tasks, repetition noise), and how many; None and 0 when no test gave a score.
    score_mean: float | None = None
    score_interval: Interval | None = None
    scores: int = 0

    @property
    def interrupted(self) -> bool:
        return self.run.interrupted

    @property
    def tolerated_nodeids(self) -> set[str]:
        """Repetitions whose failure the task's bar tolerates: in a task that passes as a whole (or is undecided
        under ``--consistency-inconclusive=pass``), in a session that ran to the end (a run stopped early by a
        tolerated failure did not run everything, so nothing is tolerated). A re-judged repetition's judge samples are
        its items: an outvoted failing sample of a passing task is tolerated with it."""
        if self.interrupted:
            return set()
        return {
            nodeid
            for t in self.tasks
            if self.counts_as_passed(t)
            for r in t.repetitions
            for nodeid in (r.nodeid, *(s.nodeid for s in r.samples))
        }

    def counts_as_passed(self, task: TaskResult) -> bool:
        """The task's verdict as the exit status counts it: a pass, or undecided with undecided counted as a pass."""
        return task.verdict == "pass" or (task.verdict == "undecided" and self.analysis.inconclusive == "pass")

    @property
    def scored_tasks(self) -> list[TaskResult]:
        return [t for t in self.tasks if t.is_scored]

    def to_dict(self) -> dict[str, Any]:
        """The JSON report: ``schema``, ``summary`` (every field but the tasks) and ``tasks``. Every per-task figure
        is on its task: a rejudge session's per-task judge figures (``judge.tasks[]`` here) are written as
        ``tasks[].judge``, and ``summary.judge`` keeps the suite's (:func:`.schema.judge_onto_tasks`)."""
        data = to_data(self)
        tasks = data.pop("tasks")
        if data.get("judge") is not None:
            judge_onto_tasks(data["judge"], tasks)
        return {"schema": SCHEMA, "summary": data, "tasks": tasks}

    @classmethod
    def from_dict(cls, data: Any, where: str = "report") -> SessionSummary:
        if not isinstance(data, dict):
            raise ReportFormatError(f"{where}: not a pytest-consistency report (a JSON object is expected)")
        schema = data.get("schema")
        if schema in READABLE:
            data = upgraded(data, where)
            schema = data.get("schema")
        if schema != SCHEMA:
            raise ReportFormatError(f"{where}: {schema_problem(schema)}")
        unknown = sorted(set(data) - {"schema", "summary", "tasks"})
        if unknown or not isinstance(data.get("summary"), dict):
            raise ReportFormatError(f"{where}: expected the keys schema, summary and tasks; got {sorted(data)}")
        summary, tasks = judge_from_tasks(data["summary"], data.get("tasks"), where)
        return from_data(cls, {**summary, "tasks": tasks}, where)
