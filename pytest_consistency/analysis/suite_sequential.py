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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pytest_consistency.stats.suite_sequential import (
    RoundSequence,
    Step,
    batch_gap,
    included,
    inclusion_probability,
    rate_term,
    top_of,
)

if TYPE_CHECKING:
    from pytest_consistency.model.result import Analysis, GateResult, GateState, SessionSummary, TaskResult
    from pytest_consistency.model.stopping import SuiteRound, SuiteSequentialFacts

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


#: Given the sequence's (low, high, estimate) after a round (shares, 0..1): the verdict (None: not yet) and the
#: figure's (low, high, estimate) in pp as the round reports them.
Judge = Callable[[float, float, float], tuple["GateVerdict | None", float, float, float]]


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
    threshold = threshold_pp / 100.0

    def judge(low: float, high: float, estimate: float) -> tuple[GateVerdict | None, float, float, float]:
        verdict: GateVerdict | None = "pass" if high <= threshold else "fail" if low > threshold else None
        return verdict, 100 * low, 100 * high, 100 * estimate

    return read_rounds(outcomes, k, n, threshold_pp, alpha, seed, "gap", judge, final, stop)


def drop_rounds(
    outcomes: Mapping[str, Mapping[int, str]],
    b: int,
    n: int,
    margin_pp: float,
    alpha: float,
    seed: int,
    baseline: tuple[float, float, float],
    final: bool = False,
    stop: bool = True,
) -> GapRounds:
    """The regression gate with a margin: ``drop = baseline pass rate - this run's``, over the tasks both runs
    share (``outcomes`` holds only those). ``baseline``: its one-sided bounds (each at 1 - alpha / 2, fixed n:
    :func:`..stats.suite_sequential.baseline_bounds`) and its estimate; this run's pass rate by the confidence
    sequence at alpha / 2 a side, in rounds of ``b`` repetitions. PASS ("not worse by the margin") when the drop's
    upper bound is below the margin, FAIL when its lower bound is above it: each wrong with probability at most
    alpha (a bound of either run missing), after whichever round the run stops."""
    margin = margin_pp / 100.0
    base_low, base_high, base_estimate = baseline

    def judge(low: float, high: float, estimate: float) -> tuple[GateVerdict | None, float, float, float]:
        upper, lower = base_high - low, base_low - high
        verdict: GateVerdict | None = "pass" if upper < margin else "fail" if lower > margin else None
        return verdict, 100 * lower, 100 * upper, 100 * (base_estimate - estimate)

    return read_rounds(outcomes, b, n, margin_pp, alpha / 2.0, seed, "rate", judge, final, stop)


def read_rounds(
    outcomes: Mapping[str, Mapping[int, str]],
    k: int,
    n: int,
    threshold_pp: float,
    alpha: float,
    seed: int,
    kind: Literal["gap", "rate"],
    judge: Judge,
    final: bool = False,
    stop: bool = True,
) -> GapRounds:
    """The rounds of either gate: batches of k read in round order, each task's term (the gap's Horvitz-Thompson
    term, or the pass rate's difference term), the sequence after each round and the ``judge``'s verdict."""
    if k < 1 or n < k:
        raise ValueError(f"need 1 <= k <= n, got k={k!r}, n={n!r}")
    cap_rounds = n // k
    state = GapRounds(k, cap_rounds, threshold_pp, alpha, seed)
    tasks = sorted(outcomes)
    if not tasks:
        state.verdict, state.decided_by = "undecided", "cap"
        return state
    sequence = RoundSequence(len(tasks), alpha, cap_rounds)
    batches: dict[str, list[list[bool]]] = {task: [] for task in tasks}
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
        term = batch_gap if kind == "gap" else share
        steps = []
        running, count = 0.0, 0
        for task in tasks:
            own = [term(b) for b in batches[task]]
            if number == 1:  # the mean term of the tasks before it in this round
                prediction = running / count if count else (0.0 if kind == "gap" else 0.5)
            else:
                prediction = sum(own) / len(own)
            if kind == "gap":
                top = top_of(k, pis[task])
                value = term(read[task]) / pis[task] if task in read else 0.0
                steps.append(Step(value, top, min(prediction, top)))
            else:
                steps.append(rate_term(term(read[task]) if task in read else None, prediction, pis[task]))
            if task in read:
                batches[task].append(read[task])
                running += term(read[task])
                count += 1
        sequence.add_round(steps)
        low, high = sequence.bounds()
        verdict, low_pp, high_pp, estimate_pp = judge(low, high, sequence.estimate)
        state.rounds.append(RoundFacts(number, round(low_pp, 3), round(high_pp, 3), pis, chosen, round(estimate_pp, 3)))
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


