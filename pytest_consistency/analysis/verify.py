"""``pytest-consistency verify REPORT``: every sequential decision a report states, recomputed from what it keeps.

A report of a ``--consistency-sequential`` session keeps, per task, each repetition's outcome by its number (with
the message of one a replay did not have or the repetition budget stopped), the cap (``n``), the bar (``min_rate``
or ``min_pass``), and the level (``summary.analysis.sequential_alpha``). That is all a decision reads:
:func:`.sequential.task_decision`, the one pure function the session itself decided with (``--consistency-n-min``
only made repetitions run, never moved a decision), recomputes it here and the result is compared with the stated
verdict, ``decided_by`` and ``decided_at``.

The checks are a registry (:data:`CHECKS`) of :class:`DecisionCheck` objects, each a name and a function from the
report to its disagreements: each task's decision, and the suite gates decided in rounds (their rounds' bounds, the
round each was decided after, the gate's state).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pytest_consistency.analysis.adaptive import passes_as_a_whole
from pytest_consistency.analysis.sequential import Outcome, TaskDecision, from_records, task_decision
from pytest_consistency.model.result import GateResult, SessionSummary, TaskResult
from pytest_consistency.model.stopping import SuiteSequentialFacts


class Unverifiable(Exception):
    """The report lacks what its decisions need (not a sequential report; a decision without its repetition)."""


@dataclass(frozen=True)
class Disagreement:
    """A decision the report states that its own records do not give."""

    check: str
    subject: str
    stated: str
    recomputed: str

    @property
    def text(self) -> str:
        return f"{self.subject}: stated {self.stated}, recomputed {self.recomputed} ({self.check})"


class DecisionCheck(Protocol):
    """One kind of decision a sequential report states: how many it holds, and those its records contradict.
    Either function raises :class:`Unverifiable` when the report lacks what the decisions need."""

    @property
    def name(self) -> str: ...

    def decisions(self, summary: SessionSummary) -> int: ...

    def __call__(self, summary: SessionSummary) -> list[Disagreement]: ...


def _read_in_rounds(outcomes: Mapping[int, Outcome], min_pass: float) -> TaskDecision | None:
    """A ``min_pass`` task the suite gates' rounds stopped (``decided_by: rounds``): its rule on the repetitions
    they ran (which ones: :class:`SuiteGateDecisions` recomputes the rounds)."""
    marks = list(outcomes.values())
    if not marks or "skip" in marks or "unrecorded" in marks:
        return None
    passed = passes_as_a_whole(marks.count("pass"), len(marks), min_pass)
    return TaskDecision("pass" if passed else "fail", "rounds", len(marks))


def _shown(verdict: str, decided_by: str | None, at: int | None) -> str:
    return f"{verdict} ({decided_by or 'no decided_by'} at {'?' if at is None else at})"


@dataclass(frozen=True)
class TaskDecisions:
    """Each task's sequential decision: a ``min_rate`` task's by the anytime-valid test, a ``min_pass`` task's by
    curtailment (one with a skipped repetition is scored at n as without sequential mode: not a decision here)."""

    name: str = "tasks"

    @staticmethod
    def _alpha(summary: SessionSummary) -> float:
        alpha = summary.analysis.sequential_alpha
        if alpha is None:
            raise Unverifiable(
                "not a sequential report (summary.analysis.sequential_alpha is null: the session ran without "
                "--consistency-sequential); its verdicts are fixed-n ones, with nothing to recompute"
            )
        return alpha

    @staticmethod
    def _stated(task: TaskResult) -> bool:
        """Whether the task states a sequential decision (an errored or incomplete task states none)."""
        return task.decided_by is not None or (task.min_rate is not None and task.verdict in ("pass", "fail"))

    def decisions(self, summary: SessionSummary) -> int:
        self._alpha(summary)
        return sum(1 for task in summary.tasks if self._stated(task))

    def __call__(self, summary: SessionSummary) -> list[Disagreement]:
        alpha = self._alpha(summary)
        found: list[Disagreement] = []
        for task in summary.tasks:
            if not self._stated(task):
                continue
            if task.decided_at is None:
                raise Unverifiable(
                    f"{task.task_id}: the report does not say at which repetition its decision was reached "
                    "(tasks[].decided_at: written by an earlier version); re-run the session to write a report "
                    "verify can check"
                )
            outcomes = from_records((r.repeat, r.outcome, r.message) for r in task.repetitions)
            decision = (
                _read_in_rounds(outcomes, task.min_pass)
                if task.decided_by == "rounds"
                else task_decision(outcomes, task.n, task.min_pass, task.min_rate, alpha)
            )
            stated = _shown(task.verdict, task.decided_by, task.decided_at)
            if decision is None:
                found.append(Disagreement(self.name, task.task_id, stated, "no decision (its repetitions decide none)"))
                continue
            verdict = task.verdict
            if verdict == "xfail" and decision.verdict in ("fail", "undecided"):
                verdict = decision.verdict  # failed only where the test expects to: shown as xfail, decided so
            if (verdict, task.decided_by, task.decided_at) != (decision.verdict, decision.decided_by, decision.at):
                recomputed = _shown(decision.verdict, decision.decided_by, decision.at)
                found.append(Disagreement(self.name, task.task_id, stated, recomputed))
        facts = summary.sequential
        if facts is not None and facts.alpha != alpha:
            found.append(
                Disagreement(self.name, "summary.sequential.alpha", f"{facts.alpha:g}", f"{alpha:g} (the analysis')")
            )
        return found


def _facts_shown(facts: SuiteSequentialFacts) -> str:
    bounds = "; ".join(f"round {r.number} [{r.low_pp:.6g}, {r.high_pp:.6g}]" for r in facts.rounds)
    return f"{facts.verdict} ({facts.decided_by} after round {facts.decided_after}; {bounds or 'no round'})"


@dataclass(frozen=True)
class SuiteGateDecisions:
    """The suite gates decided in rounds (the gap gate, the regression gate with a margin): each recomputed from the
    tasks' outcomes by repetition number, the seed and the baseline's counts the report keeps, by the function the
    session decided with (:func:`.suite_sequential.gap_gate`, :func:`.suite_sequential.drop_gate`), at the level the
    report states; the verdict, how and after which round it was decided, and every round's bounds compared."""

    name: str = "suite gates"

    @staticmethod
    def _gates(summary: SessionSummary) -> list[tuple[GateResult, SuiteSequentialFacts | None]]:
        stated = [g for g in summary.gates if g.name in ("consistency_gap", "suite_regression_margin")]
        if not stated or summary.analysis.sequential_alpha is None:
            return []
        if summary.analysis.sequential_seed is None:
            raise Unverifiable(
                "the report decides a suite gate in rounds but keeps no seed (summary.analysis.sequential_seed: "
                "written by an earlier version); re-run the session to write a report verify can check"
            )
        both = len(stated) == 2
        return [
            (
                gate,
                summary.sequential_regression
                if both and gate.name == "suite_regression_margin"
                else summary.sequential_suite,
            )
            for gate in stated
        ]

    def decisions(self, summary: SessionSummary) -> int:
        return len(self._gates(summary))

    def __call__(self, summary: SessionSummary) -> list[Disagreement]:
        from pytest_consistency.analysis.suite_sequential import drop_gate, gap_gate

        found: list[Disagreement] = []
        for gate, facts in self._gates(summary):
            recompute = gap_gate if gate.name == "consistency_gap" else drop_gate
            again, result = recompute(summary, gate.threshold, gate.family)
            stated = "no facts of its rounds" if facts is None else _facts_shown(facts)
            if facts is None or _facts_shown(again) != stated or result.state != gate.state:
                recomputed = f"{_facts_shown(again)}, gate {result.state}"
                found.append(Disagreement(self.name, gate.option, f"{stated}, gate {gate.state}", recomputed))
        return found


#: The checks ``verify`` runs, in order.
CHECKS: tuple[DecisionCheck, ...] = (TaskDecisions(), SuiteGateDecisions())


@dataclass(frozen=True)
class Verification:
    decisions: int
    disagreements: list[Disagreement]


def verify(summary: SessionSummary, checks: Sequence[DecisionCheck] = CHECKS) -> Verification:
    """The report's decisions counted and recomputed by every check; raises :class:`Unverifiable`."""
    total = sum(check.decisions(summary) for check in checks)
    return Verification(total, [found for check in checks for found in check(summary)])
