"""A plan before the run: per task and per gate, how likely the planned run is to decide, and what it will cost.

It exists so the price of a verdict is visible before the run (``pytest-consistency plan``, ``pytest
--consistency-plan``). The assumed truth is what the last run saw: each task's observed pass rate, its tokens,
dollars and wall time per repetition. Every chance and every planning n comes from the code the verdicts use:

- a ``min_rate`` task at a fixed n: :func:`..stats.rate.decided_probability` (the exact binomial chance that the
  one-sided bound lands on the side the assumed rate is on) and :func:`..stats.rate.planning_n`;
- in sequential mode: :func:`..stats.sequential.operating` (the decided share and the expected repetitions, an
  exact sum over the paths, stopped at the decision) and :func:`..stats.sequential.planning_cap`;
- a ``min_pass`` task (a rule on the count, always decided): the exact chance that it PASSES; in sequential mode,
  which stops it by curtailment, its expected repetitions are curtailment's exact mean
  (:func:`.adaptive.expected_repetitions`);
- a suite gate decided on its bounds: the gate itself decided on the last run (:func:`.gates.decide`), and the
  chance that a fresh run at the planned n lands its bound past the threshold, read as a normal approximation on
  the gate's own bounds scaled like 1/sqrt(n) (the assumption of :func:`.gates.fresh_run`, whose n it reports).

Dollars are the calls re-priced with the session's price table (:func:`..model.prices.call_cost`) plus what the
tests added; a model with no price is named, never priced at zero. Minutes are the mean wall time per repetition x
the expected repetitions / the concurrency. A task without history says what is assumed instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

from pytest_consistency.analysis.adaptive import expected_repetitions, required_passes
from pytest_consistency.analysis.gates import ALL_GATES, decide, family_size
from pytest_consistency.model.prices import PriceTable, call_cost, priced_model, total
from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.result import Analysis, SessionSummary, TaskResult
from pytest_consistency.stats.binomial import binomial_sf
from pytest_consistency.stats.rate import PLAN_POWER, decided_probability, planning_n

#: The rate assumed for a task without history: the widest (the most repetitions any bar needs near it).
ASSUMED_RATE = 0.5
#: Outcomes of repetitions that ran (their tokens, dollars and time are the history).
_NOT_RAN = ("not run", "curtailed")


class PlanError(ValueError):
    """No plan can be made from this input: the message names the file or option and the fix."""


@dataclass(frozen=True)
class PlannedTask:
    """What the planned run does for one task: its n (the cap in sequential mode) and its bar."""

    task_id: str
    n: int
    min_pass: float = 1.0
    min_rate: float | None = None


@dataclass(frozen=True)
class TaskPlan:
    """One task's plan: its chance of a decided verdict at the planned n, the n that would decide it, its cost."""

    task_id: str
    n: int
    #: ``min_rate 0.8`` or ``min_pass 1``: the bar the verdict is read on.
    bar: str
    #: ``9/10`` from the last run; None without history.
    history: str | None
    #: The rate taken as the truth (the observed share, or :data:`ASSUMED_RATE`).
    rate: float
    #: The chance of a decided verdict at n (for a ``min_pass`` task, of a PASS: the rule always decides).
    decided: float
    #: The n (the cap in sequential mode) that decides at the plan's power; None: none up to the marker's maximum.
    n_to_decide: int | None
    expected_repetitions: float
    tokens_per_repetition: float | None
    expected_tokens: float | None
    usd_per_repetition: float | None
    expected_usd: float | None
    seconds_per_repetition: float | None
    expected_minutes: float | None
    #: Models whose calls have no price (then ``expected_usd`` is None).
    unpriced_models: list[str] = field(default_factory=list)
    #: What is assumed where there is no history, in words.
    assumed: str | None = None
    #: How many recorded cassettes gave the tokens, dollars and minutes (a task without a report's history).
    cassettes: int | None = None


