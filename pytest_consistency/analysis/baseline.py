"""The current run against a baseline report: which tasks changed, and which changes are more than noise.

Pure: two typed summaries in, a :class:`~.result.Comparison` out. Each task present in both runs and scored in
both is classified by its state (all pass, flaky, all fail) and its verdict, and tested with a one-sided exact test
on its counts (Boschloo by default, Fisher with ``--consistency-test=fisher``); Benjamini–Hochberg over those tasks
controls the false discovery rate at ``1 - confidence``. A task is a regression when its q-value is at most that
level and its pass rate fell. Over all those tasks at once, the exact stratified test (:mod:`.stats.stratified`)
asks whether the agent as a whole got worse, which catches a small drop in every task that the per-task tests miss;
``--consistency-suite-regression`` gates on it. A task whose baseline or current repetitions had route drift is
marked confounded: it still counts (a regression is one whatever its cause, so the gate never passes by accident),
but it is reported as the route's, not the agent's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from pytest_consistency.analysis.judge_change import judge_changes
from pytest_consistency.model.result import Comparison, SessionSummary, TaskChange, TaskResult
from pytest_consistency.stats.gap_change import paired_gap_difference
from pytest_consistency.stats.metrics import TaskCounts, overall
from pytest_consistency.stats.significance import (
    benjamini_hochberg,
    mcnemar_one_sided,
    minimum_detectable_drop,
    one_sided_p,
)
from pytest_consistency.stats.stratified import Stratum, stratified_drop


def _state(task: TaskResult) -> str:
    if task.passes == task.scored:
        return "all pass"
    return "all fail" if task.passes == 0 else "flaky"


def classify(before: TaskResult | None, after: TaskResult | None) -> str:
    """One of: newly failing, newly flaky, recovered, still flaky, unchanged, new, removed.

    The verdict decides first (pass -> fail is newly failing, fail -> pass recovered); with the same verdict (e.g.
    ``min_pass=0``), the state does: anything -> all fail is newly failing, stable -> flaky newly flaky, anything
    -> all pass recovered, flaky -> flaky still flaky. A task curtailed in either run (``--consistency-adaptive``)
    is classified by its verdict alone: curtailment keeps the verdict, not the state (a task that stopped at 4/4,
    decided, is not "all pass", and 4/4 -> 4/5 is no news of flakiness).
    """
    if before is None or not before.is_scored:
        return "new"
    if after is None or not after.is_scored:
        return "removed"
    if before.verdict != "fail" and after.verdict == "fail":
        return "newly failing"
    if before.verdict == "fail" and after.verdict != "fail":
        return "recovered"
    if before.curtailed or after.curtailed:
        return "unchanged"
    was, now = _state(before), _state(after)
    if was == now:
        return "still flaky" if now == "flaky" else "unchanged"
    if now == "all fail":
        return "newly failing"
    return "newly flaky" if now == "flaky" else "recovered"


def _counts(task: TaskResult) -> TaskCounts:
    return TaskCounts(c=task.passes, n=task.scored, k=min(task.k, task.scored))  # adaptive: fewer than k ran


def _tokens_per_task(summary: SessionSummary) -> float | None:
    return None if summary.route is None else summary.route.avg_tokens_per_task


def route_changes(baseline: SessionSummary, current: SessionSummary) -> list[str]:
    """Route settings that differ between the runs (base URL, model, key fingerprint, retries, timeout)."""
    before = baseline.run.route
    after = current.run.route
    if before is None or after is None:
        return []
    changes = []
    pairs = (
        ("base URL", before.base_url, after.base_url),
        ("model", before.model, after.model),
        ("key fingerprint", _key(baseline), _key(current)),
        ("max retries", before.max_retries, after.max_retries),
        ("timeout", before.timeout, after.timeout),
        ("temperature", before.temperature, after.temperature),
        ("seed", before.seed, after.seed),
    )
    for label, old, new in pairs:
        if old != new:
            changes.append(f"{label}: {old} -> {new}")
    served_before, served_after = _served(baseline), _served(current)
    if served_before and served_after and served_before != served_after:
        changes.append(f"models served: {', '.join(served_before)} -> {', '.join(served_after)}")
    return changes


def _key(summary: SessionSummary) -> str | None:
    return summary.route.key_shown if summary.route is not None else None


def _served(summary: SessionSummary) -> list[str]:
    return sorted({c.model_served for t in summary.tasks for r in t.repetitions for c in r.calls if c.model_served})


def _leading_passes(task: TaskResult, m: int) -> bool:
    """Whether the first ``m`` scored repetitions of the task (in repetition order) all passed."""
    scored = [r for r in sorted(task.repetitions, key=lambda r: r.repeat) if r.scored]
    return all(r.succeeded for r in scored[:m])


def curtailed_tasks(summary: SessionSummary) -> list[str]:
    return [t.task_id for t in summary.tasks if t.curtailed]


def untested_reason(baseline: SessionSummary, current: SessionSummary) -> str | None:
    """Why the tests that assume binomial counts cannot compare these runs, or None.

    A curtailed task (``--consistency-adaptive``) stops at a decided verdict, so its pass count is not binomial: at
    ``min_pass=1.0``, n = 5, p = 0.7 the expected passes per scored repetition are 0.506, not 0.7, and an unchanged
    agent run in full "regresses" against it at p = 7.8e-06. Its verdict is exact, so tasks are still classified.
    A run with ``--consistency-sequential`` is refused whole, curtailed tasks or not: a task that ran to its cap
    did so because it did not cross, so its count is selected by the stopping rule too.
    """
    reasons = []
    for which, summary in (("the baseline", baseline), ("this run", current)):
        curtailed = curtailed_tasks(summary)
        if summary.analysis.sequential_alpha is not None:
            reasons.append(f"{which} ran with --consistency-sequential")
        elif curtailed:
            reasons.append(f"{which} has {len(curtailed)} curtailed task(s) (--consistency-adaptive)")
    if not reasons:
        return None
    return (
        f"{' and '.join(reasons)}: a curtailed task stops once its verdict is decided, so its pass count is not "
        "binomial and the regression tests (per task, McNemar, the gap change, the suite-level test) would read "
        "the stopping rule as a change; tasks are classified by verdict only. Compare runs made without "
        "--consistency-adaptive and --consistency-sequential"
    )


def compare_for_gates(
    baseline: SessionSummary, current: SessionSummary, label: str, thresholds: Mapping[str, float | None]
) -> Comparison:
    """The comparison the session end and ``merge`` make: at the level the gates are decided at (alpha divided by
    the number of statistical gates, :func:`.gates.family_level`), so that its regressions, suite-level verdict and
    gap-change bounds are what the gates decide on."""
    from pytest_consistency.analysis.gates import family_level

    return compare(baseline, current, label, alpha=family_level(current.analysis, thresholds, compared=True))


#: The gates that read the tests a curtailed run cannot take (by dest), and the suite-level switch.
BINOMIAL_GATES = ("consistency_regressions_max", "gap_increase_max", "mcnemar_p_min")


def untested_gates(summary: SessionSummary, thresholds: Mapping[str, float | None]) -> str | None:
    """With a comparison whose tests were not run (curtailed counts), the gates that would need them, refused."""
    from pytest_consistency.analysis.gates import BY_DEST, SUITE_REGRESSION_FLAG

    c = summary.comparison
    if c is None or c.untested is None:
        return None
    flags = [BY_DEST[dest].flag for dest in BINOMIAL_GATES if thresholds.get(dest) is not None]
    if summary.analysis.suite_regression is True:
        flags.append(SUITE_REGRESSION_FLAG)
    if not flags:
        return None
    return f"--consistency-baseline: {', '.join(flags)} cannot be decided: {c.untested}"


def _nothing_shared(before: Mapping[str, TaskResult], after: Mapping[str, TaskResult]) -> str | None:
    """Why nothing could be compared, when the two runs share no task id: another suite's report, or ids that moved."""
    if not before or not after or before.keys() & after.keys():
        return None
    return (
        f"the baseline shares no task with this run ({len(before)} task(s) there, e.g. {next(iter(before))!r}; "
        f"{len(after)} here, e.g. {next(iter(after))!r}): a report of another suite, or task ids that changed (another "
        "rootdir, a moved file); nothing was compared"
    )


