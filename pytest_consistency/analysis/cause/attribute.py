"""The cause of each inconsistent task, and the suite's attribution: how much of the gap each cause accounts for.

A task's share of the suite's consistency gap is its own gap over the number of scored tasks (the suite's gap is
the mean of the tasks' gaps), so the shares of the causes add up to the gap. A task inconsistent only in its
answers (every repetition passed, or none did) has no gap: it counts as a task of its cause with 0 points.

Each share has an interval, conditional on the causes named (:func:`share_interval`): the suite interval of the gap
of the tasks with that cause, scaled by their share of the scored tasks. It carries the repetition noise of those
tasks' pass rates, not the chance that a task was given another cause than the one that made it fail.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_consistency.model.cause import CAUSES, CauseShare
from pytest_consistency.model.records import agent_calls
from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.metrics import TaskCounts
from pytest_consistency.stats.suite import suite_intervals

if TYPE_CHECKING:
    from pytest_consistency.model.cause import Finding
    from pytest_consistency.model.records import RepetitionResult
    from pytest_consistency.model.result import Analysis, TaskResult


def task_finding(
    task_id: str,
    repetitions: Sequence[RepetitionResult],
    answer_class: Mapping[int, int],
    same_text: Callable[[str, str], bool] | None = None,
) -> Finding | None:
    """The cause of one inconsistent task from its scored repetitions' calls (``answer_class``: repetition number ->
    the class of its recorded answer)."""
    # The analysis itself loads with the first inconsistent task, not with the session end that sums the shares
    # (a suite whose every task is consistent never needs it; issue 30).
    from pytest_consistency.analysis.cause.events import run_of
    from pytest_consistency.analysis.cause.find import find_cause
    from pytest_consistency.analysis.trajectory.align import step_key, text_classes
    from pytest_consistency.analysis.trajectory.steps import decisions_of

    scored = sorted((r for r in repetitions if r.scored), key=lambda r: r.repeat)
    if len(scored) < 2:
        return None
    calls = [agent_calls(r.calls) for r in scored]  # the agent's: a judge's or a user's calls are not its steps
    decisions = [decisions_of(each) for each in calls]
    classes = text_classes(decisions, same_text)
    runs = [
        run_of(
            r.repeat,
            each,
            [step_key(decision, classes) for decision in run],
            r.succeeded,
            answer_class.get(r.repeat),
            classes,
        )
        for r, each, run in zip(scored, calls, decisions, strict=True)
    ]
    found = find_cause(runs, task_id)
    if found is not None and found.cause == "outside the model" and judged(scored):
        return judge_finding(found, scored)
    return found


#: What to do about a judge that flips on the same agent output (the cause ``judge``).
JUDGE_ADVICE = "pin the judge's temperature; ask for a rubric; use a majority of M judge samples"


def judged(scored: Sequence[RepetitionResult]) -> bool:
    """Whether repetitions whose agent calls agree owe their different outcomes to a judge: some passed, some
    failed, and a judge's calls are among theirs (``CallRecord.role``)."""
    outcomes = {r.succeeded for r in scored}
    return len(outcomes) > 1 and any(call.role == "judge" for r in scored for call in r.calls)


def judge_finding(found: Finding, scored: Sequence[RepetitionResult]) -> Finding:
    """The cause ``judge``: the agent's calls agree in every repetition (``found`` says so, as ``outside the
    model``), the outcomes differ, and an LLM judge decided them."""
    from dataclasses import replace

    judge_calls = sum(call.role == "judge" for r in scored for call in r.calls)
    passed = sum(r.succeeded for r in scored)
    same = found.detail.partition(", yet ")[0]
    return replace(
        found,
        cause="judge",
        where="the judge's verdict",
        detail=f"{same}; the judge ({judge_calls} call(s)) passed {passed}/{len(scored)} of them",
        advice=JUDGE_ADVICE,
    )


def suite_causes(tasks: Sequence[TaskResult], analysis: Analysis | None = None) -> dict[str, CauseShare] | None:
    """Per cause, the inconsistent tasks it was found in, their share of the suite's gap and its interval (at the
    ``analysis``'s confidence and interval target; 95 %, these tasks, without one); None when no task was scored
    (nothing to attribute)."""
    scored = [t for t in tasks if t.is_scored]
    if not scored:
        return None
    shares: dict[str, CauseShare] = {cause: CauseShare() for cause in CAUSES}
    for task in scored:
        if task.cause is None:
            continue
        share = shares[task.cause]
        share.tasks += 1
        share.gap_pp += (task.gap_pp or 0.0) / len(scored)
        share.task_ids.append(task.task_id)
    confidence, target = (analysis.confidence, analysis.target) if analysis is not None else (0.95, "suite")
    for cause, share in shares.items():
        share.interval = share_interval(scored, cause, confidence, target)
    return shares


