"""Sequential verdicts (``--consistency-sequential``): a task's verdict from its outcomes by repetition number.

One pure function decides, for the repetition about to start (plugin/lifecycle.py, from the adaptive board that
every xdist worker shares), for the session's summary (analysis/summary.py, from the records) and for the benchmark
(benchmarks/sequential.py): :func:`task_decision`. So the skip and the verdict cannot disagree.

- A ``min_rate`` task is decided by the anytime-valid test of :mod:`..stats.sequential`, read along the repetitions
  in the order of their numbers: PASS or FAIL when a betting process crosses 1/alpha (``decided_by: evidence``),
  else ``undecided`` once the cap (the marker's n) is reached or can no longer be crossed (``cap``). Only the
  unbroken run of known outcomes from repetition 1 is read, so the decision does not depend on which worker
  finished first. A repetition that skipped at run time is not an outcome: the next one takes its place and the
  cap shrinks by one. A replay that would need a repetition it has no cassette for never calls live: the task's
  sequence ends there, as at the cap (:data:`UNRECORDED`). So it does where the session's repetition budget
  (``--consistency-repetition-budget``) ran out before the repetition started (:data:`BUDGET`): undecided, with
  ``decided_by: cap``, unless a process crossed before.
- A ``min_pass`` task is a rule on the count at n, and curtailment (:func:`.adaptive.decided`) is already exact for
  it: it stops once the remaining repetitions cannot change the verdict (``decided_by: curtailed``), with the same
  verdict as the full run. A task with a skipped repetition is not stopped (as in adaptive mode).

A repetition handed out before its task was decided still runs and is reported; its outcome changes no decision.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from pytest_consistency.analysis.adaptive import decided
from pytest_consistency.model.records import FAILURE, SUCCESS, RepetitionResult
from pytest_consistency.model.result import TaskResult
from pytest_consistency.model.stopping import SequentialFacts
from pytest_consistency.stats.sequential import decide

Outcome = Literal["pass", "fail", "skip", "unrecorded", "budget"]
#: ``rounds``: a ``min_pass`` task whose rule read the repetitions the suite gates' rounds ran (fewer than n), not a
#: decision of its own (analysis/suite_sequential.py).
DecidedBy = Literal["evidence", "cap", "curtailed", "rounds"]
#: How a repetition that a replay would need but that has no cassette is skipped (its message starts so): the
#: task's sequence ends there, as at the cap, and nothing is sent live.
UNRECORDED = "not recorded (--consistency-sequential)"
#: How a repetition not started because the session's repetition budget was used up is skipped (its message starts
#: so): the task's sequence ends there, as at the cap.
BUDGET = "budget reached (--consistency-repetition-budget)"
#: The same for the token and cost budgets (``--consistency-token-budget``, ``--consistency-cost-budget``): once the
#: shared ledger is over one, no repetition starts, and the tasks' sequences end there.
BUDGETS = (BUDGET, "budget reached (--consistency-token-budget)", "budget reached (--consistency-cost-budget)")
#: The outcomes that end a task's sequence where they stand, as the cap does.
ENDS = ("unrecorded", "budget")


@dataclass(frozen=True)
class TaskDecision:
    """A task's decision in sequential mode: the verdict, how it was reached, and how many repetitions it read."""

    verdict: Literal["pass", "fail", "undecided"]
    decided_by: DecidedBy
    #: Repetitions read to reach it (skips included); for ``curtailed``, those reported when it was decided.
    at: int


def task_decision(
    outcomes: Mapping[int, Outcome], n: int, min_pass: float, min_rate: float | None, alpha: float
) -> TaskDecision | None:
    """The task's decision from the outcomes reported so far, by repetition number (1..n), or None while the
    repetitions still to run can change it (module docstring)."""
    if min_rate is None:
        marks = list(outcomes.values())
        if "skip" in marks or "unrecorded" in marks:
            return None  # as in adaptive mode: the full run would score the task on fewer repetitions
        verdict = decided(marks.count("pass"), marks.count("fail"), n, min_pass)
        if verdict is None and "budget" in marks:  # the count rule can no longer be read at n
            return TaskDecision("undecided", "cap", len(marks) - marks.count("budget"))
        return None if verdict is None else TaskDecision(verdict, "curtailed", len(marks) - marks.count("budget"))
    read: list[bool] = []
    numbers: list[int] = []  # the repetition number of each outcome read
    cap = n
    cut = False  # the sequence ended before n (no cassette, or the budget): undecided there, not earlier
    for number in range(1, n + 1):
        outcome = outcomes.get(number)
        if outcome is None:
            break
        if outcome in ENDS:  # a replay without this repetition, or the budget used up: the cap is here
            cap, cut = number - 1, True
            break
        if outcome != "skip":
            read.append(outcome == "pass")
            numbers.append(number)
    end = cap  # the repetition number the sequence ends at, skips included
    cap -= sum(1 for number in range(1, cap + 1) if outcomes.get(number) == "skip")
    if cap < 1:
        return TaskDecision("undecided", "cap", 0) if outcomes.get(1) in ENDS else None
    decision = decide(read, cap, min_rate, alpha)
    if decision is None:
        return None
    if cut and decision.decided_by == "cap":  # known undecided only where the sequence ended
        return TaskDecision("undecided", "cap", end)
    return TaskDecision(decision.verdict, decision.decided_by, numbers[decision.at - 1] if decision.at else 0)


def from_records(records: Iterable[tuple[int, str, str | None]]) -> dict[int, Outcome]:
    """The outcomes by repetition number from (number, outcome as the records say it, message) triples: the scored
    ones, the skips, those a replay did not have (:data:`UNRECORDED`) and those the budget stopped (:data:`BUDGET`);
    a repetition not run or not needed is absent."""
    found: dict[int, Outcome] = {}
    for number, outcome, message in records:
        if outcome == "curtailed" and message is not None and message.startswith(UNRECORDED):
            found[number] = "unrecorded"
        elif outcome == "curtailed" and message is not None and message.startswith(BUDGETS):
            found[number] = "budget"
        elif outcome in SUCCESS:
            found[number] = "pass"
        elif outcome in FAILURE:
            found[number] = "fail"
        elif outcome == "skipped":
            found[number] = "skip"
    return found


def sequential_facts(tasks: list[TaskResult], alpha: float, budget: int | None = None) -> SequentialFacts:
    decided_by = [t.decided_by for t in tasks]
    stopped = [budget_stopped(t.repetitions) for t in tasks]
    for_budget = sum(1 for t, s in zip(tasks, stopped, strict=True) if s and t.verdict == "undecided")
    return SequentialFacts(
        alpha=alpha,
        repetitions_used=sum(t.scored for t in tasks),
        cap_repetitions=sum(t.n for t in tasks),
        not_needed=sum(t.curtailed for t in tasks) - sum(stopped),
        by_evidence=decided_by.count("evidence"),
        by_rounds=decided_by.count("rounds"),
        at_cap=decided_by.count("cap") - for_budget,
        curtailed=decided_by.count("curtailed"),
        repetition_budget=budget,
        budget_stopped=sum(stopped),
        undecided_for_budget=for_budget,
    )


def budget_stopped(repetitions: list[RepetitionResult]) -> int:
    """The repetitions not started because the session's repetition budget was used up (their message says so)."""
    return sum(1 for r in repetitions if r.outcome == "curtailed" and (r.message or "").startswith(BUDGETS))
