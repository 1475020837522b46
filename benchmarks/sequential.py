"""Sequential verdicts against fixed n and today's curtailment: wrong verdicts and repetitions, per task.

    python benchmarks/sequential.py [--runs 4000] [--seed 43] [--caps 40,10] [--markdown] [--json out.json]

Why: issue 43 asks whether deciding each ``min_rate`` task by an anytime-valid test (``--consistency-sequential``)
spends fewer repetitions than today's curtailment (``--consistency-adaptive``) at the same cap without more wrong
verdicts. Three ways of deciding one task with ``min_rate`` 0.8 at the level alpha = 0.05, each through the plugin's
own decision function, fed one repetition at a time as the plugin's board is:

- **fixed n**: all ``cap`` repetitions, then the exact test at n (:func:`.adaptive.verdict_at_n`, the full run's);
- **curtailment**: stop once the remaining repetitions cannot change that verdict (:func:`.adaptive.decided`, the
  function ``--consistency-adaptive`` skips repetitions with); its verdicts are the fixed run's;
- **sequential**: stop at the decision of :func:`.analysis.sequential.task_decision` (the function
  ``--consistency-sequential`` skips repetitions with and the summary decides with): PASS or FAIL by evidence, or
  undecided once the cap can no longer be crossed.

A verdict is wrong when it is PASS for a true rate below 0.8 or FAIL for a rate of at least 0.8 (the meaning of
:mod:`.stats.rate`); undecided is never wrong. Repetitions are counted serially (each starts once the one before
it is known; under xdist a repetition handed out before the decision runs too).

The mix of true pass rates (a suite whose tasks mostly pass, as the suites gated at 0.8 do; documented in
docs/sequential.md): p = 0.5, 0.65, 0.75, 0.8, 0.85, 0.95, 1.0 with weights 5, 5, 10, 10, 15, 25, 30 %. Each
rate is simulated ``--runs`` times (seeded ``random.Random``, so the same command prints the same table); the mix
figures are the weighted means. The sequential rows' exact values (:func:`.stats.sequential.operating`) are
printed beside the simulated ones, as a check that the simulation is the process.

Issue 43's targets are ratios at EQUAL wrong-verdict rate, so the sequential test is also read at the level
alpha_eq at which its wrong-verdict rate on the mix is as close as it gets to fixed n's without exceeding it
(:func:`equal_error`: the largest alpha on a grid 0.0025 apart whose exact mix rate is at most fixed n's exact one,
at alpha = 0.05). Those figures are exact for all three methods (the binomial sum for fixed n, a sum over the count
paths for curtailment and, through :func:`.stats.sequential.operating`, for sequential), so the search has no
simulation noise to chase. A task's verdict there is still valid at alpha_eq, not at 0.05: the comparison says what
the bettor costs per wrong verdict, not which level to run at.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # an older checkout on PYTHONPATH comes first

from pytest_consistency.analysis.adaptive import decided, expected_repetitions, verdict_at_n
from pytest_consistency.analysis.sequential import Outcome, task_decision
from pytest_consistency.stats.sequential import operating

RATE = 0.8
ALPHA = 0.05
#: True pass rate -> its weight in the mix.
MIX = {0.5: 0.05, 0.65: 0.05, 0.75: 0.10, 0.8: 0.10, 0.85: 0.15, 0.95: 0.25, 1.0: 0.30}
METHODS = ("fixed", "curtailment", "sequential")
#: The issue's targets at cap 40: sequential's repetitions over curtailment's and over fixed n's.
TARGETS = {"sequential/curtailment": 0.65, "sequential/fixed": 0.40}


@dataclass
class Cell:
    """One method at one true rate (or the mix): the share of each verdict, the wrong share, mean repetitions."""

    passed: float = 0.0
    failed: float = 0.0
    undecided: float = 0.0
    wrong: float = 0.0
    repetitions: float = 0.0


# One task, one method: the outcomes drawn one at a time until the decision function decides; (verdict, used).
Run = Callable[[Callable[[], bool], int], tuple[str, int]]


def run_fixed(draw: Callable[[], bool], cap: int) -> tuple[str, int]:
    passes = sum(draw() for _ in range(cap))
    return verdict_at_n(passes, cap, 1.0, RATE, ALPHA), cap


def run_curtailment(draw: Callable[[], bool], cap: int) -> tuple[str, int]:
    passes = failures = 0
    while True:
        verdict = decided(passes, failures, cap, 1.0, RATE, ALPHA)
        if verdict is not None:
            return verdict, passes + failures
        if draw():
            passes += 1
        else:
            failures += 1


def run_sequential(draw: Callable[[], bool], cap: int) -> tuple[str, int]:
    outcomes: dict[int, Outcome] = {}
    while True:
        decision = task_decision(outcomes, cap, 1.0, RATE, ALPHA)
        if decision is not None:
            return decision.verdict, len(outcomes)
        outcomes[len(outcomes) + 1] = "pass" if draw() else "fail"


RUNS: dict[str, Run] = {"fixed": run_fixed, "curtailment": run_curtailment, "sequential": run_sequential}


def simulate(method: str, p: float, cap: int, runs: int, seed: int) -> Cell:
    rng = random.Random(f"{seed}-{method}-{p}-{cap}")

    def draw() -> bool:
        return rng.random() < p

    cell = Cell()
    for _ in range(runs):
        verdict, used = RUNS[method](draw, cap)
        cell.passed += verdict == "pass"
        cell.failed += verdict == "fail"
        cell.undecided += verdict == "undecided"
        cell.repetitions += used
    for name in ("passed", "failed", "undecided", "repetitions"):
        setattr(cell, name, getattr(cell, name) / runs)
    cell.wrong = cell.failed if p >= RATE else cell.passed
    return cell


def mixed(cells: dict[float, Cell]) -> Cell:
    out = Cell()
    for p, weight in MIX.items():
        for name in ("passed", "failed", "undecided", "wrong", "repetitions"):
            setattr(out, name, getattr(out, name) + weight * getattr(cells[p], name))
    return out


def measure(cap: int, runs: int, seed: int) -> dict[str, dict[str, Cell]]:
    """method -> ("0.5", ..., "mix") -> cell."""
    table: dict[str, dict[str, Cell]] = {}
    for method in METHODS:
        cells = {p: simulate(method, p, cap, runs, seed) for p in MIX}
        table[method] = {f"{p:g}": cell for p, cell in cells.items()} | {"mix": mixed(cells)}
    return table


def ratios(table: dict[str, dict[str, Cell]]) -> dict[str, float]:
    mix = {method: table[method]["mix"] for method in METHODS}
    return {
        "sequential/curtailment": mix["sequential"].repetitions / mix["curtailment"].repetitions,
        "sequential/fixed": mix["sequential"].repetitions / mix["fixed"].repetitions,
        "curtailment/fixed": mix["curtailment"].repetitions / mix["fixed"].repetitions,
    }


def fixed_exact(cap: int) -> float:
    """Fixed n's exact wrong-verdict rate on the mix at :data:`ALPHA` (a binomial sum over its verdict at n)."""
    wrong = 0.0
    for p, weight in MIX.items():
        for passes in range(cap + 1):
            verdict = verdict_at_n(passes, cap, 1.0, RATE, ALPHA)
            if (verdict == "fail" and p >= RATE) or (verdict == "pass" and p < RATE):
                wrong += weight * math.comb(cap, passes) * p**passes * (1 - p) ** (cap - passes)
    return wrong