def share(batch: Sequence[bool]) -> float:
    """A batch's share of passes."""
    return sum(1 for passed in batch if passed) / len(batch)


def beyond(outcomes: Mapping[str, Mapping[int, str]], rounds: Sequence[RoundFacts], b: int) -> int:
    """Repetitions that ran (passed or failed) but no read round used: handed out after the decision (another
    worker, a shard), or run for a task's own sequential verdict. They change no decision."""
    used = {
        (task, rep)
        for r in rounds
        for task, inside in r.included.items()
        if inside
        for rep in range((r.number - 1) * b + 1, r.number * b + 1)
    }
    return sum(
        1
        for task, marks in outcomes.items()
        for rep, mark in marks.items()
        if mark in ("pass", "fail") and (task, rep) not in used
    )


def best_case_cap(tasks: int, k: int, threshold_pp: float, alpha: float, most: int = 200) -> int | None:
    """The smallest cap n (a multiple of k, at most ``most``) at which the gap gate could PASS at all with this many
    tasks: even when no task ever parts (every term 0, the narrowest the bounds get). None: no cap up to ``most``.
    An undecided gate's plan: a run below this cap cannot pass whatever the agent does."""
    for rounds in range(1, most // k + 1):
        steady = {f"t{i:05d}": dict.fromkeys(range(1, rounds * k + 1), "pass") for i in range(tasks)}
        if gap_rounds(steady, k, rounds * k, threshold_pp, alpha, 0).verdict == "pass":
            return rounds * k
    return None


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
    from pytest_consistency.model.stopping import SuiteRound, SuiteSequentialFacts

    analysis = summary.analysis
    assert analysis.sequential_alpha is not None and analysis.sequential_seed is not None
    level = analysis.sequential_alpha / family
    tasks = [t for t in summary.tasks if t.verdict != "error"]
    ks = {t.k for t in tasks}
    k = ks.pop() if len(ks) == 1 else 0
    n = min((t.n for t in tasks), default=0)
    outcomes = outcomes_of(tasks)
    if k and n >= k:
        state = gap_rounds(outcomes, k, n, threshold, level, analysis.sequential_seed, final=True)
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
        beyond=beyond(outcomes, state.rounds, k) if rounds else 0,
    )
    last = rounds[-1] if rounds else None  # the bounds of the round that decided, or of the last read
    state_word: GateState = "undecided" if verdict == "undecided" else verdict  # type: ignore[assignment]
    if not rounds:
        state_word = "fail"  # not measurable: no gate passes by accident
    advice = None
    if state_word == "undecided":
        cap = best_case_cap(len(tasks), k, threshold, level)
        least = (
            f"with {len(tasks)} tasks no cap up to n = 200 could show it below {threshold:g} pp even if no task "
            "ever parted: more tasks would"
            if cap is None
            else f"with {len(tasks)} tasks a PASS needs a cap of at least n = {cap} even if no task ever parted"
        )
        advice = (
            f"undecided at the cap after {len(rounds)} round(s): the gap's bounds still straddle {threshold:g} pp; "
            f"{least}; plan a fresh sequential run with a larger cap or more tasks"
        )
    gate = ("consistency_gap", "--consistency-gap-max", threshold)
    return facts, _gate_result(gate, last, state_word, analysis, level, family, advice, ended)


