"""The divergence map's cost: the end of a session of 1,000 tasks x 10 repetitions x 20 model steps, with and
without the map, as a ratio in the same run (target: the map adds at most 10 %).

    python benchmarks/trajectory.py [--tasks 1000] [--n 10] [--steps 20] [--repeats 5] [--json out.json]

The ratios are of CPU seconds (``time.process_time`` around the end of session; the wall clock is printed beside
them): on a shared 2-core machine another process stretches the wall clock of one side and not the other, and
the ratio of two processes' wall times moved by more than the map costs.

Why three sides, each in a fresh process (``--side``), alternated ABC, CBA, ... so that machine load hits all alike:
- ``map``: what a session does now: every call carries its decision and what it asked, and every task gets its
  divergence map (alignment, tree, figures) into the summary, the JSON report and every render;
- ``calls``: the same records, with the map switched off (:func:`pytest_consistency.analysis.summary.task_trajectory`
  returns None): the denominator of the map's own cost, the figure the target is about;
- ``none``: the same calls without decisions, as the plugin recorded them before trajectories: what capturing
  the decisions adds to the end of session, reported beside it.
The end of session is :func:`session_end.end_of_session` (the perf benchmark's figure 5: build the summary,
decide the gates, the JSON report redacted and dumped, the terminal, Markdown and HTML renders).

Instruction counts, which another process's load does not move at all: each side once under callgrind, minus a
process that only builds the records (``--side records``), ``--once`` so that the map side builds its maps once:

    valgrind --tool=callgrind --callgrind-out-file=map.out python benchmarks/trajectory.py --side map --once --tasks 100

The records are synthetic but shaped like an agent suite: two thirds of the tasks take the same 20 steps in every
repetition, a third part at a random step into two or three branches (tool calls with small JSON arguments, a
text answer last), each step asked one tool result of about 100 characters.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from session_end import alternated, end_of_session, repetition, replayed_call  # noqa: E402

from pytest_consistency.model.records import RepetitionResult  # noqa: E402
from pytest_consistency.model.trajectory import Decision, Message, ToolCall  # noqa: E402

TOOLS = ("search_invoices", "list_emails", "read_invoice", "send_email", "lookup_customer")


def path_of(rng: random.Random, steps: int, branch: int) -> list[Decision]:
    """One branch of a task: ``steps`` decisions, tool calls then a text answer; ``branch`` seeds the choice."""
    local = random.Random(branch)
    out = [
        Decision.of(
            "",
            (ToolCall(local.choice(TOOLS), json.dumps({"id": local.randrange(1000), "q": "march"}, sort_keys=True)),),
            "tool_calls",
        )
        for _ in range(steps - 1)
    ]
    out.append(Decision.of(f"The total is {local.randrange(100)} euros.", (), "stop"))
    return out


def records(tasks: int, n: int, steps: int, decisions: bool, seed: int = 19) -> list[RepetitionResult]:
    rng = random.Random(seed)
    reps = []
    for t in range(tasks):
        base = path_of(rng, steps, t * 10)
        diverging = rng.random() < 1 / 3
        at = rng.randrange(1, steps)
        branches = [base] + [base[:at] + path_of(rng, steps, t * 10 + b)[at:] for b in (1, 2)]
        for r in range(1, n + 1):
            chosen = rng.randrange(3) if diverging else 0
            passed = chosen == 0 or rng.random() < 0.3
            calls = []
            for index, decision in enumerate(branches[chosen]):
                asked = (Message("tool", f"result {index} of task {t}: " + "x" * 80, f"call_{index}"),)
                calls.append(
                    replayed_call(
                        latency_ms=12.5,
                        prompt_tokens=70,
                        completion_tokens=12,
                        total_tokens=82,
                        decision=decision if decisions else None,
                        asked=asked if decisions else (),
                    )
                )
            answer = branches[chosen][-1].text
            reps.append(repetition(f"tests/test_agent_{t // 100:03d}.py", t, r, n, passed, answer, calls=calls))
    return reps


def one_side(side: str, tasks: int, n: int, steps: int, again: bool = True) -> dict[str, Any]:
    """One measurement in this process: the end of session of ``side``; seconds per step and, unless not
    ``again``, the maps built again on their own. Side ``records`` only builds the records (what to subtract
    from an instruction count of a side)."""
    import pytest_consistency.analysis.summary as summary_module

    if side not in ("map", "records"):
        summary_module.task_trajectory = lambda *args, **kwargs: None  # type: ignore[assignment]
    reps = records(tasks, n, steps, decisions=side != "none")
    if side == "records":
        return {"side": side, "seconds": {}}
    seconds = end_of_session(reps)
    if side == "map" and again:
        # The map's own work, timed again in this process right after: the share of the end of session it is,
        # a figure the load of a shared machine moves much less than a ratio of two processes' totals.
        from pytest_consistency.analysis.trajectory.divergence import divergence_map

        by_task: dict[str, list[RepetitionResult]] = {}
        for rep in reps:
            by_task.setdefault(rep.task_id, []).append(rep)
        mark = time.perf_counter()
        for task_reps in by_task.values():
            divergence_map(task_reps, inconsistent=True)
        seconds["map_build"] = time.perf_counter() - mark
    return {"side": side, "seconds": seconds}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    sides = ["map", "calls", "none"]
    size = ["--tasks", str(args.tasks), "--n", str(args.n), "--steps", str(args.steps)]
    runs = alternated(__file__, sides, args.repeats, size)
    samples = {side: [run["seconds"]["cpu"] for run in rs] for side, rs in runs.items()}
    steps = {side: [run["seconds"] for run in rs] for side, rs in runs.items()}
    medians = {side: statistics.median(values) for side, values in samples.items()}
    builds = [run["map_build"] / run["total"] for run in steps["map"]]
    walls = {side: statistics.median(run["total"] for run in runs) for side, runs in steps.items()}
    return {
        "map_build_share": statistics.median(builds),
        "tasks": args.tasks,
        "n": args.n,
        "steps": args.steps,
        "repeats": args.repeats,
        "samples": samples,
        "steps_seconds": steps,
        "median_cpu_seconds": medians,
        "median_wall_seconds": walls,
        "wall_ratio_map": walls["map"] / walls["calls"],
        "spread": {s: (max(v) - min(v)) / medians[s] for s, v in samples.items()},
        "ratio_map": medians["map"] / medians["calls"],
        "ratio_capture": medians["calls"] / medians["none"],
        "ratio_total": medians["map"] / medians["none"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--side", choices=("map", "calls", "none", "records"), default=None, help="one measurement in this process"
    )
    parser.add_argument("--once", action="store_true", help="with --side map: do not build the maps a second time")
    args = parser.parse_args(argv)
    if args.side is not None:
        print(json.dumps(one_side(args.side, args.tasks, args.n, args.steps, again=not args.once)))
        return 0
    started = time.perf_counter()
    result = measure(args)
    medians, walls = result["median_cpu_seconds"], result["median_wall_seconds"]
    print(f"end of session, {args.tasks} tasks x {args.n} repetitions x {args.steps} steps, {args.repeats} runs each")
    print(f"  (CPU seconds of the end of session, ratios of their medians; load average {os.getloadavg()[0]:.1f})")
    for side in ("none", "calls", "map"):
        print(
            f"  {side:<6} median {medians[side]:8.3f} s CPU   spread {result['spread'][side] * 100:5.1f} %"
            f"   wall {walls[side]:8.3f} s"
        )
    verdict = "met" if result["ratio_map"] <= 1.10 else "NOT met"
    print(f"  the map (map / calls):            x{result['ratio_map']:.3f}  (target <= 1.10: {verdict})")
    print(f"  capturing decisions (calls / none): x{result['ratio_capture']:.3f}")
    print(f"  both (map / none):                x{result['ratio_total']:.3f}")
    print(f"  the map in wall-clock time:       x{result['wall_ratio_map']:.3f}")
    print(f"  building the maps, timed in the map side: +{result['map_build_share'] * 100:.1f} % of its end of session")
    print(f"  took {time.perf_counter() - started:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
