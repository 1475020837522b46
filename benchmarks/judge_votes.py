"""Judge votes (``--consistency-judge-votes=M``): what the stop rule costs, and whether the gate then reads the agent.

    python benchmarks/judge_votes.py [--trials 200] [--tasks 10] [--n 5]

Why: a votes session promises that each repetition's outcome is the majority of up to M judge samples, asked one at a
time until it is decided (so at fewer than M calls per repetition), and that the gates, reading those majorities,
see the agent's change rather than the judge's noise. Each trial simulates two votes sessions (a baseline and the
current run), T tasks x n recorded repetitions each: a repetition's agent output deserves a pass with probability p
(its pass rate), and each judge sample reads it wrongly with probability q, independently. The path is the session
end's, without pytest: each repetition's samples are drawn as the votes role asks them (sample j only while
:func:`.judge.majority` of samples 1..j-1 is undecided; a sample not asked is a skipped item, as the role skips
it), as item records numbered as a votes session numbers them -> :func:`.judge.fold` (the role's ``fold``) ->
:func:`.summary.build_summary` -> the baseline read back from its JSON data and
compared (:func:`.baseline.compare_for_gates`) -> :func:`.summary.conclude` (the judge block,
:func:`.judge.judge_summary`, only for the calls table: no gate reads it): the suite-level regression gate, on by
default with a baseline (``--consistency-test`` default). Seeded; a rate's standard error is about
sqrt(r (1 - r) / trials) (0.015 at r = 0.05 and 200 trials).
"""

from __future__ import annotations

import argparse
import random

from pytest_consistency.analysis.baseline import compare_for_gates
from pytest_consistency.analysis.judge import fold, judge_summary, majority
from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.records import RepetitionResult
from pytest_consistency.model.result import SessionSummary


def votes_session(rng: random.Random, tasks: int, n: int, m: int, p: float, q: float) -> SessionSummary:
    """One votes session's summary, as the session end builds it."""
    records = []
    for t in range(tasks):
        task = f"test_judged.py::test_{t}"
        for r in range(1, n + 1):
            good = rng.random() < p
            votes: list[bool | None] = []
            for j in range(1, m + 1):
                index = (r - 1) * m + j
                asked = majority(votes, m)[0] is None
                outcome = "skipped"
                if asked:
                    vote = good if rng.random() >= q else not good
                    votes.append(vote)
                    outcome = "passed" if vote else "failed"
                records.append(
                    RepetitionResult(
                        task_id=task,
                        nodeid=f"{task}[rep{r}@judge{j}]",
                        repeat=index,
                        n=n * m,
                        k=n,
                        min_pass=0.0,
                        outcome=outcome,
                    )
                )
    return build_summary(fold(records, m, votes=True))


def regression_fails(rng: random.Random, tasks: int, n: int, m: int, before: float, after: float, q: float) -> bool:
    """Whether the suite regression gate fails the current run against its baseline (both votes sessions)."""
    baseline = SessionSummary.from_dict(votes_session(rng, tasks, n, m, before, q).to_dict())
    current = votes_session(rng, tasks, n, m, after, q)
    current.comparison = compare_for_gates(baseline, current, "baseline.json", {})
    conclude(current, {})
    return any(gate.name == "suite_regression_p" and gate.state == "fail" for gate in current.gates)


def calls_per_repetition(rng: random.Random, m: int, q: float, repetitions: int) -> float:
    """Judge samples asked per repetition, read from the judge block of simulated sessions (``votes_asked``; the
    judge block is left out of the gate's trials: its kappa bootstrap is the slow part, and no gate reads it)."""
    asked = rows = 0
    while rows < repetitions:
        summary = votes_session(rng, 10, 10, m, 1.0, q)
        judged = judge_summary([r for t in summary.tasks for r in t.repetitions], m, votes=True)
        asked += judged.suite.votes_asked or 0
        rows += judged.suite.repetitions
    return asked / rows


def expected_asked(m: int, q: float) -> float:
    """The exact expected number of samples the stop rule asks per repetition, each wrong with probability q: the sum
    over j of the probability that samples 1..j-1 leave the majority undecided (2 + 2q(1 - q) at M = 3)."""
    need = m // 2 + 1
    states = {(0, 0): 1.0}  # (right, wrong) votes so far, undecided
    total = 0.0
    for _ in range(m):
        total += sum(states.values())
        following: dict[tuple[int, int], float] = {}
        for (right, wrong), chance in states.items():
            for after, step in (((right + 1, wrong), 1 - q), ((right, wrong + 1), q)):
                if max(after) < need:
                    following[after] = following.get(after, 0.0) + chance * step
        states = following
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1] if __doc__ else None)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--calls", type=int, default=4000, help="repetitions simulated per row of the calls table")
    args = parser.parse_args()
    print(f"judge calls per repetition ({args.calls} repetitions a row)")
    for q in (0.1, 0.3):
        for m in (1, 3, 5, 7):
            rng = random.Random(20261207 + m + int(q * 100))
            found = calls_per_repetition(rng, m, q, args.calls)
            print(f"q = {q:.1f}  M = {m}  {found:.3f} of {m}  (exact {expected_asked(m, q):.3f})")
    print(f"suite regression gate, {args.tasks} tasks x n = {args.n}, judge q = 0.3, {args.trials} trials a row")
    for m in (1, 3, 5):
        rng = random.Random(7 + m)
        aa = sum(regression_fails(rng, args.tasks, args.n, m, 0.9, 0.9, 0.3) for _ in range(args.trials))
        power = sum(regression_fails(rng, args.tasks, args.n, m, 0.9, 0.6, 0.3) for _ in range(args.trials))
        aa_rate, power_rate = aa / args.trials, power / args.trials
        print(f"M = {m}  A/A (0.9 -> 0.9) fails {aa_rate:6.1%}   power (0.9 -> 0.6) {power_rate:6.1%}")


if __name__ == "__main__":
    main()