def drop_gate(summary: SessionSummary, margin: float, family: int = 1) -> tuple[SuiteSequentialFacts, GateResult]:
    """The regression gate with a margin of a sequential session, recomputed from its records and the baseline's
    counts kept in the comparison (:func:`drop_rounds`), at the sequential alpha / ``family``. Not measurable (so
    failed, never passed by accident): no baseline, a sequential baseline, no task in both runs."""
    from pytest_consistency.model.stopping import SuiteRound, SuiteSequentialFacts
    from pytest_consistency.stats.suite_sequential import baseline_bounds

    analysis = summary.analysis
    assert analysis.sequential_alpha is not None and analysis.sequential_seed is not None
    level = analysis.sequential_alpha / family
    comparison = summary.comparison
    tasks = [t for t in summary.tasks if t.verdict != "error"]
    ks = {t.k for t in tasks}
    k = ks.pop() if len(ks) == 1 else 0
    b = k if analysis.sequential_seed is not None and summary.sequential_suite is not None else 1
    n = min((t.n for t in tasks), default=0)
    problem = None
    if comparison is None:
        problem = "no baseline to compare with (--consistency-baseline)"
    elif comparison.baseline_sequential:
        problem = "the baseline ran with --consistency-sequential: a sequential report is not a baseline"
    elif not comparison.baseline_counts:
        problem = "no task was scored in both runs"
    elif not k or n < b:
        problem = "the tasks do not share one k: rounds need a common batch"
    state = None
    outcomes: dict[str, dict[int, str]] = {}
    if problem is None and comparison is not None:
        counts = {task: (c[0], c[1]) for task, c in comparison.baseline_counts.items()}
        common = [t for t in tasks if t.task_id in counts]
        low, high = baseline_bounds([counts[t.task_id] for t in common], level / 2.0)
        estimate = sum(c / m for c, m in (counts[t.task_id] for t in common)) / max(1, len(common))
        outcomes = outcomes_of(common)
        state = drop_rounds(outcomes, b, n, margin, level, analysis.sequential_seed, (low, high, estimate), final=True)
    rounds = (
        []
        if state is None
        else [
            SuiteRound(r.number, r.low_pp, r.high_pp, dict(r.pi), dict(r.included), r.estimate_pp) for r in state.rounds
        ]
    )
    verdict = "undecided" if state is None else state.verdict or "undecided"
    decided_by = "cap" if state is None else state.decided_by or "cap"
    ended = problem if state is None else state.ended
    facts = SuiteSequentialFacts(
        gate="suite pass rate drop",
        verdict=verdict,
        decided_by=decided_by,
        decided_after=len(rounds),
        cap_rounds=n // b if b else 0,
        k=b,
        seed=analysis.sequential_seed,
        alpha=level,
        repetitions_used=0 if state is None else repetitions_of(state.rounds, b),
        cap_repetitions=sum(t.n for t in tasks),
        rounds=rounds,
        ended=ended,
        beyond=0 if state is None else beyond(outcomes, state.rounds, b),
    )
    last = rounds[-1] if rounds else None
    gate_state: GateState = "fail" if state is None or not rounds else verdict  # type: ignore[assignment]
    advice = None
    if gate_state == "undecided":
        advice = (
            f"undecided at the cap after {len(rounds)} round(s): the drop's bounds still straddle the margin of "
            f"{margin:g} pp; a larger cap, more tasks or a wider margin would decide it"
        )
    gate = ("suite_regression_margin", "--consistency-sequential-margin", margin)
    return facts, _gate_result(gate, last, gate_state, analysis, level, family, advice, ended)


def _gate_result(
    gate: tuple[str, str, float],
    last: SuiteRound | None,
    state: GateState,
    analysis: Analysis,
    level: float,
    family: int,
    advice: str | None,
    ended: str | None,
) -> GateResult:
    """A suite gate decided in rounds, as every output reads a gate: ``gate`` is (name, option, threshold in pp),
    the value and interval those of the last round read; why the rounds ended (``ended``) joins the advice."""
    from pytest_consistency.model.result import GateResult
    from pytest_consistency.stats.interval import Interval

    name, option, threshold = gate
    if ended:
        advice = ended if advice is None else f"{advice} ({ended})"
    return GateResult(
        name=name,
        option=option,
        threshold=threshold,
        direction="max",
        unit="pp",
        value=None if last is None else last.estimate_pp,
        interval=None if last is None else Interval(last.low_pp, last.high_pp),
        on="bound",
        state=state,
        passed=state == "pass" or (state == "undecided" and analysis.inconclusive == "pass"),
        level=level,
        family=family,
        advice=advice,
    )


def decide_in_rounds(summary: SessionSummary) -> None:
    """Sequential mode decides the gap gate, and the regression gate with a margin, in rounds
    (analysis/suite_sequential.py), each at the sequential alpha divided by the family of statistical gates (the
    margin gate one more of them)."""
    margin = summary.analysis.sequential_margin
    statistical = [gate for gate in summary.gates if gate.level is not None]
    family = (statistical[0].family if statistical else 0) + (margin is not None)
    for index, gate in enumerate(summary.gates):
        if gate.name == "consistency_gap":
            summary.sequential_suite, summary.gates[index] = gap_gate(summary, gate.threshold, max(1, family))
    if margin is not None:
        facts, result = drop_gate(summary, margin, max(1, family))
        summary.gates.append(result)
        if summary.sequential_suite is None:
            summary.sequential_suite = facts
        else:
            summary.sequential_regression = facts
