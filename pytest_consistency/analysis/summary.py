"""From the repetitions of a session to per-task verdicts, figures, intervals and route facts: a pure function.

:func:`build_summary` is the only place figures are derived. The plugin calls it at the end of a session, and
``pytest-consistency merge`` calls it on the repetitions of several reports, so a merged report has exactly the
figures one run over everything gives. :func:`conclude` then decides the gates; settling the exit status and
writing reports are separate steps after it (:mod:`.finish`).

How repetitions count (documented in the README):
- ``passed``/``xpassed`` succeed; ``failed``, ``error`` (a setup or teardown error) and ``xfailed`` fail;
- ``skipped`` repetitions are not scored: the task is scored on the repetitions that ran, and is
  ``incomplete`` (left out of every figure) when fewer than k ran; a task skipped in every repetition is
  ``skipped``;
- a repetition the session never reached (Ctrl-C, ``-x``) makes its task ``incomplete``.
"""

from __future__ import annotations

import copy
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import pytest_consistency.stats.metrics as metrics
from pytest_consistency.analysis.adaptive import decided, passes_as_a_whole, verdict_at_n
from pytest_consistency.analysis.answers import MISSING, default_equivalent, distinct_classes
from pytest_consistency.analysis.cause.attribute import suite_causes
from pytest_consistency.analysis.cost import cost_facts, task_cost
from pytest_consistency.analysis.drift import attribution, drift_pp, task_drift
from pytest_consistency.analysis.gates import evaluate
from pytest_consistency.analysis.infrastructure import UNREACHABLE, call_reason, unreachable_line
from pytest_consistency.analysis.sequential import budget_stopped, sequential_facts
from pytest_consistency.model.records import FAILURE, NOT_RECORDED, RepetitionResult
from pytest_consistency.model.result import (
    Analysis,
    PinnedRoute,
    RouteFacts,
    RouteSettings,
    RunFacts,
    SessionSummary,
    TaskResult,
    Verdict,
)
from pytest_consistency.model.stopping import AdaptiveFacts
from pytest_consistency.stats.binomial import clopper_pearson, pass_hat_k_interval
from pytest_consistency.stats.rate import planning_n, rate_bounds
from pytest_consistency.stats.suite import suite_intervals

if TYPE_CHECKING:
    from pytest_consistency.analysis.sequential import DecidedBy
    from pytest_consistency.model.cause import Finding
    from pytest_consistency.model.trajectory import DivergenceMap
    from pytest_consistency.stats.interval import Interval

Equivalence = Callable[[Any, Any, str], bool]


class EquivalenceError(RuntimeError):
    """The answer equivalence hook raised: the task's answers cannot be compared."""


#: Attribute getters of the per-task reads at the end of a session (C calls, no Python frame per repetition).
_REPEAT, _ORDER, _OUTCOME = attrgetter("repeat"), attrgetter("order"), attrgetter("outcome")
_RERUNS, _UNOBSERVED = attrgetter("reruns"), attrgetter("unobserved")


def default_equivalence(left: Any, right: Any, task_id: str) -> bool:
    return default_equivalent(left, right)