def compare(baseline: SessionSummary, current: SessionSummary, label: str, alpha: float | None = None) -> Comparison:
    """The current run against the baseline; its tests at ``alpha`` (the session's alpha, or the level the gates are
    decided at: :func:`.gates.family_level`), so that what the comparison flags is what the gates decide."""
    analysis = current.analysis
    alpha = analysis.alpha if alpha is None else alpha
    before = {t.task_id: t for t in baseline.tasks}
    after = {t.task_id: t for t in current.tasks}
    ids = list(after) + [task_id for task_id in before if task_id not in after]
    both = [i for i in ids if i in before and i in after and before[i].is_scored and after[i].is_scored]
    untested = untested_reason(baseline, current)
    tested = [] if untested is not None else both
    p_values = {
        i: one_sided_p(analysis.test, before[i].passes, before[i].scored, after[i].passes, after[i].scored)
        for i in tested
    }
    q_values = dict(zip(tested, benjamini_hochberg([p_values[i] for i in tested]), strict=True))
    changes = []
    for task_id in ids:
        old, new = before.get(task_id), after.get(task_id)
        p, q = p_values.get(task_id), q_values.get(task_id)
        fell = (
            old is not None
            and new is not None
            and task_id in p_values
            and (new.passes * old.scored < old.passes * new.scored)
        )
        changes.append(
            TaskChange(
                task_id=task_id,
                status=classify(old, new),  # type: ignore[arg-type]
                baseline=f"{old.passes}/{old.scored}" if old is not None and old.is_scored else None,
                current=f"{new.passes}/{new.scored}" if new is not None and new.is_scored else None,
                p_value=p,
                q_value=q,
                regression=bool(fell and q is not None and q <= alpha + 1e-12),
                confounded=bool((old is not None and old.drifted) or (new is not None and new.drifted)),
            )
        )
    notes: list[str] = [text for text in [_nothing_shared(before, after)] if text]
    # McNemar's event must be the same in both runs: "all n passed" is p^n, so with different n it is read on the
    # first m = min(n) scored repetitions of each task, whose chance of all passing is p^m in both runs.
    flips: list[tuple[bool, bool]] = []
    reads: set[tuple[int, int, int]] = set()
    for i in tested:
        m = min(before[i].scored, after[i].scored)
        reads.add((m, before[i].scored, after[i].scored))
        flips.append((_leading_passes(before[i], m), _leading_passes(after[i], m)))
    worse = sum(1 for was, now in flips if was and not now)
    better = sum(1 for was, now in flips if now and not was)
    if any(n1 != n2 for _, n1, n2 in reads):
        common = sorted({m for m, _, _ in reads})
        notes.append(
            "pass^n flips read on the first "
            + ("/".join(map(str, common)))
            + " repetition(s) of each task, the smaller n of the two runs (baseline n="
            + "/".join(map(str, sorted({n1 for _, n1, _ in reads})))
            + ", this run n="
            + "/".join(map(str, sorted({n2 for _, _, n2 in reads})))
            + "): all n passing is not the same event at different n"
        )
    # The gap is scored at k: a gap at k=10 minus one at k=3 is no change. Both runs are rescored at the common k.
    pairs = []
    ks: set[tuple[int, int, int]] = set()
    for i in tested:
        b, a = _counts(before[i]), _counts(after[i])
        k = min(b.k, a.k)
        ks.add((k, b.k, a.k))
        pairs.append((replace(b, k=k), replace(a, k=k)))
    if any(kb != ka for _, kb, ka in ks):
        notes.append(
            "gap change scored at the common k="
            + "/".join(map(str, sorted({k for k, _, _ in ks})))
            + " (baseline k="
            + "/".join(map(str, sorted({kb for _, kb, _ in ks})))
            + ", this run k="
            + "/".join(map(str, sorted({ka for _, _, ka in ks})))
            + ")"
        )
    common_gap = None
    if pairs:
        old_figures, new_figures = overall([a for a, _ in pairs]), overall([b for _, b in pairs])
        assert old_figures is not None and new_figures is not None
        common_gap = new_figures.consistency_gap_pp - old_figures.consistency_gap_pp
    suite_change = stratified_drop(
        [Stratum(before[i].passes, before[i].scored, after[i].passes, after[i].scored) for i in tested],
        analysis.confidence,
    )
    judge, judge_missing = judge_changes(baseline, current)
    n1 = baseline.repeat or max((before[i].scored for i in tested), default=0)
    n2 = current.repeat or max((after[i].scored for i in tested), default=0)
    return Comparison(
        baseline=label,
        test=analysis.test,
        alpha=alpha,
        tasks=changes,
        regressions=sum(c.regression for c in changes),
        minimum_detectable_drop=minimum_detectable_drop(n1, n2, alpha, analysis.test) if n1 and n2 else None,
        minimum_detectable_drop_all=minimum_detectable_drop(n1, n2, alpha / len(tested), analysis.test)
        if n1 and n2 and tested
        else None,
        flips_worse=worse,
        flips_better=better,
        flips_p_value=mcnemar_one_sided(worse, better) if worse + better else None,
        common_tasks=len(both),
        gap_change_pp=common_gap,
        gap_change_interval=paired_gap_difference(pairs, analysis.confidence, analysis.target) if pairs else None,
        gap_change_bounds=paired_gap_difference(pairs, 1.0 - 2.0 * alpha, analysis.target) if pairs else None,
        route_changes=route_changes(baseline, current),
        baseline_tokens_per_task=_tokens_per_task(baseline),
        current_tokens_per_task=_tokens_per_task(current),
        suite_change=suite_change,
        suite_regression=suite_change is not None and suite_change.p_value <= alpha + 1e-12,
        untested=untested,
        notes=notes,
        baseline_counts={
            task: [before[task].passes, before[task].scored]
            for task in sorted(before.keys() & after.keys())
            if before[task].is_scored and before[task].curtailed == 0
        },
        baseline_sequential=baseline.analysis.sequential_alpha is not None,
        judge=judge,
        judge_missing=judge_missing,
    )
