"""Merge reports of CI shards or matrix jobs into the report one run over everything would have written.

Pure: the repetition records of every report are pooled and :func:`.summary.build_summary` recomputes every
figure from them, so a task whose repetitions ran on different shards is scored on all of them. The merge gives the
verdict one unsharded run would give, or refuses (:class:`MergeError`, exit status 2 in the command), naming why:

- **Shards of one run, all of them.** Every shard report knows its ``I/N`` (``--consistency-shard``, pytest-split's
  ``--splits``/``--group``). A merge of shard reports needs each of 1..N exactly once, of one N, and no report of a
  whole run beside them: a missing artifact would otherwise pass as "those tasks were never there". Never waived.
- **One set of gates.** A gate the shards ran with carries over only when every shard ran with the same threshold
  (or none did); shards that differ are refused, naming the gate and the shards, unless the merge command sets the
  gate itself (:func:`merged_thresholds`). A gate is never dropped silently.
- **What pytest refuses.** Adaptive shards (``--consistency-adaptive``) have curtailed figures: the figure gates
  pytest refuses with adaptive mode are refused here too (:func:`.adaptive.refused_with_adaptive`).
- **The session's answer equivalence.** A task whose answers a ``pytest_consistency_answers_equivalent`` hook
  compared keeps what the hook decided (its distinct answers, its disagreement, its divergence map), carried from
  the one report that holds all its repetitions; a task whose repetitions ran in several such reports cannot be
  compared again without the hook, and is refused.
- Reports of different routes (base URL, model, key fingerprint), of a task with different n, k, ``min_pass`` or
  ``min_rate``, of sessions run with different options that change a verdict (``--consistency-repeat``,
  ``--consistency-min-pass``, ``--consistency-min-rate``: the shards need not share a task for those to differ), of
  different analysis settings, of adaptive and full runs mixed, or the same repetition in two reports are refused
  unless ``allow_mixed``.

A shard that exceeded its own token budget keeps the merged run over budget; a collection error or a failed
unmarked test that every shard saw counts once (reports carry their node ids).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from pytest_consistency.analysis.adaptive import refused_with_adaptive
from pytest_consistency.analysis.baseline import compare_for_gates, untested_gates
from pytest_consistency.analysis.gates import ALL_GATES
from pytest_consistency.analysis.summary import build_summary, conclude, whole
from pytest_consistency.model.cause import Finding
from pytest_consistency.model.records import RepetitionResult
from pytest_consistency.model.result import Analysis, CostBudget, RunFacts, SessionSummary, TaskResult, TokenBudget


class MergeError(ValueError):
    """The reports cannot be merged into one honest figure; the message names the reports and the difference."""


def _route_label(summary: SessionSummary) -> str:
    route = summary.run.route
    if route is None:
        return "no route"
    return f"{route.base_url} model {route.model or '(per request)'} key {route.key_fingerprint or 'replay-only'}"


def shard_problems(reports: Sequence[tuple[str, SessionSummary]]) -> list[str]:
    """Why the reports are not every shard of one run, exactly once (empty when they are, or when none is a shard)."""
    if all(report.run.shard is None for _, report in reports):
        return []
    whole = [name for name, report in reports if report.run.shard is None]
    problems = []
    if whole:
        problems.append(
            f"{', '.join(whole)} {'is a report' if len(whole) == 1 else 'are reports'} of a whole run, beside shard "
            "reports; merge the shards of one run"
        )
    parsed: dict[int, dict[int, list[str]]] = {}
    for name, report in reports:
        position = report.run.shard_position
        if report.run.shard is None:
            continue
        if position is None:
            problems.append(f"{name} has the shard {report.run.shard!r}, not I/N")
            continue
        index, count = position
        parsed.setdefault(count, {}).setdefault(index, []).append(name)
    if len(parsed) > 1:
        kinds = "; ".join(
            f"{', '.join(name for names in by_index.values() for name in names)} of {count}"
            for count, by_index in sorted(parsed.items())
        )
        problems.append(f"the shards split the suite in different numbers of shards ({kinds}); merge one run's shards")
        return problems
    for count, by_index in parsed.items():
        for index, names in sorted(by_index.items()):
            if len(names) > 1:
                problems.append(f"shard {index}/{count} is there {len(names)} times ({', '.join(names)})")
        missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
        if missing:
            problems.append(
                f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} {'are' if len(missing) > 1 else 'is'} "
                f"missing (have {', '.join(f'{i}/{count}' for i in sorted(by_index))}): its tasks would be "
                "left out of every figure and gate; give every shard's report (a failed upload or a glob that "
                "matched less?)"
            )
    return problems


def merge_reports(
    reports: Sequence[tuple[str, SessionSummary]], analysis: Analysis | None = None, allow_mixed: bool = False
) -> SessionSummary:
    """One summary (without gates) from ``(name, summary)`` pairs, computed as one session over all of them."""
    if not reports:
        raise MergeError("no reports to merge")
    incomplete = shard_problems(reports)
    if incomplete:
        raise MergeError("; ".join(incomplete))
    first_name, first = reports[0]
    problems: list[str] = []
    warnings: list[str] = []
    errors: list[tuple[str, str]] = []
    chosen: dict[tuple[str, int], tuple[str, RepetitionResult]] = {}
    spec_of: dict[str, tuple[str, tuple[int, int, float, float | None]]] = {}
    #: Per task, the reports that ran its repetitions, and its result in a report whose equivalence was a hook's.
    sources: dict[str, set[str]] = {}
    decided: dict[str, tuple[str, TaskResult]] = {}
    #: The cause each report found for a task it held whole (its calls' digests are not in the report).
    causes_held: dict[str, Finding | None] = {}
    for name, report in reports:
        if _route_label(report) != _route_label(first):
            problems.append(f"{name} was run on {_route_label(report)}, {first_name} on {_route_label(first)}")
        if analysis is None and report.analysis != first.analysis:
            problems.append(
                f"{name} was analysed with {_analysis_label(report.analysis)}, {first_name} with "
                f"{_analysis_label(first.analysis)}"
            )
        if _settings_label(report.run) != _settings_label(first.run) and None not in (
            report.run.verdict_settings,
            first.run.verdict_settings,
        ):
            problems.append(
                f"{name} ran with {_settings_label(report.run)}, {first_name} with {_settings_label(first.run)}: "
                "each changes a task's verdict, so every shard of one run must run with the same"
            )
        if report.run.adaptive_n_min != first.run.adaptive_n_min:
            problems.append(
                f"{name} ran {_adaptive_label(report.run)}, {first_name} {_adaptive_label(first.run)}; "
                "one run is either adaptive or not"
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
                spec = (rep.n, rep.k, rep.min_pass, rep.min_rate)
                held_spec = spec_of.setdefault(task.task_id, (name, spec))
                if held_spec[1] != spec:
                    problems.append(
                        f"task {task.task_id} has {_spec_label(spec)} in {name} but {_spec_label(held_spec[1])} in "
                        f"{held_spec[0]}"
                    )
                    break
            if any(rep.outcome != "not run" for rep in task.repetitions):
                sources.setdefault(task.task_id, set()).add(name)
                if whole(task):
                    causes_held[task.task_id] = task.why
                if report.run.equivalence != "default":
                    decided[task.task_id] = (name, task)
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
    split = sorted(task_id for task_id in decided if len(sources[task_id]) > 1)
    for task_id in split:
        hooks = sorted({r.run.equivalence for n, r in reports if n in sources[task_id] and r.run.equivalence})
        problems.append(
            f"task {task_id} ran in {', '.join(sorted(sources[task_id]))}, whose answers were compared with "
            f"{' and '.join(hooks)}: the merge cannot call the hook to compare the answers of different reports; "
            "run each task's repetitions in one shard (--consistency-shard deals whole tasks)"
        )
    if problems and not allow_mixed:
        raise MergeError("; ".join(dict.fromkeys(problems)) + " (pass --allow-mixed to merge them anyway)")
    if problems:
        warnings.extend(f"mixed reports merged (--allow-mixed): {text}" for text in dict.fromkeys(problems))
    for task_id in split:
        del decided[task_id]
        warnings.append(
            f"{task_id}: its answers were compared with the default equivalence (canonical JSON of the normalised "
            "answers), not with the hook its reports used"
        )
    held_whole = {task_id: why for task_id, why in causes_held.items() if len(sources.get(task_id, ())) == 1}
    run = _merged_run(reports, decided)
    summary = build_summary(
        (rep for _, rep in chosen.values()),
        run=run,
        analysis=analysis or first.analysis,
        hooked={task_id: task for task_id, (_, task) in decided.items()},
        found=held_whole,
    )
    judged = {(report.judge.samples, report.judge.votes) for _, report in reports if report.judge is not None}
    if len(judged) == 1:  # shards of one rejudge (or votes) session: its figures over the pooled samples, as one's
        from pytest_consistency.analysis.judge import judge_summary

        samples, votes = judged.pop()
        summary.judge = judge_summary(
            (rep for _, rep in chosen.values()), samples, summary.analysis.confidence, votes=votes
        )
    elif judged:
        kinds = sorted(f"{m}{' (votes)' if votes else ''}" for m, votes in judged)
        warnings.append(
            f"the reports re-judged with {' and '.join(kinds)} judge samples per repetition; "
            "merge combines the judge figures of one rejudge session only, so the merged report has none"
        )
    sampled = {report.simulated_user.samples for _, report in reports if report.simulated_user is not None}
    if len(sampled) == 1:  # shards of one session sampling the agent on the recorded users: the same, pooled
        from pytest_consistency.analysis.user import user_split

        summary.simulated_user = user_split(
            (rep for _, rep in chosen.values()), sampled.pop(), summary.analysis.confidence
        )
    elif sampled:
        warnings.append(
            f"the reports sampled the agent {' and '.join(map(str, sorted(sampled)))} times per recorded user; merge "
            "combines the simulated user's figures of one session only, so the merged report has none"
        )
    summary.warnings = list(dict.fromkeys(warnings)) + summary.warnings
    derived = set(summary.errors)
    summary.errors.extend(f"{name}: {error}" for name, error in errors if error not in derived)
    return summary


def gated_merge(
    reports: Sequence[tuple[str, SessionSummary]],
    explicit: Mapping[str, float],
    analysis: Analysis | None = None,
    allow_mixed: bool = False,
    baseline: tuple[str, SessionSummary] | None = None,
) -> SessionSummary:
    """The merged run with its comparison (``baseline``: label and report) and gates decided, ``exit_status`` set:
    what ``pytest-consistency merge`` writes. ``explicit``: the gates the merge command sets (by gate dest)."""
    summary = merge_reports(reports, analysis, allow_mixed)
    thresholds = merged_thresholds(reports, explicit)
    problem = adaptive_problem(summary, thresholds)
    if problem is not None:
        raise MergeError(problem)
    compared = sorted({r.comparison.baseline for _, r in reports if r.comparison is not None})
    if baseline is not None:
        label, report = baseline
        try:
            summary.comparison = compare_for_gates(report, summary, label, thresholds)
        except ValueError as exc:
            raise MergeError(f"--consistency-baseline: {exc}") from None
        problem = untested_gates(summary, thresholds)
        if problem is not None:
            raise MergeError(problem)
    elif compared:
        summary.warnings.append(
            f"the shard reports were compared with {', '.join(compared)}; a shard's comparison covers only its "
            "own tasks, so the merge has none: pass --consistency-baseline=FILE to merge to compare the merged run"
        )
    # Shards that were compared owe the merge a comparison: without a baseline given to it, the suite-level gate
    # they ran with fails as not measurable instead of vanishing.
    conclude(summary, thresholds, expect_comparison=baseline is None and bool(compared))
    summary.exit_status = 0 if summary.passed else 1
    return summary


def merged_thresholds(
    reports: Sequence[tuple[str, SessionSummary]], explicit: Mapping[str, float]
) -> dict[str, float | None]:
    """The gates of the merge, by :attr:`.gates.Gate.dest`: each set on the merge command (``explicit``), else the
    threshold every report ran with; a gate whose thresholds differ between the reports is refused, naming them."""
    thresholds: dict[str, float | None] = {}
    problems = []
    for gate in ALL_GATES:
        if gate.dest in explicit:
            thresholds[gate.dest] = explicit[gate.dest]
            continue
        ran = {name: next((g.threshold for g in report.gates if g.name == gate.name), None) for name, report in reports}
        values = set(ran.values())
        if len(values) == 1:
            thresholds[gate.dest] = values.pop()
            continue
        listed = ", ".join(f"{'not set' if v is None else f'{v:g}'} in {name}" for name, v in ran.items())
        problems.append(
            f"the shards ran {gate.flag} with different thresholds ({listed}); set {gate.flag}=... on the merge "
            "to say which one gates the merged run"
        )
    if problems:
        raise MergeError("; ".join(problems))
    return thresholds


def adaptive_problem(summary: SessionSummary, thresholds: Mapping[str, float | None]) -> str | None:
    """What pytest refuses with ``--consistency-adaptive`` or ``--consistency-sequential``, refused for a merge of
    such reports too (a sequential report is refused whether or not a task stopped early)."""
    mode = "--consistency-sequential" if summary.analysis.sequential_alpha is not None else "--consistency-adaptive"
    stopped = summary.run.adaptive_n_min is not None or any(t.curtailed for t in summary.tasks)
    if mode == "--consistency-adaptive" and not stopped:
        return None
    if summary.analysis.sequential_seed is not None:  # the gap gate in rounds: recomputed on the union
        thresholds = {dest: t for dest, t in thresholds.items() if dest != "consistency_gap_max"}
    return refused_with_adaptive(
        thresholds, summary.analysis.suite_regression is True, f"the reports ran with {mode}, which", mode
    )


def _spec_label(spec: tuple[int, int, float, float | None]) -> str:
    n, k, min_pass, min_rate = spec
    bar = f"min_pass={min_pass:g}" if min_rate is None else f"min_rate={min_rate:g}"
    return f"n={n}, k={k}, {bar}"


def _analysis_label(analysis: Analysis) -> str:
    return (
        f"confidence {analysis.confidence:g}, target {analysis.target}, gate on {analysis.gate_on}, "
        f"test {analysis.test}, inconclusive={analysis.inconclusive}, "
        f"suite regression {_SUITE_REGRESSION[analysis.suite_regression]}"
        + ("" if analysis.sequential_alpha is None else f", sequential at alpha {analysis.sequential_alpha:g}")
    )


_SUITE_REGRESSION = {None: "on with a baseline", True: "on", False: "off"}


def _settings_label(run: RunFacts) -> str:
    """``--consistency-repeat=10``, ``no verdict option``: the options that change a verdict a report ran with."""
    chosen = run.verdict_settings or {}
    return " ".join(f"{flag}={value}" for flag, value in sorted(chosen.items())) or "no verdict option"


def _adaptive_label(run: RunFacts) -> str:
    return "without --consistency-adaptive" if run.adaptive_n_min is None else "with --consistency-adaptive"


def _merged_run(
    reports: Sequence[tuple[str, SessionSummary]], decided: Mapping[str, tuple[str, TaskResult]]
) -> RunFacts:
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
    dollars = [(name, report.run.cost_budget) for name, report in reports if report.run.cost_budget is not None]
    cost_budget = None
    if dollars:
        cost_budget = CostBudget(
            limit=math.fsum(b.limit for _, b in dollars),
            spent=math.fsum(b.spent for _, b in dollars),
            exceeded_in=tuple(shard for name, b in dollars if b.exceeded for shard in (b.exceeded_in or (name,))),
        )
    modes = {run.record_mode for run in runs}
    # Node ids, where every report has them: a collection error each shard saw (each collects the whole suite) is one.
    if all(len(run.other_failed) == run.other_failures for run in runs):
        other = sorted({nodeid for run in runs for nodeid in run.other_failed})
        other_failures = len(other)
    else:  # a report without node ids
        other, other_failures = [], sum(run.other_failures for run in runs)
    carried = {name for name, _ in decided.values()}
    hooks = sorted({report.run.equivalence for name, report in reports if name in carried})
    return replace(
        first,
        record_mode=modes.pop() if len(modes) == 1 else "mixed",
        token_budget=budget,
        cost_budget=cost_budget,
        interrupted=any(run.interrupted for run in runs),
        equivalence=", ".join(hooks) if hooks else "default",
        other_failures=other_failures,
        other_failed=other,
        shard=None,  # the merge is the run the shards were part of: its verdict is not deferred
    )