def build_task(
    task_id: str,
    repetitions: list[RepetitionResult],
    equivalent: Equivalence,
    analysis: Analysis,
    hooked: TaskResult | None = None,
    found: tuple[Finding | None] | None = None,
) -> TaskResult:
    """One task's verdict and figures; ``hooked`` is the same task as a session with an answer equivalence hook
    summarised it (a merge cannot call the hook): its answer classes and divergence map are kept, not recomputed."""
    # Read once per task at the end of a session, for every task: attribute getters and list counts, not a
    # generator expression or lambda resumed per repetition (issue 30).
    repetitions = sorted(repetitions, key=_REPEAT)
    first = repetitions[0]
    n, k, min_pass, min_rate = first.n, first.k, first.min_pass, first.min_rate
    outcomes = [r.outcome for r in repetitions]
    scored = [r for r in repetitions if r.scored]
    passes = len([r for r in scored if r.succeeded])
    seen = {r.repeat for r in repetitions if r.outcome != "not run"}
    missing_reps = n - len(seen)
    curtailed = outcomes.count("curtailed")

    answers = [(r.answer_recorded, r.normalized if r.answer_recorded else MISSING) for r in scored]
    distinct: int | None = None
    disagrees: bool | None = None
    errors: list[str] = []
    answer_class: dict[int, int] = {}
    if hooked is not None:
        distinct, disagrees = hooked.distinct_answers, hooked.answers_disagree
    elif any(recorded for recorded, _ in answers):
        try:
            classes = distinct_classes(answers, lambda a, b: equivalent(a, b, task_id))
        except EquivalenceError as exc:
            errors.append(str(exc))
        else:
            distinct = len(classes)
            disagrees = distinct > 1
            answer_class = {scored[i].repeat: number for number, members in enumerate(classes) for i in members}

    counts: metrics.TaskCounts | None = None
    verdict: Verdict
    decided_by: DecidedBy | None = None
    read_in_rounds = False
    decided_at: int | None = None
    # A report written before the field existed says it through its calls (replay mismatches, refused calls).
    broken = [
        (r.repeat, reason)
        for r in repetitions
        if (reason := r.infrastructure or (call_reason(r.calls) if r.outcome in FAILURE else None))
    ]
    infrastructure = [
        f"{task_id} repetition {repeat}: {reason}" for repeat, reason in broken if not reason.startswith(UNREACHABLE)
    ]
    if len({reason for _, reason in broken}) == 1 and broken[0][1].startswith(NOT_RECORDED):
        infrastructure = [f"{task_id}: {broken[0][1]}"]  # the task's, said once (on CI: it fails the run)
    unreachable = unreachable_line(repetitions, f"{task_id}: ")  # a route no call reached: said once for the task
    infrastructure += [unreachable] if unreachable else []
    if hooked is not None:  # the hook's own errors (it raised), without those derived again just below
        errors = [error for error in hooked.errors if error not in infrastructure]
    errors += infrastructure
    if broken:
        verdict = "error"  # the setup failed, not the agent: no figure, never tolerated
    elif missing_reps:
        verdict = "incomplete"
    elif analysis.sequential_alpha is not None and (min_rate is not None or budget_stopped(repetitions)):
        # Sequential mode: the anytime-valid test read in the repetitions' order decides, never the fixed-n test (a
        # min_pass task, once the repetition budget stopped it: its count rule by curtailment, or undecided).
        from pytest_consistency.analysis.sequential import from_records, task_decision

        by_number = from_records((r.repeat, r.outcome, r.message) for r in repetitions)
        decision = task_decision(by_number, n, min_pass, min_rate, analysis.sequential_alpha)
        # A task the budget stopped before its first repetition ran is undecided too, not incomplete.
        unread = not scored and not (decision is not None and budget_stopped(repetitions))
        verdict = "incomplete" if decision is None or unread else decision.verdict
        if decision is not None and not unread:
            decided_by, decided_at = decision.decided_by, decision.at
        if decision is not None and scored:
            counts = metrics.TaskCounts(c=passes, n=len(scored), k=min(k, len(scored)))
    elif curtailed:
        # Adaptive mode stopped the task once its verdict was decided; the figures use the repetitions it ran.
        early = decided(passes, len(scored) - passes, n, min_pass, min_rate, analysis.alpha)
        if early is None and analysis.sequential_seed is not None and scored:
            # The gap gate's rounds ran what they needed of this min_pass task: its rule on those repetitions, not
            # the full run's verdict (curtailment could not have stopped it): said so (decided_by: rounds).
            early = "pass" if passes_as_a_whole(passes, len(scored), min_pass) else "fail"
            read_in_rounds = True
        verdict = "incomplete" if early is None or not scored else early
        if scored and early is not None:
            counts = metrics.TaskCounts(c=passes, n=len(scored), k=min(k, len(scored)))
    elif not scored:
        verdict = "skipped"
    elif len(scored) < k:
        verdict = "incomplete"
    else:
        counts = metrics.TaskCounts(c=passes, n=len(scored), k=k)
        verdict = verdict_at_n(passes, len(scored), min_pass, min_rate, analysis.alpha)
    if analysis.sequential_alpha is not None and min_rate is None and verdict in ("pass", "fail"):
        # A count rule: curtailment decides it, early or at n; or the rounds read it on the repetitions they ran.
        decided_by = "rounds" if read_in_rounds else "curtailed"
        decided_at = len(scored) if decided_at is None else decided_at
    failures = [r.outcome for r in scored if not r.succeeded]
    if verdict in ("fail", "undecided") and failures and all(outcome == "xfailed" for outcome in failures):
        verdict = "xfail"  # failed only where the test expects to (pytest.mark.xfail): not a failure of the run

    inconsistent = bool(disagrees) or 0 < passes < len(scored)
    if hooked is not None:
        trajectory, why = hooked.trajectory, hooked.why
    else:
        trajectory = task_trajectory(task_id, repetitions, inconsistent, equivalent)
        if found is not None:  # a merge: the cause a report found for a task it held whole
            why = found[0]
        else:
            why = task_cause(task_id, repetitions, answer_class, equivalent) if inconsistent and counts else None
    return TaskResult(
        task_id=task_id,
        n=n,
        k=k,
        min_pass=min_pass,
        repetitions=repetitions,
        outcomes=outcomes,
        answers=[r.answer if r.answer_recorded else None for r in repetitions],
        passes=passes,
        scored=len(scored),
        distinct_answers=distinct,
        answers_disagree=disagrees,
        verdict=verdict,
        mean_at_k=float(metrics.mean_at_k(counts)) if counts else None,
        pass_hat_k=float(metrics.pass_hat_k(counts)) if counts else None,
        pass_at_k=float(metrics.pass_at_k(counts)) if counts else None,
        gap_pp=metrics.gap_pp(counts) if counts else None,
        pass_rate_interval=clopper_pearson(counts.c, counts.n, analysis.confidence) if counts else None,
        pass_hat_k_interval=pass_hat_k_interval(counts.c, counts.n, counts.k, analysis.confidence) if counts else None,
        errors=errors,
        curtailed=curtailed,
        trajectory=trajectory,
        cause=why.cause if why is not None else None,
        why=why,
        min_rate=min_rate,
        rate_bounds=task_rate_bounds(passes, len(scored), analysis, decided_by)
        if min_rate is not None and scored
        else None,
        plan_n=task_plan_n(passes, len(scored), min_rate, analysis, decided_by)
        if min_rate is not None and verdict == "undecided" and scored
        else None,
        decided_by=decided_by,
        decided_at=decided_at,
    )