@dataclass(frozen=True)
class GatePlan:
    """One suite gate: what the last run decided, and the chance the planned run decides it."""

    name: str
    option: str
    threshold: float
    value: float | None
    state: str
    #: The chance of a decided verdict at the planned n; None when it cannot be read from the bounds (a fact, a test
    #: against a baseline, a point comparison), then ``note`` says why.
    decided: float | None
    n_to_decide: int | None
    note: str | None = None


@dataclass(frozen=True)
class Plan:
    """The plan of a session: per task, per gate, and the totals."""

    source: str
    sequential: bool
    alpha: float
    power: float
    concurrency: int
    tasks: list[TaskPlan]
    gates: list[GatePlan]
    expected_repetitions: float
    #: Totals over the tasks with history of each figure; ``*_complete`` says whether every task had one.
    expected_tokens: float
    tokens_complete: bool
    expected_usd: float
    usd_complete: bool
    expected_minutes: float
    minutes_complete: bool
    unpriced_models: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _History:
    #: None for a history read from cassettes: they keep the calls, not whether the repetition passed.
    passes: int | None
    scored: int | None
    tokens: float | None
    usd: float | None
    seconds: float | None
    unpriced: tuple[str, ...]
    repetitions: int


def _usage(
    calls_per_repetition: Sequence[Sequence[CallRecord]], added: Sequence[float], prices: PriceTable
) -> tuple[float, float | None, tuple[str, ...]]:
    """(mean tokens, mean dollars or None when a model has no price, the models with no price) per repetition."""
    count = len(calls_per_repetition)
    amounts: list[float] = [a for a in added if a]
    unpriced: set[str] = set()
    for calls in calls_per_repetition:
        for call in calls:
            usd = call_cost(call, prices)
            if usd is None:
                unpriced.add(priced_model(call) or "(none named)")
            else:
                amounts.append(usd)
    tokens = sum(c.total_tokens for calls in calls_per_repetition for c in calls) / count
    return tokens, None if unpriced else total(amounts) / count, tuple(sorted(unpriced))


def _history(task: TaskResult, prices: PriceTable) -> _History | None:
    ran = [r for r in task.repetitions if r.outcome not in _NOT_RAN]
    if not ran or not task.scored:
        return None
    tokens, usd, unpriced = _usage([r.calls for r in ran], [r.added_cost_usd for r in ran], prices)
    seconds = [r.duration for r in ran]
    return _History(task.passes, task.scored, tokens, usd, sum(seconds) / len(ran), unpriced, len(ran))


def recorded_seconds(calls: Sequence[CallRecord]) -> float | None:
    """The wall time of a recorded repetition's calls: from the first start to the last end when the cassette kept
    each start, else the sum of their latencies; None when a latency is not kept. The test's own time between the
    calls is not in a cassette, so this is a lower bound of the repetition's time."""
    if not calls or any(c.latency_ms is None for c in calls):
        return None
    if all(c.started_at is not None for c in calls):
        first = min(c.started_at for c in calls if c.started_at is not None)
        last = max(c.started_at + (c.latency_ms or 0.0) / 1000 for c in calls if c.started_at is not None)
        return last - first
    return math.fsum(c.latency_ms or 0.0 for c in calls) / 1000


def _recorded_history(recorded: Sequence[Sequence[CallRecord]], prices: PriceTable) -> _History | None:
    if not recorded:
        return None
    tokens, usd, unpriced = _usage(recorded, (), prices)
    seconds = [recorded_seconds(calls) for calls in recorded]
    known = [s for s in seconds if s is not None]
    mean = None if len(known) < len(seconds) else math.fsum(known) / len(known)
    return _History(None, None, tokens, usd, mean, unpriced, len(recorded))


