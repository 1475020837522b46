"""Why a run failed, as one typed list that every output renders: one story in every output.

The exit status is settled from the summary (:func:`.summary.conclude`); this module says *why*, in the same
terms, for the terminal section and pytest's closing line, the Markdown step summary, the HTML page and JUnit.
Before it each output listed its own reasons and they drifted apart (JUnit had no failing testcase when only an
equivalence hook raised; the closing line stayed green while a gate failed). Pure: a summary in, reasons out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytest_consistency.model.result import GateResult, SessionSummary, TaskChange, TaskResult

ReasonKind = Literal[
    "gate", "task", "undecided_task", "error_task", "unscored", "other", "budget", "interrupted", "error"
]


@dataclass(frozen=True)
class Reason:
    """One reason the run failed: ``text`` for a sentence, ``label`` for the closing line (None: pytest's own
    counts already show it), the tasks it names and, for a gate, the gate."""

    kind: ReasonKind
    text: str
    label: str | None
    tasks: tuple[str, ...] = ()
    gate: GateResult | None = None


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def unscored_failures(task: TaskResult) -> bool:
    """A task in no figure (incomplete, skipped) with a failed repetition: pytest counts that failure."""
    return task.verdict not in ("pass", "xfail", "fail", "undecided", "error") and any(
        r.outcome in ("failed", "error") for r in task.repetitions
    )


def failing_gates(summary: SessionSummary) -> list[GateResult]:
    """Gates that count as failed: failed, or undecided under ``--consistency-inconclusive=fail``."""
    return [g for g in summary.gates if not g.passed]


def failure_reasons(summary: SessionSummary) -> list[Reason]:
    """Every reason the run failed, most decisive first; empty for a run that passed."""
    reasons = [
        Reason(
            "gate",
            f"gate {g.option} {'failed' if g.state == 'fail' else 'undecided'}",
            f"gate {g.option} {'failed' if g.state == 'fail' else 'undecided'}",
            gate=g,
        )
        for g in failing_gates(summary)
    ]
    failed = tuple(t.task_id for t in summary.tasks if t.verdict == "fail")
    if failed:
        reasons.append(Reason("task", f"{len(failed)} task(s) failed", None, failed))
    undecided = tuple(t.task_id for t in summary.tasks if t.verdict == "undecided" and not summary.counts_as_passed(t))
    if undecided:
        text = f"{len(undecided)} task(s) undecided (--consistency-inconclusive=fail)"
        reasons.append(Reason("undecided_task", text, _plural(len(undecided), "task") + " undecided", undecided))
    broken = tuple(t.task_id for t in summary.tasks if t.verdict == "error")
    if broken:
        text = f"{len(broken)} task(s) in error (a cassette, a refused call or a hook, not the agent)"
        reasons.append(Reason("error_task", text, _plural(len(broken), "task") + " in error", broken))
    unscored = tuple(t.task_id for t in summary.tasks if unscored_failures(t))
    if unscored:
        text = f"{len(unscored)} task(s) failed a repetition and are in no figure"
        reasons.append(Reason("unscored", text, None, unscored))
    if summary.run.other_failures:
        text = f"{summary.run.other_failures} other test(s) or collection error(s) failed"
        reasons.append(Reason("other", text, None))
    budget = summary.run.token_budget
    if budget is not None and budget.exceeded:
        text = f"token budget exceeded: {budget.spent} > {budget.limit}"
        if budget.exceeded_in:
            text = f"token budget exceeded in {', '.join(budget.exceeded_in)} (each shard has its own budget)"
        reasons.append(Reason("budget", text, "budget exceeded"))
    dollars = summary.run.cost_budget
    if dollars is not None and dollars.exceeded:
        text = f"cost budget exceeded: ${dollars.spent:.6g} > ${dollars.limit:g}"
        if dollars.exceeded_in:
            text = f"cost budget exceeded in {', '.join(dollars.exceeded_in)} (each shard has its own budget)"
        reasons.append(Reason("budget", text, "budget exceeded"))
    if summary.interrupted:
        reasons.append(Reason("interrupted", "the session was interrupted: partial results", None))
    if summary.errors:
        label = _plural(len(summary.errors), "consistency error")
        reasons += [Reason("error", f"error: {error}", label) for error in summary.errors]
    return reasons


def closing_parts(summary: SessionSummary) -> list[str]:
    """What pytest's closing line must add so that it names why the run failed (each label once); reasons that
    pytest's own counts show (failed tests, interrupted) have no label."""
    if summary.passed:
        return []
    parts: list[str] = []
    for reason in failure_reasons(summary):
        if reason.label is not None and reason.label not in parts:
            parts.append(reason.label)
    return parts


def tolerated_text(summary: SessionSummary) -> str | None:
    """How often tasks that met their bar failed, in the words a reviewer needs (None: none did).

    Not "N failures tolerated" alone: a 0/5 task under ``min_pass=0`` met its threshold, and the sentence says both
    that it did and how often its repetitions failed.
    """
    tasks = [t for t in summary.tasks if t.tolerated_failures]
    if not tasks:
        return None
    failed = sum(t.tolerated_failures for t in tasks)
    ran = sum(t.scored for t in tasks)
    bars = "min_pass" if all(t.min_rate is None for t in tasks) else "bar"
    return f"{failed} of {ran} repetitions failed in {len(tasks)} task(s) that met their {bars} (tolerated)"


def met_threshold_text(task: TaskResult) -> str:
    """A passing task with failed repetitions: it met its threshold, and how often it failed."""
    return f"met {task.bar}, {task.scored - task.passes} failed"


def rate_verdict_text(task: TaskResult) -> str:
    """A ``min_rate`` task's verdict with the one-sided bounds it was read on (each at 1 - alpha), and for an
    undecided one the n a fresh run would need: ``pass (min_rate 0.8 shown: 0.83-1.00)``."""
    assert task.min_rate is not None
    bounds = task.rate_bounds
    shown = "?" if bounds is None else f"{bounds.low:.2f}-{bounds.high:.2f}"
    rate = f"{task.min_rate:g}"
    if task.verdict == "pass":
        return f"pass (min_rate {rate} shown: {shown})"
    if task.verdict == "fail":
        return f"fail (below min_rate {rate}: {shown})"
    sequential = task.decided_by is not None  # --consistency-sequential: the plan is a cap
    plan = (
        f"a fresh run {'capped ' if sequential else ''}at n = {task.plan_n} would likely decide it"
        if task.plan_n is not None
        else f"no {'cap' if sequential else 'n'} is likely to decide it"
    )
    return f"undecided ({shown} holds min_rate {rate}; {plan})"


def inconsistent(task: TaskResult) -> bool:
    """Its repetitions disagree: some passed and some failed, or their answers differ."""
    return bool(task.answers_disagree) or 0 < task.passes < task.scored


def needs_a_look(task: TaskResult, change: TaskChange | None = None) -> bool:
    """A task a reader must see: inconsistent, failed, undecided, regressed (or newly failing/flaky), or in error.
    The rows the Markdown table keeps and ``-q`` keeps in the terminal."""
    regressed = change is not None and (change.regression or change.status in ("newly failing", "newly flaky"))
    return inconsistent(task) or task.verdict in ("fail", "undecided", "error") or regressed or bool(task.errors)