def task_plan_n(
    passes: int, scored: int, min_rate: float, analysis: Analysis, decided_by: DecidedBy | None
) -> int | None:
    """What would likely decide an undecided min_rate task in a fresh run: the n of one look, or in sequential mode
    the cap (:func:`..stats.sequential.planning_cap`: larger, every look is paid for)."""
    if analysis.sequential_alpha is not None and decided_by is not None:
        from pytest_consistency.stats.sequential import planning_cap

        return planning_cap(passes, scored, min_rate, analysis.sequential_alpha)
    return planning_n(passes, scored, min_rate, analysis.alpha)


def task_rate_bounds(passes: int, scored: int, analysis: Analysis, decided_by: DecidedBy | None) -> Interval:
    """The one-sided bounds a min_rate verdict is read on: the exact test's at n, or in sequential mode the
    anytime-valid ones (:func:`..stats.sequential.bounds`), which hold at whatever repetition the task stopped."""
    if analysis.sequential_alpha is not None and decided_by is not None:
        from pytest_consistency.stats.sequential import bounds

        return bounds(passes, scored - passes, analysis.sequential_alpha)
    return rate_bounds(passes, scored, analysis.alpha)


def whole(task: TaskResult) -> bool:
    """Every repetition of the task reported (none ``not run``): no other report holds a part of it."""
    return "not run" not in map(_OUTCOME, task.repetitions) and len(task.repetitions) >= task.n


