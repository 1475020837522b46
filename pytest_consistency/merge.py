"""Merge reports of CI shards or matrix jobs into the report one run over everything would have written.

Pure: the repetition records of every report are pooled and :func:`.summary.build_summary` recomputes every
figure from them, so a task whose repetitions ran on different shards is scored on all of them. What cannot be
pooled honestly is refused with :class:`MergeError` unless ``allow_mixed``: reports of different routes (base URL,
model, key fingerprint), of a task with different n, k or ``min_pass`` (its verdict would depend on which shard
is read), of different analysis settings (confidence, interval target, test), or the same repetition in two
reports. A shard that exceeded its own token budget keeps the merged run over budget. Answers are compared
with the default equivalence (canonical JSON of the normalised answers): a report that used a custom
``pytest_consistency_answers_equivalent`` hook gets a warning, since the hook is not available here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .records import RepetitionResult
from .result import Analysis, RunFacts, SessionSummary, TokenBudget
from .summary import build_summary


class MergeError(ValueError):
    """The reports cannot be merged into one honest figure; the message names the reports and the difference."""


def _route_label(summary: SessionSummary) -> str:
    route = summary.run.route
    if route is None:
        return "no route"
    return f"{route.base_url} model {route.model or '(per request)'} key {route.key_fingerprint or 'replay-only'}"


def merge_reports(
    reports: Sequence[tuple[str, SessionSummary]], analysis: Analysis | None = None, allow_mixed: bool = False
) -> SessionSummary:
    """One summary (without gates) from ``(name, summary)`` pairs, computed as one session over all of them."""
    if not reports:
        raise MergeError("no reports to merge")
    first_name, first = reports[0]
    problems: list[str] = []
    warnings: list[str] = []
    errors: list[tuple[str, str]] = []
    chosen: dict[tuple[str, int], tuple[str, RepetitionResult]] = {}
    spec_of: dict[str, tuple[str, tuple[int, int, float]]] = {}
    for name, report in reports:
        if _route_label(report) != _route_label(first):
            problems.append(f"{name} was run on {_route_label(report)}, {first_name} on {_route_label(first)}")
        if analysis is None and report.analysis != first.analysis:
            problems.append(
                f"{name} was analysed with {_analysis_label(report.analysis)}, {first_name} with "
                f"{_analysis_label(first.analysis)}"
            )
        if report.run.equivalence != "default":
            warnings.append(
                f"{name} compared answers with {report.run.equivalence}; the merge compares them with the default "
                "equivalence (canonical JSON of the normalised answers)"
            )
        if report.resample is not None:
            warnings.append(
                f"{name} is a resample session ({report.resample.task}@{report.resample.step}); merge does not "
                "combine resample sections, so the merged report has none: run a resample session whole (-n is "
                "fine, --consistency-shard is not)"
            )
        # Every error of a shard stays an error of the merge, but one the merge derives again from the repetitions
        # (a task in error) is not counted twice; an equivalence hook that raised stays: the full run failed on it.
        errors.extend((name, error) for error in report.errors)
        for task in report.tasks:
            for rep in task.repetitions:
                spec = (rep.n, rep.k, rep.min_pass)
                held_spec = spec_of.setdefault(task.task_id, (name, spec))
                if held_spec[1] != spec:
                    problems.append(
                        f"task {task.task_id} has {_spec_label(spec)} in {name} but {_spec_label(held_spec[1])} in "
                        f"{held_spec[0]}"
                    )
                    break
            for rep in task.repetitions:
                key = (task.task_id, rep.repeat)
                held = chosen.get(key)
                if held is None or held[1].outcome == "not run":
                    chosen[key] = (name, rep)
                elif rep.outcome != "not run":
                    problems.append(
                        f"repetition {rep.repeat} of {task.task_id} ran in both {held[0]} and {name}; "
                        "merge the reports of disjoint shards"
                    )
    if problems and not allow_mixed:
        raise MergeError("; ".join(dict.fromkeys(problems)) + " (pass --allow-mixed to merge them anyway)")
    if problems:
        warnings.extend(f"mixed reports merged (--allow-mixed): {text}" for text in dict.fromkeys(problems))
    run = _merged_run(reports)
    summary = build_summary((rep for _, rep in chosen.values()), run=run, analysis=analysis or first.analysis)
    summary.warnings = list(dict.fromkeys(warnings)) + summary.warnings
    derived = set(summary.errors)
    summary.errors.extend(f"{name}: {error}" for name, error in errors if error not in derived)
    return summary


def _spec_label(spec: tuple[int, int, float]) -> str:
    n, k, min_pass = spec
    return f"n={n}, k={k}, min_pass={min_pass:g}"


def _analysis_label(analysis: Analysis) -> str:
    return (
        f"confidence {analysis.confidence:g}, target {analysis.target}, gate on {analysis.gate_on}, "
        f"test {analysis.test}, inconclusive={analysis.inconclusive}"
    )


def _merged_run(reports: Sequence[tuple[str, SessionSummary]]) -> RunFacts:
    runs = [report.run for _, report in reports]
    first = runs[0]
    budgets = [(name, report.run.token_budget) for name, report in reports if report.run.token_budget is not None]
    budget = None
    if budgets:
        budget = TokenBudget(
            limit=sum(b.limit for _, b in budgets),
            spent=sum(b.spent for _, b in budgets),
            exceeded_in=tuple(shard for name, b in budgets if b.exceeded for shard in (b.exceeded_in or (name,))),
        )
    modes = {run.record_mode for run in runs}
    return replace(
        first,
        record_mode=modes.pop() if len(modes) == 1 else "mixed",
        token_budget=budget,
        interrupted=any(run.interrupted for run in runs),
        equivalence="default",
        other_failures=sum(run.other_failures for run in runs),
        shard=None,  # the merge is the run the shards were part of: its verdict is not deferred
    )
