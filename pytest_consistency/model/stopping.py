"""What the modes that stop tasks early spent and decided: adaptive repetitions (curtailment), sequential verdicts
per task, and the suite gates decided in rounds; parts of the session result (:mod:`.result`), each rendered by
every output and kept in the JSON report (``summary.adaptive``, ``summary.sequential``, ``summary.sequential_suite``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AdaptiveFacts:
    """What adaptive repetitions saved: repetitions skipped, and the calls they would have made (estimated from
    the calls per repetition of the same task)."""

    n_min: int
    tasks_curtailed: int
    repetitions_used: int
    repetitions_saved: int
    calls_saved: float


@dataclass(frozen=True)
class SequentialFacts:
    """What sequential mode spent and decided: repetitions run against the cap's fixed run (every task at its
    marker's n), tasks decided by evidence, undecided at the cap, and decided by curtailment (min_pass)."""

    alpha: float
    repetitions_used: int
    cap_repetitions: int
    not_needed: int
    by_evidence: int
    at_cap: int
    curtailed: int
    #: ``--consistency-repetition-budget`` (None: none set), the repetitions not started because it was used up,
    #: and the tasks left undecided for it (``decided_by: cap``; not counted in ``at_cap``). Defaults: a report
    #: written before these fields reads as a session without a budget.
    repetition_budget: int | None = None
    budget_stopped: int = 0
    undecided_for_budget: int = 0
    #: ``min_pass`` tasks whose rule read the repetitions the suite gates' rounds ran (``decided_by: rounds``).
    by_rounds: int = 0

    @property
    def text(self) -> str:
        """The sentence every output prints."""
        text = (
            f"sequential (alpha {self.alpha:g}): {self.repetitions_used} repetitions run of the cap's fixed run of "
            f"{self.cap_repetitions}, {self.not_needed} not needed; {self.by_evidence} task(s) decided by evidence, "
            f"{self.at_cap} undecided at the cap, {self.curtailed} decided by curtailment (min_pass)"
        )
        if self.by_rounds:
            text += f", {self.by_rounds} read on the repetitions their rounds ran (min_pass)"
        if self.repetition_budget is None:
            return text
        if not self.budget_stopped:
            return f"{text}; repetition budget {self.repetition_budget} not reached"
        return (
            f"{text}; repetition budget {self.repetition_budget} reached: {self.budget_stopped} repetition(s) not "
            f"started, {self.undecided_for_budget} task(s) undecided for it"
        )


@dataclass(frozen=True)
class SuiteRound:
    """One round of the suite gap gate in sequential mode: the gap's bounds (pp) after it, and per task its
    inclusion probability and whether it was included (docs/sequential.md, "The suite gap gate")."""

    number: int
    low_pp: float
    high_pp: float
    pi: dict[str, float] = field(default_factory=dict)
    included: dict[str, bool] = field(default_factory=dict)
    estimate_pp: float = 0.0


@dataclass(frozen=True)
class SuiteSequentialFacts:
    """The suite gap gate decided in rounds: its verdict, after which round, the repetitions its rounds used
    against the cap's fixed run, and every round's bounds (``summary.sequential_suite``)."""

    gate: str
    verdict: str
    decided_by: str
    decided_after: int
    cap_rounds: int
    k: int
    seed: int
    alpha: float
    repetitions_used: int
    cap_repetitions: int
    rounds: list[SuiteRound] = field(default_factory=list)
    ended: str | None = None
    #: Repetitions that ran but no read round used (handed out after the decision, by another worker or a shard,
    #: or run for a task's own verdict): reported, never read.
    beyond: int = 0

    @property
    def text(self) -> str:
        how = (
            f"decided after round {self.decided_after}"
            if self.decided_by == "evidence"
            else f"undecided at the cap ({self.decided_after} of {self.cap_rounds} rounds)"
        )
        return (
            f"{self.gate} in rounds of k = {self.k} (alpha {self.alpha:g}, seed {self.seed}): {self.verdict}, {how}; "
            f"{self.repetitions_used} repetitions of the cap's fixed run of {self.cap_repetitions}"
            + (f", {self.beyond} more ran that no round read" if self.beyond else "")
        )

    def round_lines(self) -> list[str]:
        return [
            f"round {r.number}: {sum(r.included.values())} of {len(r.included)} tasks, {self.gate} bounds "
            f"[{r.low_pp:.1f}, {r.high_pp:.1f}] pp"
            for r in self.rounds
        ]