def lightened(repetitions: list[RepetitionResult]) -> list[RepetitionResult]:
    """The repetitions without what the cause was found from (each call's digests and texts; the sampling parameters
    sent stay), as copies: the records given stay as they were, so a second summary of them finds the same cause.

    A report keeps the finding of a task it holds whole, and a merge takes it from there (:func:`.merge.merge_reports`);
    only a task a report holds in part (a shard of it) keeps its calls' digests, for the merge to find the cause.
    They would otherwise make up half of a large report and of the end of its session.
    """
    out = []
    for repetition in repetitions:
        if not repetition.calls or not any(
            (call.sent is not None and call.sent.digest) or call.texts for call in repetition.calls
        ):
            out.append(repetition)
            continue
        from pytest_consistency.model.cause import Sent  # loaded with the call records that carry it

        calls = []
        for call in repetition.calls:
            if (call.sent is not None and call.sent.digest) or call.texts:
                call = copy.copy(call)
                # the sampling parameters sent stay: traces show them (report.otlp), and they are a few bytes
                call.sent = Sent("", sampling=call.sent.sampling) if call.sent and call.sent.sampling else None
                call.texts = {}
            calls.append(call)
        out.append(replace(repetition, calls=calls))
    return out


def task_cause(
    task_id: str, repetitions: list[RepetitionResult], answer_class: dict[int, int], equivalent: Equivalence
) -> Finding | None:
    """Why an inconsistent task's repetitions part; text decisions compared as :func:`task_trajectory` does."""
    from pytest_consistency.analysis.cause.attribute import task_finding  # with the first inconsistent task

    if equivalent is default_equivalence:
        return task_finding(task_id, repetitions, answer_class)
    try:
        return task_finding(task_id, repetitions, answer_class, lambda a, b: equivalent(a, b, task_id))
    except EquivalenceError:
        return task_finding(task_id, repetitions, answer_class)


def task_trajectory(
    task_id: str, repetitions: list[RepetitionResult], inconsistent: bool, equivalent: Equivalence
) -> DivergenceMap | None:
    """The task's divergence map; text decisions compared by the session's answer equivalence (by their normalised
    text when it is the default, or when the hook raised on them)."""
    if not any(r.calls for r in repetitions):  # no model call: nothing to map, and the mapping is not loaded
        return None
    from pytest_consistency.analysis.trajectory.divergence import divergence_map

    if equivalent is default_equivalence:
        return divergence_map(repetitions, inconsistent)
    try:
        return divergence_map(repetitions, inconsistent, lambda a, b: equivalent(a, b, task_id))
    except EquivalenceError:
        return divergence_map(repetitions, inconsistent)


def score_facts(summary: SessionSummary, confidence: float) -> None:
    """Graded outcomes (``consistency.score``): each task's mean score over its scored repetitions that gave one, and
    the suite's over those of its scored tasks, each with its Hoeffding interval (``stats.bounded``). The figures
    (Mean@k, pass^k, the gap) stay on the outcomes, thresholded by ``score_min`` where a marker sets it."""
    if not any(r.score is not None for t in summary.tasks for r in t.repetitions):
        return  # the commonest session: no score, and the statistics are not loaded
    from pytest_consistency.stats.bounded import mean_interval

    everything: list[float] = []
    for task in summary.tasks:
        values = [r.score for r in task.repetitions if r.scored and r.score is not None]
        found = mean_interval(values, confidence)
        if found is not None:
            task.score_mean, task.score_interval = found
            task.scores = len(values)
        if task.is_scored:
            everything += values
    found = mean_interval(everything, confidence)
    if found is not None:
        summary.score_mean, summary.score_interval = found
        summary.scores = len(everything)


