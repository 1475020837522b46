"""False alarms (A/A) and power of every gate and gate set, through the plugin's own session end.

    python benchmarks/aa.py [--pairs 1000] [--cells quick|docs|all] [--power] [--markdown] [--json out.json]

Why: a gate that fails an unchanged agent a third of the time is learned as noise and switched off, and one made
blind to stop that is no better. So each gate, and each gate set the docs and ``examples/ci/`` recommend, is run on
pairs of simulated runs (a baseline and a current run of the same agent, independent repetitions) and the table
says how often the session FAILS:

- A/A: both runs have the same true pass rates; every failure is a false alarm. The promise (docs/baselines.md,
  "What a verdict promises"): at most alpha = 1 - confidence (5 %) for every single gate and for every set.
- Power: the current run's pass rates are lower by 10, 20 or 30 points (a task at 1.0 passes 90, 80, 70 % of the
  time; clipped at 0); each figure is how often the session fails.

The path is the session end's, without pytest: repetition records (``RepetitionResult``, ``min_pass=0`` so that only
the gates decide) -> :func:`.summary.build_summary` -> :func:`.baseline.compare_for_gates` (at the gates' level) ->
:func:`.summary.conclude` -> ``summary.passed``, the value the exit status is settled from (``merge`` calls the
same functions). The absolute gates are set AT the agent's true figure (its gap, its pass^k at k = n), the hardest
case for a false alarm: an agent exactly on the threshold must not fail more than alpha of the time.

Mixes of true pass rates per task (spread over T tasks: :func:`rates_for`): ``docs`` is docs/baselines.md's A/A mix
(8 tasks at 1.0, 4 at 0.9, 4 at 0.7, 2 at 0.5, 2 at 0.2); ``all 0.5``, ``all 0.9``, ``all 0.97`` give every task
one rate. Seeded
(``random.Random``), so the same command prints the same table; each rate has a standard error of about
sqrt(r (1 - r) / pairs) (0.007 at r = 0.05 and 1,000 pairs), printed with the table.

Runs on the checkout it is started from; ``--before`` runs the same sets on the code of an older commit checked
out elsewhere (``PYTHONPATH=/path/to/old python benchmarks/aa.py``): calls that commit lacks are skipped there
(compare() without a level, no suite-level default), which is how the closing note's "before" table was made.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import random
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # an older checkout on PYTHONPATH comes first

from pytest_consistency.analysis import baseline as baseline_module
from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.records import RepetitionResult
from pytest_consistency.model.result import Analysis, SessionSummary

DOCS_MIX = [1.0] * 8 + [0.9] * 4 + [0.7] * 4 + [0.5] * 2 + [0.2] * 2
MIXES: dict[str, list[float]] = {"docs": DOCS_MIX, "all 0.5": [0.5], "all 0.9": [0.9], "all 0.97": [0.97]}
DROPS = (10, 20, 30)
ALPHA = 0.05


@dataclass(frozen=True)
class GateSet:
    """A named set of options: gate thresholds by dest (``truth:gap`` and ``truth:pass_hat_k`` are replaced by the
    agent's true figure) and analysis settings; ``baseline`` whether the run is compared with a baseline."""

    name: str
    gates: dict[str, Any]
    baseline: bool = True
    suite_regression: bool | None = None
    where: str = ""


SETS: tuple[GateSet, ...] = (
    GateSet("a baseline, no option (the default gates)", {}, where="the suite-level test, on by default"),
    GateSet(
        "examples/ci/consistency.yml",
        {"consistency_gap_max": "truth:gap", "consistency_regressions_max": 0, "gap_increase_max": 5.0},
        where=(
            "GATES + BASELINE_GATES, the gap threshold at the agent's true gap; --route-drift-max=0 left out (a fact, "
            "not an estimate: 0 in a replay whose calls share one route, and no call is simulated)"
        ),
    ),
    GateSet(
        "docs/ci.md",
        {"consistency_regressions_max": 0, "gap_increase_max": 5.0},
        where="--consistency-regressions-max=0 --gap-increase-max=5",
    ),
    GateSet(
        "README (CI in short)",
        {"consistency_gap_max": "truth:gap", "consistency_regressions_max": 0},
        where="--consistency-gap-max (at the true gap) --consistency-regressions-max=0",
    ),
    GateSet("--consistency-regressions-max=0 alone", {"consistency_regressions_max": 0}, suite_regression=False),
    GateSet("--gap-increase-max=5 alone", {"gap_increase_max": 5.0}, suite_regression=False),
    GateSet("--gap-increase-max=0 alone", {"gap_increase_max": 0.0}, suite_regression=False),
    GateSet("--mcnemar-p-min=0.05 alone", {"mcnemar_p_min": 0.05}, suite_regression=False),
    GateSet("--consistency-suite-regression alone", {}, suite_regression=True),
    GateSet("--consistency-gap-max at the true gap", {"consistency_gap_max": "truth:gap"}, baseline=False),
    GateSet("--pass-hat-k-min at the true pass^k", {"pass_hat_k_min": "truth:pass_hat_k"}, baseline=False),
)


def rates_for(mix: Sequence[float], tasks: int) -> list[float]:
    """``tasks`` rates spread over the mix: fewer tasks than the mix take every (len / tasks)-th rate (10 tasks of
    the docs mix: four at 1.0, two at 0.9, two at 0.7, one at 0.5, one at 0.2), more repeat it."""
    if tasks < len(mix):
        return [mix[i * len(mix) // tasks] for i in range(tasks)]
    return [mix[i % len(mix)] for i in range(tasks)]


def truths(rates: Sequence[float], n: int) -> dict[str, float]:
    """The agent's true gap (pp) and pass^k (%) at k = n."""
    gap = sum(p - p**n for p in rates) / len(rates) * 100
    hat = sum(p**n for p in rates) / len(rates) * 100
    return {"gap": gap, "pass_hat_k": hat}


def records(rng: random.Random, rates: Sequence[float], n: int) -> list[RepetitionResult]:
    out = []
    for index, p in enumerate(rates):
        task = f"t.py::test_task[t{index:03d}]"
        for repeat in range(1, n + 1):
            outcome = "passed" if rng.random() < p else "failed"
            out.append(
                RepetitionResult(
                    task_id=task,
                    nodeid=f"t.py::test_task[t{index:03d}-rep{repeat}]",
                    repeat=repeat,
                    n=n,
                    k=n,
                    min_pass=0.0,
                    order=index * n + repeat,
                    outcome=outcome,
                )
            )
    return out


def analysis_for(gate_set: GateSet) -> Analysis:
    fields = inspect.signature(Analysis).parameters
    if "suite_regression" not in fields:
        return Analysis()
    default = fields["suite_regression"].default
    # the old code's switch was a bool defaulting to False: "on by default" did not exist there
    wanted = gate_set.suite_regression
    if wanted is None:
        wanted = default
    return Analysis(suite_regression=wanted)


def thresholds_for(gate_set: GateSet, truth: dict[str, float]) -> dict[str, float | None]:
    from pytest_consistency.analysis.gates import ALL_GATES

    out: dict[str, float | None] = {gate.dest: None for gate in ALL_GATES}
    for dest, value in gate_set.gates.items():
        out[dest] = round(truth[value.split(":", 1)[1]], 6) if isinstance(value, str) else float(value)
    return out


class SessionEnd:
    """The session end on one current run for every gate set: its summary built once per analysis and its
    comparison once per level (the gate sets share them; conclude() decides the gates afresh each time)."""

    def __init__(self, base: SessionSummary, current: list[RepetitionResult], truth: dict[str, float]) -> None:
        self.base, self.current, self.truth = base, current, truth
        self.summaries: dict[Any, SessionSummary] = {}
        self.comparisons: dict[Any, Any] = {}

    def fails(self, gate_set: GateSet) -> bool:
        analysis = analysis_for(gate_set)
        summary = self.summaries.get(analysis)
        if summary is None:
            summary = self.summaries[analysis] = build_summary(self.current, analysis=analysis)
        thresholds = thresholds_for(gate_set, self.truth)
        summary.comparison = None
        if gate_set.baseline:
            if hasattr(baseline_module, "compare_for_gates"):
                from pytest_consistency.analysis.gates import family_level

                key = (analysis, family_level(analysis, thresholds, compared=True))
                if key not in self.comparisons:
                    self.comparisons[key] = baseline_module.compare_for_gates(
                        self.base, summary, "base.json", thresholds
                    )
            else:  # an older commit: compared at the session's alpha
                key = (analysis, None)
                if key not in self.comparisons:
                    self.comparisons[key] = baseline_module.compare(self.base, summary, label="base.json")
            summary.comparison = self.comparisons[key]
        conclude(summary, thresholds)
        return not summary.passed


@dataclass
class Cell:
    mix: str
    tasks: int
    n: int
    drop: int
    pairs: int
    fails: dict[str, int]
    seconds: float

    def rate(self, name: str) -> float:
        return self.fails[name] / self.pairs


def run_cell(mix: str, tasks: int, n: int, drop: int, pairs: int, seed: int, sets: Sequence[GateSet]) -> Cell:
    rates = rates_for(MIXES[mix], tasks)
    dropped = [max(0.0, p - drop / 100) for p in rates]
    truth = truths(rates, n)
    rng = random.Random(seed)
    fails = {s.name: 0 for s in sets}
    started = time.process_time()
    for _ in range(pairs):
        base = build_summary(records(rng, rates, n))
        end = SessionEnd(base, records(rng, dropped, n), truth)
        for gate_set in sets:
            fails[gate_set.name] += end.fails(gate_set)
    return Cell(mix, tasks, n, drop, pairs, fails, time.process_time() - started)


CELLS = {
    "quick": [("docs", 10, 5), ("all 0.9", 10, 5)],
    "docs": [(mix, t, n) for mix in ("docs", "all 0.5", "all 0.9", "all 0.97") for t in (10, 50, 200) for n in (5, 10)],
}
CELLS["all"] = CELLS["docs"] + [(mix, 5, n) for mix in ("docs", "all 0.5", "all 0.9") for n in (3, 5)]


def pairs_for(tasks: int, pairs: int) -> int:
    """Fewer pairs for the 200-task cells (each pair is 4,000 repetitions): their rates print their own s.e."""
    return pairs if tasks <= 50 else max(200, pairs // 2)


def table(cells: Iterable[Cell], sets: Sequence[GateSet], markdown: bool) -> str:
    cells = list(cells)
    names = [s.name for s in sets]
    lines = []
    head = ["mix", "T", "n", "pairs", *names]
    if markdown:
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * 3 + "---:|" * (len(head) - 3))
    else:
        lines.append("\t".join(head))
    for cell in cells:
        row = [cell.mix, str(cell.tasks), str(cell.n), str(cell.pairs)] + [f"{cell.rate(n):.3f}" for n in names]
        lines.append("| " + " | ".join(row) + " |" if markdown else "\t".join(row))
    return "\n".join(lines)


def _run(args: tuple[Any, ...]) -> Cell:
    return run_cell(*args)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--cells", choices=tuple(CELLS), default="docs")
    parser.add_argument("--power", action="store_true", help="also the drops of 10, 20 and 30 points")
    parser.add_argument("--power-mixes", default="docs,all 0.9", help="the mixes the power tables run")
    parser.add_argument("--power-pairs", type=int, default=300)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--sets", help="comma-separated indexes of the gate sets to run (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="cells run in this many processes at once")
    args = parser.parse_args(argv)
    sets = SETS if not args.sets else tuple(SETS[int(i)] for i in args.sets.split(","))
    drops = (0, *DROPS) if args.power else (0,)
    plan = []
    for drop in drops:
        for mix, tasks, n in CELLS[args.cells]:
            if drop and mix not in args.power_mixes.split(","):
                continue
            pairs = pairs_for(tasks, args.pairs if not drop else args.power_pairs)
            seed = tasks * 1000 + n * 10 + drop + sum(map(ord, mix))
            plan.append((mix, tasks, n, drop, pairs, seed, sets))
    cells = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for cell in pool.map(_run, plan):
            cells.append(cell)
            worst = max(cell.rate(s.name) for s in sets)
            print(
                f"# {cell.mix} T={cell.tasks} n={cell.n} drop={cell.drop}: {cell.pairs} pairs in {cell.seconds:.0f} "
                f"s, highest rate {worst:.3f}",
                file=sys.stderr,
                flush=True,
            )
    for drop in drops:
        chosen = [c for c in cells if c.drop == drop]
        title = (
            "A/A (no change): how often an unchanged agent FAILS"
            if drop == 0
            else f"power: every task's pass rate {drop} points lower; how often the session FAILS"
        )
        print(f"\n{title}\n")
        print(table(chosen, sets, args.markdown))
    print(
        f"\nstandard error at a rate of {ALPHA}: {math.sqrt(ALPHA * (1 - ALPHA) / args.pairs):.4f} ({args.pairs} "
        f"pairs; 200-task cells {math.sqrt(ALPHA * (1 - ALPHA) / pairs_for(200, args.pairs)):.4f}); power cells "
        f"{args.power_pairs} pairs (s.e. at most {math.sqrt(0.25 / args.power_pairs):.3f})"
    )
    if args.json is not None:
        rows = [
            {
                "mix": c.mix,
                "tasks": c.tasks,
                "n": c.n,
                "drop": c.drop,
                "pairs": c.pairs,
                "rates": {s.name: c.rate(s.name) for s in sets},
            }
            for c in cells
        ]
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