def share_interval(
    tasks: Sequence[TaskResult], cause: str, confidence: float, target: str = "suite"
) -> Interval | None:
    """The interval (pp) of the points of the suite's gap attributed to ``cause``, conditional on the labels: the
    suite interval (:func:`~pytest_consistency.stats.suite.suite_intervals`, at ``confidence`` for ``target``) of the
    gap of the scored tasks with that cause, scaled by their share of the scored tasks. ``Interval(0.0, 0.0)`` when
    no scored task has it (the share is 0, with no uncertainty once the causes are named); None when no task was
    scored (nothing to attribute). It always holds the share itself (the sum ``suite_causes`` makes)."""
    scored = [t for t in tasks if t.is_scored]
    if not scored:
        return None
    mine = [t for t in scored if t.cause == cause]
    if not mine:
        return Interval(0.0, 0.0)
    intervals = suite_intervals(
        [TaskCounts(c=t.passes, n=t.scored, k=min(t.k, t.scored)) for t in mine], confidence, target
    )
    assert intervals is not None  # mine is not empty
    point = 0.0
    for task in mine:  # the share as suite_causes sums it, so that float noise never leaves it outside
        point += (task.gap_pp or 0.0) / len(scored)
    gap = intervals.gap_pp
    return Interval(min(gap.low * len(mine) / len(scored), point), max(gap.high * len(mine) / len(scored), point))


def share_bounds(tasks: Sequence[TaskResult], cause: str, confidence: float, target: str = "suite") -> Interval | None:
    """The one-sided bounds a cause gate is decided on (each at (1 + confidence) / 2): the lower end of
    :func:`share_interval` (the tasks named with the cause: their gap is the cause's, given the labels), and an upper
    end that also counts the scored tasks no cause was named for. A task whose repetitions all agreed shows no gap
    and so no cause, yet its true gap need not be 0, and it may be this cause's: left out, the upper end was the
    estimate itself, and a gate at 0.8 x the truth PASSED half of the time (10 tasks at 0.97, n = 10). None when no
    task was scored."""
    scored = [t for t in tasks if t.is_scored]
    shown = share_interval(tasks, cause, confidence, target)
    if shown is None:
        return None
    open_tasks = [t for t in scored if t.cause in (cause, None)]
    counts = [TaskCounts(c=t.passes, n=t.scored, k=min(t.k, t.scored)) for t in open_tasks]
    intervals = suite_intervals(counts, confidence, target) if counts else None
    high = shown.high if intervals is None else max(shown.high, intervals.gap_pp.high * len(open_tasks) / len(scored))
    return Interval(shown.low, high)


def rounded_shares(causes: Mapping[str, CauseShare], digits: int = 1, gap: float | None = None) -> dict[str, float]:
    """The shares rounded so that they add up to their rounded sum (largest remainder): a table of causes whose
    points add up to the gap it prints. ``gap``: the suite's gap as the summary holds it, which the table prints;
    the shares, summed as floats, can fall on the other side of a rounding tie from it (26.25 prints 26.2, and the
    shares may sum to 26.250000000000004), so when they are its parts they add up to it as it prints."""
    scale = 10**digits
    exact = {cause: share.gap_pp * scale for cause, share in causes.items()}
    summed = sum(share.gap_pp for share in causes.values())
    figure = gap if gap is not None and abs(summed - gap) < 1e-6 else summed
    # the sum as the gap prints (f"{gap:.1f}"), not the sum of the scaled values: float noise can tip a tie
    total = round(float(f"{figure:.{digits}f}") * scale)
    floors = {cause: int(value // 1) for cause, value in exact.items()}
    order = sorted(exact, key=lambda c: (-(exact[c] - floors[c]), CAUSES.index(c) if c in CAUSES else 9))
    left = total - sum(floors.values())
    for index in range(abs(left) if order else 0):  # one point each, largest remainder first (the last, taking)
        cause = order[index % len(order)] if left > 0 else order[-1 - index % len(order)]
        floors[cause] += 1 if left > 0 else -1
    return {cause: floors[cause] / scale for cause in causes}


def shown_interval(share: CauseShare, shown: float) -> Interval | None:
    """A share's interval as printed beside its rounded points: widened to hold them, since the rounding that makes
    the shares add up to the gap can move a share past its interval's end (22.22 printed 22.3 beside [2.5, 22.2])."""
    interval = share.interval
    if interval is None:
        return None
    return Interval(min(interval.low, shown), max(interval.high, shown))


def advice_lines(
    tasks: Sequence[TaskResult], causes: Mapping[str, CauseShare] | None, gap: float | None = None
) -> list[str]:
    """One line per cause present: its tasks, its points of the gap (rounded to add up to ``gap`` as printed, see
    :func:`rounded_shares`), and the advice of the task it weighs most in (the largest share of the gap, then the
    first)."""
    if not causes:
        return []
    shown = rounded_shares(causes, gap=gap)
    by_id = {task.task_id: task for task in tasks}
    lines = []
    for cause in CAUSES:
        share = causes.get(cause)
        if share is None or not share.tasks:
            continue
        ranked = sorted((by_id[t] for t in share.task_ids if t in by_id), key=lambda t: -(t.gap_pp or 0.0))
        advice = next((t.why.advice for t in ranked if t.why is not None), "")
        where = ranked[0].task_id if ranked else ""
        lines.append(
            f"{cause}: {share.tasks} task(s), {shown[cause]:.1f} pp of the gap; {advice}"
            + (f" (e.g. {where})" if share.tasks > 1 and where and where not in advice else "")
        )
    return lines