def scored_counts(tasks: Iterable[TaskResult]) -> list[metrics.TaskCounts]:
    return [metrics.TaskCounts(c=t.passes, n=t.scored, k=min(t.k, t.scored)) for t in tasks if t.is_scored]


def pass_hat_k_curve(counts: list[metrics.TaskCounts]) -> list[float] | None:
    """The suite's pass^k for k = 1 .. n (each task's unbiased C(c, k) / C(n, k), averaged), when its scored tasks
    share one n; None otherwise (or with nothing scored)."""
    ns = {c.n for c in counts}
    if len(ns) != 1:
        return None
    n = ns.pop()
    return [float(sum(metrics.pass_hat_k(replace(c, k=k)) for c in counts) / len(counts)) for k in range(1, n + 1)]


def session_errors(tasks: list[TaskResult]) -> list[str]:
    """Every task's errors, but a route that no call reached said once for the session (per base URL, with the
    calls, repetitions and tasks counted) instead of once per task."""
    errors = [e for t in tasks for e in t.errors if not e.startswith(f"{t.task_id}: {UNREACHABLE}")]
    unreachable = unreachable_line(r for t in tasks for r in t.repetitions)
    return errors + ([unreachable] if unreachable else [])


def _common(values: Iterable[int]) -> int | None:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def build_summary(
    repetitions: Iterable[RepetitionResult],
    equivalent: Equivalence = default_equivalence,
    run: RunFacts | None = None,
    analysis: Analysis | None = None,
    hooked: Mapping[str, TaskResult] | None = None,
    found: Mapping[str, Finding | None] | None = None,
) -> SessionSummary:
    """Every figure of a session from its repetition records and the facts of the run; gates come after.

    ``hooked``: tasks whose answers a hook compared, as their session summarised them (see :func:`build_task`).
    """
    run = run or RunFacts()
    analysis = analysis or Analysis()
    by_task: dict[str, list[RepetitionResult]] = defaultdict(list)
    for repetition in repetitions:
        by_task[repetition.task_id].append(repetition)
    ordered = sorted(by_task.items(), key=lambda item: (min(map(_ORDER, item[1])), item[0]))
    hooked = hooked or {}
    found = found or {}
    tasks = [
        build_task(
            task_id,
            reps,
            equivalent,
            analysis,
            hooked.get(task_id),
            (found[task_id],) if task_id in found else None,
        )
        for task_id, reps in ordered
    ]
    for task in tasks:
        task_cost(task)
        if whole(task):
            task.repetitions = lightened(task.repetitions)
    scored = [t for t in tasks if t.is_scored]
    counts = scored_counts(tasks)
    figures = metrics.overall(counts)
    with_answers = [t for t in scored if t.answers_disagree is not None]  # incomplete tasks are in no figure
    # A scored task whose answers could not be compared (its equivalence hook raised) might agree or not: the
    # share is unknown, so the figure is not measurable rather than computed over the other tasks.
    undetermined = any(t.errors for t in scored)
    summary = SessionSummary(
        repeat=_common(t.n for t in scored),
        k=_common(t.k for t in scored),
        task_count=len(scored),
        mean_at_k=figures.mean_at_k if figures else None,
        pass_hat_k=figures.pass_hat_k if figures else None,
        pass_at_k=figures.pass_at_k if figures else None,
        consistency_gap_pp=figures.consistency_gap_pp if figures else None,
        answer_disagreement_pp=None
        if undetermined
        else metrics.disagreement_pp(sum(bool(t.answers_disagree) for t in with_answers), len(with_answers)),
        tasks=tasks,
        analysis=analysis,
        run=run,
        intervals=suite_intervals(counts, analysis.confidence, analysis.target),
        errors=session_errors(tasks),
        causes=suite_causes(tasks, analysis),
        pass_hat_k_curve=pass_hat_k_curve(counts),
        cost=cost_facts(tasks),
    )
    score_facts(summary, analysis.confidence)
    reruns = sum([sum(map(_RERUNS, t.repetitions)) for t in tasks])
    if reruns:
        summary.warnings.append(
            f"a retry plugin (pytest-rerunfailures, flaky, pytest-retry) re-ran {reruns} repetition attempt(s); each "
            "repetition counts with its first outcome, since a failure that passes on rerun is the inconsistency "
            "being measured"
        )
    if run.route is not None:
        summary.route = route_facts(summary, run)
    if run.adaptive_n_min is not None:
        summary.adaptive = adaptive_facts(tasks, run.adaptive_n_min)
    if analysis.sequential_alpha is not None:
        summary.sequential = sequential_facts(tasks, analysis.sequential_alpha, run.repetition_budget)
    budget = run.token_budget
    if budget is not None and budget.exceeded_in:
        summary.warnings.append(
            f"token budget exceeded in {', '.join(budget.exceeded_in)}: each shard was over its own "
            f"--consistency-token-budget (merged: {budget.spent} of {budget.limit} tokens); later live calls were "
            "refused"
        )
    elif budget is not None and budget.exceeded:
        summary.warnings.append(
            f"token budget exceeded: {budget.spent} tokens used > --consistency-token-budget={budget.limit}; "
            "later live calls were refused"
        )
    dollars = run.cost_budget
    if dollars is not None and dollars.exceeded_in:
        summary.warnings.append(
            f"cost budget exceeded in {', '.join(dollars.exceeded_in)}: each shard was over its own "
            f"--consistency-cost-budget (merged: ${dollars.spent:.6g} of ${dollars.limit:g}); later live calls were "
            "refused"
        )
    elif dollars is not None and dollars.exceeded:
        summary.warnings.append(
            f"cost budget exceeded: ${dollars.spent:.6g} spent > --consistency-cost-budget={dollars.limit:g}; later "
            "live calls were refused"
        )
    return summary


