"""The suite gap gate in sequential mode (``--consistency-sequential`` with ``--consistency-gap-max``): its rounds,
which repetitions they need, and the gate's decision, from the outcomes by task and repetition number.

One pure function, :func:`gap_rounds`, decides for the repetition about to start (plugin/lifecycle.py, from the
shared board), for the session's summary (from the records, so ``verify`` and ``merge`` can recompute it) and for
the benchmark (benchmarks/sequential.py). The statistics are :mod:`..stats.suite_sequential`'s.

- Round r covers repetitions ``(r - 1) k + 1 .. r k`` of every task it includes; the cap's rounds are ``n // k``
  (n the marker's, k pinned). Round 1 includes every task; round r >= 2 task i with ``pi_{i,r}`` from its own earlier
  included batches, drawn by a hash of (seed, task, r).
- After each round the confidence sequence gives the gap's bounds; the gate is decided (PASS: upper <= threshold;
  FAIL: lower > threshold) after the first round where one holds, and later rounds are not needed.
- A round is read only once every included task's batch is complete. A batch with a repetition that skipped, was
  not recorded on replay (``unrecorded``) or is missing at the end of the session cannot be read: the sequence ends
  there, as at the cap (``undecided``), and a replay never calls live.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pytest_consistency.stats.suite_sequential import (
    GapSequence,
    Step,
    batch_gap,
    included,
    inclusion_probability,
    top_of,
)

if TYPE_CHECKING:
    from pytest_consistency.model.result import (
        GateResult,
        GateState,
        SessionSummary,
        SuiteSequentialFacts,
        TaskResult,
    )

GateVerdict = Literal["pass", "fail", "undecided"]


@dataclass(frozen=True)
class RoundFacts:
    """One round as it was read: its bounds (pp) after it, and per task its pi and whether it was included."""

    number: int
    low_pp: float
    high_pp: float
    pi: dict[str, float]
    included: dict[str, bool]
    #: The Horvitz-Thompson estimate of the gap (pp) the bounds are centred on (the bets' weighted mean).
    estimate_pp: float = 0.0

    @property
    def repetitions(self) -> int:
        return sum(self.included.values())


@dataclass
class GapRounds:
    """The gate as far as the outcomes go: the rounds read, the verdict, and what is needed next."""

    k: int
    cap_rounds: int
    threshold_pp: float
    alpha: float
    seed: int
    rounds: list[RoundFacts] = field(default_factory=list)
    verdict: GateVerdict | None = None
    #: ``evidence`` (a bound crossed), ``cap`` (the cap's rounds read, or the sequence ended there), None: not yet.
    decided_by: Literal["evidence", "cap"] | None = None
    #: The round being waited for (its included tasks' batches are not all known), None once decided.
    pending: int | None = None
    #: Task -> included in the pending round (known once every earlier round is read).
    pending_included: dict[str, bool] = field(default_factory=dict)
    #: Why the sequence ended before the cap (a batch that cannot be read), or None.
    ended: str | None = None

    @property
    def decided_after(self) -> int:
        return len(self.rounds)

    def needs(self, task_id: str, repeat: int) -> bool | None:
        """Whether repetition ``repeat`` of the task is needed: True, False, or None while the earlier rounds are
        not all known (the caller waits or runs it)."""
        number = (repeat - 1) // self.k + 1
        if number > self.cap_rounds:
            return False  # beyond the cap's last whole batch: the gate never reads it
        if number <= len(self.rounds):
            return self.rounds[number - 1].included.get(task_id, False)
        if self.verdict is not None:
            return False
        if number == self.pending:
            return self.pending_included.get(task_id, False)
        return None


def repetitions_of(rounds: Sequence[RoundFacts], k: int) -> int:
    """The repetitions the read rounds used: k per included task."""
    return k * sum(r.repetitions for r in rounds)


def gap_rounds(
    outcomes: Mapping[str, Mapping[int, str]],
    k: int,
    n: int,
    threshold_pp: float,
    alpha: float,
    seed: int,
    final: bool = False,
    stop: bool = True,
) -> GapRounds:
    """The suite gap gate from each task's outcomes by repetition number (``pass``, ``fail``, ``skip``,
    ``unrecorded``; absent: not known yet), read round by round (module docstring). ``final``: the session is
    over, so a batch still incomplete ends the sequence (undecided) instead of being waited for. ``stop=False``
    (a shard, which sees only its own tasks): the rounds go on to the cap after a decision, so the merge can decide
    on the union; the verdict is still the first round's that decided, and every round read is kept."""
    if k < 1 or n < k:
        raise ValueError(f"need 1 <= k <= n, got k={k!r}, n={n!r}")
    cap_rounds = n // k
    state = GapRounds(k, cap_rounds, threshold_pp, alpha, seed)
    tasks = sorted(outcomes)
    if not tasks:
        state.verdict, state.decided_by = "undecided", "cap"
        return state
    sequence = GapSequence(len(tasks), alpha, cap_rounds)
    batches: dict[str, list[list[bool]]] = {task: [] for task in tasks}
    threshold = threshold_pp / 100.0
    first: GateVerdict | None = None
    for number in range(1, cap_rounds + 1):
        pis = {task: 1.0 if number == 1 else inclusion_probability(batches[task]) for task in tasks}
        chosen = {task: included(seed, task, number, pis[task]) for task in tasks}
        read: dict[str, list[bool]] = {}
        for task in tasks:
            if not chosen[task]:
                continue
            marks = [outcomes[task].get(rep) for rep in range((number - 1) * k + 1, number * k + 1)]
            if any(mark in ("skip", "unrecorded") for mark in marks) or (final and None in marks):
                state.verdict, state.decided_by = "undecided", "cap"
                missing = "not run" if None in marks else "skipped or not recorded"
                state.ended = f"round {number}: a repetition of {task} was {missing}; the sequence ends here"
                return state
            if None in marks:
                state.pending, state.pending_included = number, chosen
                return state
            read[task] = [mark == "pass" for mark in marks]
        steps = []
        running, count = 0.0, 0
        for task in tasks:
            own = [batch_gap(b) for b in batches[task]]
            if number == 1:
                prediction = running / count if count else 0.0
            else:
                prediction = sum(own) / len(own)
            top = top_of(k, pis[task])
            value = batch_gap(read[task]) / pis[task] if task in read else 0.0
            steps.append(Step(value, top, min(prediction, top)))
            if task in read:
                batches[task].append(read[task])
                running += value
                count += 1
        sequence.add_round(steps)
        low, high = sequence.bounds()
        estimate = round(100 * sequence.weighted / sequence.bets, 3)
        state.rounds.append(RoundFacts(number, round(low * 100, 3), round(high * 100, 3), pis, chosen, estimate))
        verdict: GateVerdict | None = "pass" if high <= threshold else "fail" if low > threshold else None
        if verdict is not None and stop:
            state.verdict, state.decided_by = verdict, "evidence"
            return state
        if verdict is not None and first is None:
            first = verdict
    if first is not None:  # stop=False: the first decision; every round to the cap is kept
        state.verdict, state.decided_by = first, "evidence"
        return state
    state.verdict, state.decided_by = "undecided", "cap"
    return state


