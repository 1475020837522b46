"""False alarms (A/A) and power of ``--consistency-judge-flip-max``, through the plugin's own session end.

    python benchmarks/judge_flip_gate.py [--trials 400] [--tasks 4] [--n 10]

Why: the gate promises that a judge whose true flip rate is exactly the threshold fails the session at most
alpha = 1 - confidence of the time (it fails only when the interval's lower bound is past the threshold), and it
should catch a judge that flips clearly more. Each trial simulates a rejudge session: T tasks, n recorded
repetitions each, M judge samples per repetition; each sample passes or fails independently, failing with
probability q, so the true flip rate is 2q(1 - q). The path is the session end's, without pytest: repetition
records (``RepetitionResult``, ``min_pass=0``, item i = judge sample j of repetition r as a rejudge session numbers
them) -> :func:`.summary.build_summary` -> :func:`.judge.judge_summary` (as the rejudge role adds it) ->
:func:`.summary.conclude` with the gate's threshold -> ``summary.passed``. Seeded; a rate's standard error is about
sqrt(r (1 - r) / trials) (0.011 at r = 0.05 and 400 trials).
"""

from __future__ import annotations

import argparse
import math
import random

from pytest_consistency.analysis.judge import judge_summary
from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.records import RepetitionResult


def q_for(flip: float) -> float:
    """The failure probability q whose flip rate 2q(1 - q) is ``flip`` (q <= 1/2)."""
    return (1.0 - math.sqrt(1.0 - 2.0 * flip)) / 2.0


def session_fails(rng: random.Random, tasks: int, n: int, m: int, flip: float, threshold_pp: float) -> bool:
    q = q_for(flip)
    records = []
    for t in range(tasks):
        task = f"test_judged.py::test_{t}"
        for index in range(1, n * m + 1):
            records.append(
                RepetitionResult(
                    task_id=task,
                    nodeid=f"{task}[{index}]",
                    repeat=index,
                    n=n * m,
                    k=1,
                    min_pass=0.0,
                    outcome="failed" if rng.random() < q else "passed",
                )
            )
    summary = build_summary(records)
    summary.judge = judge_summary(records, m, summary.analysis.confidence)
    return not conclude(summary, {"judge_flip_max": threshold_pp}).passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1] if __doc__ else None)
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--n", type=int, default=10)
    args = parser.parse_args()
    threshold = 0.20
    print(
        f"--consistency-judge-flip-max={threshold * 100:.0f}, {args.tasks} tasks x n = {args.n}, {args.trials} trials"
    )
    for m in (2, 3, 5):
        rng = random.Random(20261207 + m)
        for label, flip in (
            ("A/A: flip = threshold", threshold),
            ("power: flip = 0.35", 0.35),
            ("power: flip = 0.45", 0.45),
        ):
            fails = sum(session_fails(rng, args.tasks, args.n, m, flip, threshold * 100) for _ in range(args.trials))
            print(f"M = {m}  {label:<22} fails {fails / args.trials:6.1%}")


if __name__ == "__main__":
    main()