def adaptive_facts(tasks: list[TaskResult], n_min: int) -> AdaptiveFacts:
    saved_calls = 0.0
    for task in tasks:
        ran = [r for r in task.repetitions if r.scored]
        if task.curtailed and ran:
            saved_calls += task.curtailed * sum(len(r.calls) for r in ran) / len(ran)
    return AdaptiveFacts(
        n_min=n_min,
        tasks_curtailed=sum(1 for t in tasks if t.curtailed),
        repetitions_used=sum(t.scored for t in tasks),
        repetitions_saved=sum(t.curtailed for t in tasks),
        calls_saved=round(saved_calls, 1),
    )


def route_facts(summary: SessionSummary, run: RunFacts) -> RouteFacts:
    """Attach drift and attribution to every task, and return the session's route figures."""
    assert run.route is not None
    calls = [c for t in summary.tasks for r in t.repetitions for c in r.calls]

    def pinned_of(route: RouteSettings) -> PinnedRoute:
        """The route to compare with; replayed without a key, with the key its cassettes were recorded on."""
        pinned = route.pinned()
        if pinned.key_fingerprint is None:
            # A pinned call recorded before cassettes kept the pinned route's key counts with the key it was sent
            # with: a suite recorded on two keys has no one recorded key to compare every task with. An unpinned
            # call's own key never does: another key is what key drift is about.
            keys = {
                c.route_key or (c.key_fingerprint if c.pinned else None)
                for c in calls
                if c.provider == route.provider and c.role == route.role
            }
            keys.discard(None)
            if len(keys) == 1:
                pinned = replace(pinned, key_fingerprint=keys.pop())
        return pinned

    pinned = pinned_of(run.route)
    others = {route.provider: pinned_of(route) for route in run.other_routes if route.role == "agent"}
    for task in summary.tasks:
        unobserved = sum(map(_UNOBSERVED, task.repetitions))
        drift = task_drift([r.calls for r in task.repetitions], pinned, unobserved, others)
        task.drift = drift
        inconsistent = bool(task.answers_disagree) or 0 < task.passes < task.scored
        task.attribution = attribution(inconsistent, drift) if drift.calls or drift.unobserved else None
        summary.warnings.extend(f"{task.task_id}: {text}" for text in drift.warnings)
    drifts = [t.drift for t in summary.tasks if t.drift is not None]
    # Drift is a figure like the others: incomplete tasks (``-k rep1``, Ctrl-C) are left out of it.
    scored = [t for t in summary.tasks if t.is_scored and t.drift is not None]
    scored_drifts = [t.drift for t in scored if t.drift is not None]
    scored_total = sum(d.tokens.get("total", 0) for d in scored_drifts)
    repetitions = sum(t.scored for t in scored)
    errors: Counter[str] = Counter()
    for d in drifts:
        errors.update(d.errors)
    by_provider = dict(sorted(Counter(c.provider for c in calls).items()))

    def key_shown(route: RouteSettings) -> str:
        """The route's key fingerprint; replayed without a key, the keys its provider's calls were recorded with."""
        if route.key_fingerprint is not None:
            return str(route.key_fingerprint)
        recorded = sorted(
            {
                c.key_fingerprint
                for c in calls
                if c.provider == route.provider and c.replayed and c.key_fingerprint and c.role == route.role
            }
        )
        return ", ".join(recorded) + " (recorded)" if recorded else "none recorded (replay only)"

    return RouteFacts(
        settings=run.route,
        key_shown=key_shown(run.route),
        calls=sum(d.calls for d in drifts),
        retries=sum(d.retries for d in drifts),
        prompt_tokens=sum(d.tokens.get("prompt", 0) for d in drifts),
        completion_tokens=sum(d.tokens.get("completion", 0) for d in drifts),
        total_tokens=sum(d.tokens.get("total", 0) for d in drifts),
        avg_tokens_per_task=scored_total / repetitions if repetitions else None,
        errors=dict(sorted(errors.items())),
        drift_pp=drift_pp(scored_drifts),
        drift_tasks=[t.task_id for t in scored if t.drifted],
        tasks_with_calls=sum(1 for d in scored_drifts if d.calls or d.unobserved),
        other_routes=list(run.other_routes),
        other_keys_shown={route.name: key_shown(route) for route in run.other_routes},
        calls_by_provider=by_provider if len(by_provider) > 1 else {},
        route_used=bool(calls) and (not run.other_routes or "openai" in by_provider),
        wait_ms=float(round(sum(c.wait_ms for c in calls), 3)),
    )