def _task_chances(
    planned: PlannedTask, passes: int, scored: int, analysis: Analysis, n_min: int
) -> tuple[float, int | None, float]:
    """(chance of a decided verdict at n, the n deciding at the plan's power, the expected repetitions)."""
    rate = passes / scored
    if planned.min_rate is None:
        need = required_passes(planned.n, planned.min_pass)
        # Sequential mode stops a min_pass task by curtailment: its exact mean repetitions, not the full n.
        repetitions = (
            float(planned.n)
            if analysis.sequential_alpha is None
            else expected_repetitions(rate, planned.n, planned.min_pass)
        )
        return binomial_sf(need, planned.n, rate), None, repetitions
    if analysis.sequential_alpha is not None:
        from pytest_consistency.stats.sequential import operating, planning_cap

        chances = operating(rate, planned.n, planned.min_rate, analysis.sequential_alpha, n_min)
        cap = planning_cap(passes, scored, planned.min_rate, analysis.sequential_alpha)
        return chances.passed + chances.failed, cap, chances.repetitions
    alpha = analysis.alpha
    decided = decided_probability(planned.n, rate, planned.min_rate, alpha)
    return decided, planning_n(passes, scored, planned.min_rate, alpha), float(planned.n)


def _times(value: float | None, repetitions: float) -> float | None:
    return None if value is None else value * repetitions


def plan_task(
    planned: PlannedTask,
    history: TaskResult | None,
    analysis: Analysis,
    prices: PriceTable,
    concurrency: int = 1,
    n_min: int = 1,
    recorded: Sequence[Sequence[CallRecord]] = (),
) -> TaskPlan:
    """The plan of one task from its last run; without one (None, or nothing that ran), from the calls of its
    ``recorded`` cassettes (one list per repetition: tokens, dollars and minutes, the rate :data:`ASSUMED_RATE`),
    else with nothing but the assumed rate."""
    bar = f"min_rate {planned.min_rate:g}" if planned.min_rate is not None else f"min_pass {planned.min_pass:g}"
    seen = None if history is None else _history(history, prices)
    if seen is None:
        seen = _recorded_history(recorded, prices)
    if seen is None or seen.passes is None or seen.scored is None:
        # 1 of 2 is the widest rate as counts: the planning figures read counts, and c / n is what they assume.
        passes, scored = 1, 2
        if seen is None:
            assumed = f"no history: assumed rate {ASSUMED_RATE:g} (the widest), tokens, dollars and minutes unknown"
        else:
            assumed = (
                f"from {seen.repetitions} recorded cassette{'s' if seen.repetitions != 1 else ''}: no pass/fail in "
                f"a cassette, assumed rate {ASSUMED_RATE:g} (the widest); minutes are the recorded calls' time"
            )
    else:
        passes, scored, assumed = seen.passes, seen.scored, None
    decided, n_to_decide, repetitions = _task_chances(planned, passes, scored, analysis, n_min)
    seconds = None if seen is None else seen.seconds
    minutes = None if seconds is None else seconds * repetitions / concurrency / 60.0
    return TaskPlan(
        task_id=planned.task_id,
        n=planned.n,
        bar=bar,
        history=None if seen is None or assumed is not None else f"{seen.passes}/{seen.scored}",
        rate=passes / scored,
        decided=decided,
        n_to_decide=n_to_decide,
        expected_repetitions=repetitions,
        tokens_per_repetition=None if seen is None else seen.tokens,
        expected_tokens=None if seen is None else _times(seen.tokens, repetitions),
        usd_per_repetition=None if seen is None else seen.usd,
        expected_usd=None if seen is None else _times(seen.usd, repetitions),
        seconds_per_repetition=seconds,
        expected_minutes=minutes,
        unpriced_models=[] if seen is None else list(seen.unpriced),
        assumed=assumed,
        cassettes=None if seen is None or seen.passes is not None else seen.repetitions,
    )


def _gate_chance(value: float, low: float, high: float, threshold: float, level: float, scale: float) -> float:
    """The chance that a fresh run's one-sided bound at ``level`` lands past ``threshold``, the estimate normal
    around ``value`` with the spread the last run's bounds imply (half-width / z) times ``scale``."""
    z = NormalDist().inv_cdf(1.0 - level)
    normal = NormalDist()
    chance = 0.0
    for half, sign in ((value - low, 1.0), (high - value, -1.0)):  # lower bound above, upper bound below
        spread = half / z * scale
        if spread <= 0.0:
            chance += 1.0 if sign * (value - threshold) > 0 else 0.0
            continue
        chance += normal.cdf(sign * (value - threshold) / spread - z)
    return min(1.0, chance)


