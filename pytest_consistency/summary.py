"""From the repetitions of a session to per-task verdicts, overall figures and gate results.

How repetitions count (documented in the README):
- ``passed``/``xpassed`` succeed; ``failed``, ``error`` (a setup or teardown error) and ``xfailed`` fail;
- ``skipped`` repetitions are not scored: the task is scored on the repetitions that ran, and is
  ``incomplete`` (left out of every figure) when fewer than k ran; a task skipped in every repetition is
  ``skipped``;
- a repetition the session never reached (Ctrl-C, ``-x``) makes its task ``incomplete``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from . import metrics
from .answers import MISSING, distinct_classes
from .drift import PinnedRoute, attribution, drift_pp, task_drift
from .records import GateResult, RepetitionResult, SessionSummary, TaskResult
from .settings import GATE_OPTIONS

Equivalence = Callable[[Any, Any, str], bool]
#: Verdicts of tasks that count in the figures.
SCORED = ("pass", "fail", "xfail")


class EquivalenceError(RuntimeError):
    """The answer equivalence hook raised: the task's answers cannot be compared."""


def build_task(task_id: str, repetitions: list[RepetitionResult], equivalent: Equivalence) -> TaskResult:
    repetitions = sorted(repetitions, key=lambda r: r.repeat)
    first = repetitions[0]
    n, k, min_pass = first.n, first.k, first.min_pass
    scored = [r for r in repetitions if r.scored]
    passes = sum(r.succeeded for r in scored)
    seen = {r.repeat for r in repetitions if r.outcome != "not run"}
    missing_reps = n - len(seen)

    answers = [(r.answer_recorded, r.normalized if r.answer_recorded else MISSING) for r in scored]
    distinct: int | None = None
    disagrees: bool | None = None
    errors: list[str] = []
    if any(recorded for recorded, _ in answers):
        try:
            classes = distinct_classes(answers, lambda a, b: equivalent(a, b, task_id))
        except EquivalenceError as exc:
            errors.append(str(exc))
        else:
            distinct = len(classes)
            disagrees = distinct > 1

    counts: metrics.TaskCounts | None = None
    if missing_reps:
        verdict = "incomplete"
    elif not scored:
        verdict = "skipped"
    elif len(scored) < k:
        verdict = "incomplete"
    else:
        counts = metrics.TaskCounts(c=passes, n=len(scored), k=k)
        verdict = "pass" if passes / len(scored) >= min_pass - 1e-12 else "fail"
        if verdict == "fail" and all(r.outcome == "xfailed" for r in scored if not r.succeeded):
            verdict = "xfail"  # failed only where the test expects to (pytest.mark.xfail): not a failure of the run

    return TaskResult(
        task_id=task_id,
        n=n,
        k=k,
        min_pass=min_pass,
        repetitions=repetitions,
        passes=passes,
        scored=len(scored),
        distinct_answers=distinct,
        disagrees=disagrees,
        verdict=verdict,
        mean_at_k=float(metrics.mean_at_k(counts)) if counts else None,
        pass_hat_k=float(metrics.pass_hat_k(counts)) if counts else None,
        pass_at_k=float(metrics.pass_at_k(counts)) if counts else None,
        gap_pp=metrics.gap_pp(counts) if counts else None,
        errors=errors,
    )


def scored_counts(tasks: Iterable[TaskResult]) -> list[metrics.TaskCounts]:
    return [metrics.TaskCounts(c=t.passes, n=t.scored, k=t.k) for t in tasks if t.verdict in SCORED]


def _common(values: Iterable[int]) -> int | None:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def gate_values(summary: SessionSummary) -> dict[str, float | None]:
    """The measured value each gate compares with its threshold."""
    return {
        "consistency_gap_max": summary.consistency_gap_pp,
        "answer_disagreement_max": summary.answer_disagreement_pp,
        "pass_hat_k_min": None if summary.pass_hat_k is None else summary.pass_hat_k * 100,
        "route_drift_max": summary.extra.get("route_drift_pp"),
    }


def evaluate_gates(summary: SessionSummary, thresholds: Mapping[str, float | None]) -> list[GateResult]:
    """Check every gate that has a threshold; a gate whose value cannot be measured fails rather than passes."""
    values = gate_values(summary)
    results = []
    for option in GATE_OPTIONS:
        threshold = thresholds.get(option.dest)
        if threshold is None:
            continue
        value = values[option.dest]
        comparison = "min" if option.dest.endswith("_min") else "max"
        unit = " %" if comparison == "min" else " pp"
        if value is None:
            passed = False
        elif comparison == "max":
            passed = round(value, 9) <= threshold
        else:
            passed = round(value, 9) >= threshold
        name = option.dest.rsplit("_", 1)[0]
        results.append(
            GateResult(
                name=name,
                option=option.flag,
                threshold=threshold,
                value=value,
                passed=passed,
                comparison=comparison,
                unit=unit,
            )
        )
    return results