def untolerated(task: TaskResult, summary: SessionSummary) -> bool:
    """The task has a failed repetition that no verdict tolerates: it failed (or is undecided with
    ``--consistency-inconclusive=fail``), or is in no figure at all."""
    if task.verdict == "xfail" or summary.counts_as_passed(task):
        return False
    return task.verdict in ("fail", "undecided", "error") or any(
        r.outcome in ("failed", "error") for r in task.repetitions
    )


def conclude(
    summary: SessionSummary, thresholds: Mapping[str, float | None], expect_comparison: bool = False
) -> SessionSummary:
    """Decide the gates; the summary passes when every gate does, no failure is left untolerated (a failed task,
    or a failed repetition of a task that is in no figure, as pytest itself counts it), no other test failed, the
    budget held and the run was not interrupted. ``expect_comparison``: see :func:`.gates.evaluate`."""
    summary.gates = evaluate(summary, thresholds, expect_comparison)
    if summary.analysis.sequential_seed is not None:
        from pytest_consistency.analysis.suite_sequential import decide_in_rounds

        decide_in_rounds(summary)
    budget, dollars = summary.run.token_budget, summary.run.cost_budget
    summary.passed = (
        all(g.passed for g in summary.gates)
        and not any(untolerated(t, summary) for t in summary.tasks)
        and not (budget is not None and budget.exceeded)
        and not (dollars is not None and dollars.exceeded)
        and not summary.errors
        and not summary.run.other_failures
        and not summary.run.interrupted
    )
    return summary