def curtailment_exact(cap: int) -> float:
    """Curtailment's exact mean repetitions on the mix (:func:`.adaptive.expected_repetitions`, which the plan
    prices curtailed tasks with)."""
    return sum(weight * expected_repetitions(p, cap, 1.0, RATE, ALPHA) for p, weight in MIX.items())


@dataclass
class Level:
    """The sequential test's exact figures on the mix at one alpha."""

    alpha: float
    wrong: float
    repetitions: float
    decided: float


def sequential_exact(cap: int, alpha: float) -> Level:
    figures = {p: operating(p, cap, RATE, alpha) for p in MIX}
    return Level(
        alpha,
        sum(w * figures[p].wrong(p, RATE) for p, w in MIX.items()),
        sum(w * figures[p].repetitions for p, w in MIX.items()),
        sum(w * (1 - figures[p].undecided) for p, w in MIX.items()),
    )


#: The alphas :func:`equal_error` tries: 0.05 to 0.25, 0.0025 apart.
LEVELS = tuple(round(ALPHA + 0.0025 * i, 4) for i in range(81))


def equal_error(cap: int) -> dict[str, float]:
    """The sequential test at the largest alpha of :data:`LEVELS` whose exact wrong-verdict rate on the mix is at
    most fixed n's at :data:`ALPHA`, beside the nominal one; the repetition ratios are exact."""
    target = fixed_exact(cap)
    curtailment = curtailment_exact(cap)
    nominal = sequential_exact(cap, ALPHA)
    level = max((sequential_exact(cap, a) for a in LEVELS), key=lambda x: (x.wrong <= target, x.alpha))
    if level.wrong > target:  # no level errs as little as fixed n: report the nominal one
        level = nominal
    return {
        "fixed_wrong": target,
        "curtailment_repetitions": curtailment,
        "nominal_wrong": nominal.wrong,
        "nominal_decided": nominal.decided,
        "nominal/curtailment": nominal.repetitions / curtailment,
        "nominal/fixed": nominal.repetitions / cap,
        "alpha_eq": level.alpha,
        "eq_wrong": level.wrong,
        "eq_decided": level.decided,
        "eq/curtailment": level.repetitions / curtailment,
        "eq/fixed": level.repetitions / cap,
    }


