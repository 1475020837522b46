"""The judge's figures of two runs side by side: what ``compare`` and a baseline comparison say of re-judging.

Where both runs re-judged (``--consistency-rejudge``, ``summary.judge``), each task's judge flip rate and the
judge's part of its gap (observed minus the judge majority's gap, docs/judges.md) in both, with the change: a
comparison to read, not a test (the flip rate has its own gate, ``--consistency-judge-flip-max``, on one run). Where
only one did, one sentence says which; where neither did, nothing. The lines are written here once, for the
terminal, the Markdown summary, the HTML page and ``pytest-consistency compare``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_consistency.model.result import Comparison, SessionSummary, TaskJudgeChange

if TYPE_CHECKING:  # the judge's model loads with a rejudge session's summary, not with every comparison
    from pytest_consistency.model.judge import JudgeSummary, TaskJudge


def judge_changes(baseline: SessionSummary, current: SessionSummary) -> tuple[list[TaskJudgeChange], str | None]:
    """Per task in either run's judge figures (the current run's order, then the baseline's others), both runs'
    figures; or, when only one run has judge figures, the sentence that says so."""
    before, after = baseline.judge, current.judge
    if before is None and after is None:
        return [], None
    if before is None or after is None:
        which = "the baseline" if after is None else "this run"
        other = "this run" if after is None else "the baseline"
        return [], f"only {which} has judge figures ({other} is no rejudge session): the judge is not compared"
    old = _by_task(before)
    new = _by_task(after)
    ids = list(new) + [task_id for task_id in old if task_id not in new]
    changes = []
    for task_id in ids:
        was, now = old.get(task_id), new.get(task_id)
        changes.append(
            TaskJudgeChange(
                task_id=task_id,
                baseline_flip_rate=None if was is None else was.figures.flip_rate,
                current_flip_rate=None if now is None else now.figures.flip_rate,
                baseline_judge_gap_pp=None if was is None else was.figures.judge_gap_pp,
                current_judge_gap_pp=None if now is None else now.figures.judge_gap_pp,
                baseline_gap_pp=None if was is None else was.figures.observed_gap_pp,
                current_gap_pp=None if now is None else now.figures.observed_gap_pp,
            )
        )
    return changes, None


def _by_task(summary: JudgeSummary) -> dict[str, TaskJudge]:
    return {task.task_id: task for task in summary.tasks}


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f} %"


def _part(judge_pp: float | None, gap_pp: float | None) -> str:
    if judge_pp is None or gap_pp is None:
        return "-"
    return f"{judge_pp:.1f} of {gap_pp:.1f} pp"


def _delta(before: float | None, after: float | None, scale: float) -> str:
    return "" if before is None or after is None else f" ({(after - before) * scale:+.1f} pp)"


def change_line(change: TaskJudgeChange) -> str:
    """``judge T: flip rate 40.0 % -> 10.0 % (-30.0 pp); judge's part of the gap 33.3 of 33.3 pp -> 0.0 of 16.7 pp
    (-33.3 pp)``: baseline first, ``-`` where a run has no figure."""
    c = change
    return (
        f"judge {c.task_id}: flip rate {_percent(c.baseline_flip_rate)} -> {_percent(c.current_flip_rate)}"
        f"{_delta(c.baseline_flip_rate, c.current_flip_rate, 100)}; judge's part of the gap "
        f"{_part(c.baseline_judge_gap_pp, c.baseline_gap_pp)} -> {_part(c.current_judge_gap_pp, c.current_gap_pp)}"
        f"{_delta(c.baseline_judge_gap_pp, c.current_judge_gap_pp, 1)}"
    )


def change_lines(comparison: Comparison) -> list[str]:
    """The comparison's judge lines: one per task, or the one sentence that the judge is not compared; none when
    neither run re-judged."""
    if comparison.judge_missing is not None:
        return [f"judge: {comparison.judge_missing}"]
    return [change_line(change) for change in comparison.judge]