def build_summary(
    repetitions: Iterable[RepetitionResult],
    equivalent: Equivalence,
    interrupted: bool = False,
) -> SessionSummary:
    """Aggregate repetitions into a summary without gates; ``finish`` adds them once every figure is known."""
    by_task: dict[str, list[RepetitionResult]] = defaultdict(list)
    for repetition in repetitions:
        by_task[repetition.task_id].append(repetition)
    ordered = sorted(by_task.items(), key=lambda item: (min(r.order for r in item[1]), item[0]))
    tasks = [build_task(task_id, reps, equivalent) for task_id, reps in ordered]
    scored = [t for t in tasks if t.verdict in SCORED]
    figures = metrics.overall(scored_counts(tasks))
    with_answers = [t for t in scored if t.disagrees is not None]  # incomplete tasks are in no figure
    # A scored task whose answers could not be compared (its equivalence hook raised) might agree or not: the
    # share is unknown, so the figure is not measurable rather than computed over the other tasks.
    undetermined = any(t.errors for t in scored)
    return SessionSummary(
        repeat=_common(t.n for t in scored),
        k=_common(t.k for t in scored),
        task_count=len(scored),
        mean_at_k=figures.mean_at_k if figures else None,
        pass_hat_k=figures.pass_hat_k if figures else None,
        pass_at_k=figures.pass_at_k if figures else None,
        consistency_gap_pp=figures.consistency_gap_pp if figures else None,
        answer_disagreement_pp=None
        if undetermined
        else metrics.disagreement_pp(sum(bool(t.disagrees) for t in with_answers), len(with_answers)),
        gates=[],
        passed=True,
        interrupted=interrupted,
        tasks=tasks,
    )


def finish(summary: SessionSummary, thresholds: Mapping[str, float | None]) -> SessionSummary:
    summary.gates = evaluate_gates(summary, thresholds)
    summary.passed = (
        all(g.passed for g in summary.gates)
        and not any(t.verdict == "fail" for t in summary.tasks)
        and not summary.extra.get("token_budget", {}).get("exceeded")
    )
    return summary


def add_route(summary: SessionSummary, pinned: PinnedRoute, route: dict[str, Any]) -> None:
    """Attach route facts, drift and attribution to every task, and the session's route figures."""
    drifts = []
    for task in summary.tasks:
        drift = task_drift([r.calls for r in task.repetitions], pinned, sum(r.unobserved for r in task.repetitions))
        drifts.append(drift)
        task.route = drift.to_dict()
        inconsistent = bool(task.disagrees) or 0 < task.passes < task.scored
        task.attribution = attribution(inconsistent, drift) if drift.calls or drift.unobserved else None
        summary.warnings.extend(f"{task.task_id}: {text}" for text in drift.warnings)
    total = sum(d.tokens.get("total", 0) for d in drifts)
    # Drift is a figure like the others: incomplete tasks (``-k rep1``, Ctrl-C) are left out of it.
    pairs = [(t, d) for t, d in zip(summary.tasks, drifts, strict=True) if t.verdict in SCORED]
    scored_total = sum(d.tokens.get("total", 0) for _, d in pairs)
    repetitions = sum(t.scored for t, _ in pairs)
    drifted = [t for t, d in pairs if d.drifted]
    with_calls = sum(1 for _, d in pairs if d.calls or d.unobserved)
    errors: Counter[str] = Counter()
    for d in drifts:
        errors.update(d.errors)
    key = route["key_fingerprint"]
    if key is None:  # replayed without a key: the keys the cassettes were recorded with
        recorded = sorted(
            {
                c.key_fingerprint
                for t in summary.tasks
                for r in t.repetitions
                for c in r.calls
                if c.replayed and c.key_fingerprint
            }
        )
        key = ", ".join(recorded) + " (recorded)" if recorded else "none recorded (replay only)"
    figures = {
        "model": route["model"],
        "base_url": route["base_url"],
        "key_fingerprint": key,
        "route": route,
        "total_tokens": total,
        "prompt_tokens": sum(d.tokens.get("prompt", 0) for d in drifts),
        "completion_tokens": sum(d.tokens.get("completion", 0) for d in drifts),
        "avg_tokens_per_task": scored_total / repetitions if repetitions else None,
        "calls": sum(d.calls for d in drifts),
        "retries": sum(d.retries for d in drifts),
        # ``route_errors``, not ``errors``: ``summary.errors`` is the list of the session's errors.
        "route_errors": dict(sorted(errors.items())),
        "route_drift_pp": drift_pp([d for _, d in pairs]),
        "route_drift_tasks": [t.task_id for t in drifted],
    }
    summary.extra.update(figures)
    if not with_calls:
        return
    lines = [
        f"route: {route['base_url']}  model {route['model'] or '(per request)'}  key {key}  "
        f"timeout {route['timeout']:g}s  retries {route['max_retries']}",
        f"calls {figures['calls']} (retries {figures['retries']})   tokens {total}   "
        + (f"avg per task-repetition {figures['avg_tokens_per_task']:.1f}" if repetitions else ""),
        f"route drift {figures['route_drift_pp']:.1f} pp ({len(drifted)} of {with_calls} tasks with calls)",
    ]
    for task in drifted:
        lines.append(f"  {task.task_id}: " + "; ".join(task.route["drift_details"]))
    summary.extra["terminal_lines"] = lines