def render(cap: int, table: dict[str, dict[str, Cell]], runs: int, markdown: bool) -> list[str]:
    se = math.sqrt(ALPHA * (1 - ALPHA) / runs)
    lines = [
        f"cap {cap}, min_rate {RATE:g}, alpha {ALPHA:g}, {runs} simulated tasks per rate (s.e. of a share near "
        f"alpha: {se:.4f})",
        "",
    ]
    head = ["true rate", "weight"] + [f"{m}: PASS / FAIL / wrong / reps" for m in METHODS] + ["sequential exact"]
    rows = []
    for key in [*(f"{p:g}" for p in MIX), "mix"]:
        row = [key, f"{MIX[float(key)] * 100:g} %" if key != "mix" else "100 %"]
        for method in METHODS:
            c = table[method][key]
            row.append(f"{c.passed:.3f} / {c.failed:.3f} / {c.wrong:.4f} / {c.repetitions:.1f}")
        if key == "mix":
            exact = [operating(p, cap, RATE, ALPHA) for p in MIX]
            reps = sum(w * o.repetitions for w, o in zip(MIX.values(), exact, strict=True))
            wrong = sum(w * o.wrong(p, RATE) for (p, w), o in zip(MIX.items(), exact, strict=True))
        else:
            o = operating(float(key), cap, RATE, ALPHA)
            reps, wrong = o.repetitions, o.wrong(float(key), RATE)
        row.append(f"wrong {wrong:.4f}, reps {reps:.1f}")
        rows.append(row)
    if markdown:
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        lines += ["| " + " | ".join(row) + " |" for row in rows]
    else:
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in [head, *rows]]
    lines.append("")
    for name, value in ratios(table).items():
        target = TARGETS.get(name) if cap == 40 else None
        verdict = "" if target is None else f" (target <= {target:g}: {'met' if value <= target else 'NOT met'})"
        lines.append(f"repetitions {name}: {value:.3f}{verdict}")
    mix = {method: table[method]["mix"] for method in METHODS}
    lines.append(
        "wrong verdicts on the mix: "
        + ", ".join(f"{method} {mix[method].wrong:.4f}" for method in METHODS)
        + "; decided: "
        + ", ".join(f"{method} {1 - mix[method].undecided:.3f}" for method in METHODS)
    )
    lines.append(
        "repetitions per decided verdict: "
        + ", ".join(
            f"{method} {mix[method].repetitions / (1 - mix[method].undecided):.1f}"
            if mix[method].undecided < 1
            else f"{method} -"
            for method in METHODS
        )
    )
    eq = equal_error(cap)
    lines.append(
        f"exact, at alpha {ALPHA:g}: sequential wrong {eq['nominal_wrong']:.4f} (fixed n {eq['fixed_wrong']:.4f}), "
        f"decided {eq['nominal_decided']:.3f}, repetitions sequential/curtailment {eq['nominal/curtailment']:.3f}, "
        f"sequential/fixed {eq['nominal/fixed']:.3f}"
    )
    lines.append(
        f"exact, at equal wrong-verdict rate (sequential alpha {eq['alpha_eq']:g}): sequential wrong "
        f"{eq['eq_wrong']:.4f}, decided {eq['eq_decided']:.3f}, repetitions sequential/curtailment "
        f"{eq['eq/curtailment']:.3f}, sequential/fixed {eq['eq/fixed']:.3f}"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--caps", default="40,10")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    started = time.monotonic()
    everything = {}
    for cap in (int(c) for c in args.caps.split(",")):
        table = measure(cap, args.runs, args.seed)
        print("\n".join(render(cap, table, args.runs, args.markdown)), flush=True)
        print()
        everything[str(cap)] = {
            "cells": {m: {k: asdict(c) for k, c in cells.items()} for m, cells in table.items()},
            "ratios": ratios(table),
            "equal_error": equal_error(cap),
        }
    print(f"({time.monotonic() - started:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "seed": args.seed, "caps": everything}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