def outcomes_of(tasks: Sequence[TaskResult]) -> dict[str, dict[int, str]]:
    """Each task's outcomes by repetition number, from the records (as the per-task decision reads them)."""
    from pytest_consistency.analysis.sequential import from_records

    return {
        t.task_id: dict(from_records((r.repeat, r.outcome, r.message) for r in t.repetitions))
        for t in tasks
        if t.verdict != "error"
    }


def gap_gate(summary: SessionSummary, threshold: float, family: int = 1) -> tuple[SuiteSequentialFacts, GateResult]:
    """The suite gap gate of a sequential session, recomputed from its records with :func:`gap_rounds` (the
    function the run skipped repetitions with), at the sequential alpha / ``family``; and its facts for the report.
    Tasks of different k are not one round's batches: the gate then fails as not measurable."""
    from pytest_consistency.model.result import GateResult, SuiteRound, SuiteSequentialFacts
    from pytest_consistency.stats.interval import Interval

    analysis = summary.analysis
    assert analysis.sequential_alpha is not None and analysis.sequential_seed is not None
    level = analysis.sequential_alpha / family
    tasks = [t for t in summary.tasks if t.verdict != "error"]
    ks = {t.k for t in tasks}
    k = ks.pop() if len(ks) == 1 else 0
    n = min((t.n for t in tasks), default=0)
    if k and n >= k:
        state = gap_rounds(outcomes_of(tasks), k, n, threshold, level, analysis.sequential_seed, final=True)
        verdict, decided_by, ended = state.verdict or "undecided", state.decided_by or "cap", state.ended
        rounds = [
            SuiteRound(r.number, r.low_pp, r.high_pp, dict(r.pi), dict(r.included), r.estimate_pp) for r in state.rounds
        ]
    else:
        verdict, decided_by, rounds = "undecided", "cap", []
        ended = "the tasks do not share one k: rounds of k repetitions need a common k"
    facts = SuiteSequentialFacts(
        gate="consistency gap",
        verdict=verdict,
        decided_by=decided_by,
        decided_after=len(rounds),
        cap_rounds=n // k if k else 0,
        k=k,
        seed=analysis.sequential_seed,
        alpha=level,
        repetitions_used=repetitions_of(state.rounds, k) if rounds else 0,
        cap_repetitions=sum(t.n for t in tasks),
        rounds=rounds,
        ended=ended,
    )
    last = rounds[-1] if rounds else None  # the bounds of the round that decided, or of the last read
    state_word: GateState = "undecided" if verdict == "undecided" else verdict  # type: ignore[assignment]
    if not rounds:
        state_word = "fail"  # not measurable: no gate passes by accident
    advice = None
    if state_word == "undecided":
        advice = (
            f"undecided at the cap after {len(rounds)} round(s): the gap's bounds still straddle {threshold:g} pp; "
            "a fresh sequential run with a larger cap (more rounds of k) or more tasks would narrow them"
        )
    if ended:
        advice = ended if advice is None else f"{advice} ({ended})"
    result = GateResult(
        name="consistency_gap",
        option="--consistency-gap-max",
        threshold=threshold,
        direction="max",
        unit="pp",
        value=None if last is None else last.estimate_pp,
        interval=None if last is None else Interval(last.low_pp, last.high_pp),
        on="bound",
        state=state_word,
        passed=state_word == "pass" or (state_word == "undecided" and analysis.inconclusive == "pass"),
        level=level,
        family=family,
        advice=advice,
    )
    return facts, result