def plan_gates(
    summary: SessionSummary, thresholds: Mapping[str, float | None], planned_n: int | None
) -> list[GatePlan]:
    """Every gate set, decided on the last run as the gates decide it, with its chance at ``planned_n``."""
    compared = summary.comparison is not None and summary.comparison.untested is None
    family = family_size(summary.analysis, thresholds, compared)
    plans = []
    for gate in ALL_GATES:
        threshold = thresholds.get(gate.dest)
        if threshold is None:
            continue
        result = decide(gate, summary, threshold, family)
        chance: float | None = None
        note = None
        if result.interval is None or result.value is None or result.level is None:
            note = "decided on a fact, a test against a baseline or the point estimate: no chance read from bounds"
        elif gate.scored_at_k and any(t.k == t.n for t in summary.scored_tasks):
            note = "scored at k = n: more repetitions raise k too; pin k (repeat_consistency(n=..., k=...))"
        else:
            scale = 1.0
            if summary.repeat is not None and planned_n is not None:
                scale = math.sqrt(summary.repeat / planned_n)
            low, high = result.interval.low, result.interval.high
            chance = _gate_chance(result.value, low, high, threshold, result.level, scale)
        plans.append(
            GatePlan(
                name=gate.name,
                option=gate.flag,
                threshold=threshold,
                value=result.value,
                state=result.state,
                decided=chance,
                n_to_decide=result.plan_n if result.state == "undecided" else summary.repeat,
                note=note,
            )
        )
    return plans


def _sum(values: Sequence[float | None]) -> tuple[float, bool]:
    known = [v for v in values if v is not None]
    return math.fsum(known), len(known) == len(values)


def build_plan(
    source: str,
    planned: Sequence[PlannedTask],
    summary: SessionSummary | None,
    thresholds: Mapping[str, float | None],
    analysis: Analysis,
    prices: PriceTable,
    concurrency: int = 1,
    n_min: int = 1,
    recorded: Mapping[str, Sequence[Sequence[CallRecord]]] | None = None,
) -> Plan:
    """The session's plan: each planned task against its history in ``summary`` (by task id), else its
    ``recorded`` cassettes' calls (by task id), every gate set."""
    if not planned:
        raise PlanError(f"{source}: no task to plan (no repeated task was collected or reported)")
    history = {} if summary is None else {t.task_id: t for t in summary.tasks}
    recorded = recorded or {}
    tasks = [
        plan_task(p, history.get(p.task_id), analysis, prices, concurrency, n_min, recorded.get(p.task_id, ()))
        for p in planned
    ]
    sizes = {p.n for p in planned}
    gates = [] if summary is None else plan_gates(summary, thresholds, sizes.pop() if len(sizes) == 1 else None)
    tokens, tokens_complete = _sum([t.expected_tokens for t in tasks])
    usd, usd_complete = _sum([t.expected_usd for t in tasks])
    minutes, minutes_complete = _sum([t.expected_minutes for t in tasks])
    sequential = analysis.sequential_alpha is not None
    return Plan(
        source=source,
        sequential=sequential,
        alpha=analysis.sequential_alpha if analysis.sequential_alpha is not None else analysis.alpha,
        power=PLAN_POWER,
        concurrency=concurrency,
        tasks=tasks,
        gates=gates,
        expected_repetitions=math.fsum(t.expected_repetitions for t in tasks),
        expected_tokens=tokens,
        tokens_complete=tokens_complete,
        expected_usd=usd,
        usd_complete=usd_complete,
        expected_minutes=minutes,
        minutes_complete=minutes_complete,
        unpriced_models=sorted({m for t in tasks for m in t.unpriced_models}),
    )


def planned_from(summary: SessionSummary) -> list[PlannedTask]:
    """The run the report made, planned again: each scored task at its own n and bar."""
    return [PlannedTask(t.task_id, t.n, t.min_pass, t.min_rate) for t in summary.tasks]
