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


# --- The suite gap gate in rounds (``--consistency-sequential --consistency-gap-max``) -------------------------------
#
# A suite of T tasks at k = 5: 10 % never pass (p = 0), a flaky share split evenly over p = 0.95, 0.8 and 0.6, the
# rest always pass; the flaky share is set so the suite's true gap is 2, 5, 8, 10, 12, 15 or 20 pp against a
# threshold of 10 pp (the cells at and around the threshold are where errors can happen; "wrong" is FAIL at a true
# gap <= 10 or PASS above it). **fixed n = 10** runs every task 10 times and reads today's gate on its bound
# (:func:`.stats.suite.suite_intervals` at 1 - 2 alpha, as :func:`.analysis.gates.decide`); **sequential** feeds
# the outcomes round by round to :func:`.analysis.suite_sequential.gap_rounds` (the function the plugin skips
# repetitions with and the summary decides with) until it decides or reaches the cap.
SUITE_K = 5
SUITE_THRESHOLD = 10.0
SUITE_GAPS = (2.0, 5.0, 8.0, 10.0, 12.0, 15.0, 20.0)
SUITE_FLAKY = (0.95, 0.8, 0.6)
#: The issue's targets: sequential repetitions over fixed n = 10's, by suite size (20 tasks: no saving expected).
SUITE_TARGETS = {500: 0.6, 100: 1.0}


def suite_rates(tasks: int, gap_pp: float) -> list[float]:
    mean_gap = sum(p - p**SUITE_K for p in SUITE_FLAKY) / len(SUITE_FLAKY)
    flaky = round(gap_pp / 100 / mean_gap * tasks)
    rates = [SUITE_FLAKY[i % len(SUITE_FLAKY)] for i in range(flaky)] + [0.0] * round(0.1 * tasks)
    return rates + [1.0] * (tasks - len(rates))


def suite_truth(rates: list[float]) -> float:
    return 100 * sum(p - p**SUITE_K for p in rates) / len(rates)


def suite_sequential_run(rates: list[float], cap: int, rng: random.Random, seed: int) -> tuple[str, float]:
    """One session: (verdict, repetitions per task); outcomes drawn only for the repetitions a round includes."""
    from pytest_consistency.analysis.suite_sequential import gap_rounds, repetitions_of

    seen: dict[str, dict[int, str]] = {f"t{i:05d}": {} for i in range(len(rates))}
    chance = dict(zip(seen, rates, strict=True))
    while True:
        state = gap_rounds(seen, SUITE_K, cap, SUITE_THRESHOLD, ALPHA, seed)
        if state.verdict is not None:
            return state.verdict, repetitions_of(state.rounds, SUITE_K) / len(rates)
        first = ((state.pending or 1) - 1) * SUITE_K + 1
        for task, chosen in state.pending_included.items():
            if chosen:
                for rep in range(first, first + SUITE_K):
                    seen[task][rep] = "pass" if rng.random() < chance[task] else "fail"


def suite_fixed_run(rates: list[float], n: int, rng: random.Random) -> str:
    from pytest_consistency.stats.metrics import TaskCounts
    from pytest_consistency.stats.suite import suite_intervals

    counts = [TaskCounts(c=sum(rng.random() < p for _ in range(n)), n=n, k=SUITE_K) for p in rates]
    intervals = suite_intervals(counts, 1 - 2 * ALPHA, "suite")
    assert intervals is not None
    if intervals.gap_pp.low > SUITE_THRESHOLD:
        return "fail"
    return "pass" if intervals.gap_pp.high <= SUITE_THRESHOLD else "undecided"


def suite_measure(tasks: int, cap: int, runs: int, seed: int) -> dict[str, dict[str, Cell]]:
    """method -> (true gap, ..., "mix": the cells' plain mean) -> cell."""
    table: dict[str, dict[str, Cell]] = {"fixed": {}, "sequential": {}}
    for gap in SUITE_GAPS:
        rates = suite_rates(tasks, gap)
        truth = suite_truth(rates)
        rng = random.Random(f"{seed}-suite-{tasks}-{gap}")
        cells = {"fixed": Cell(), "sequential": Cell()}
        for run in range(runs):
            verdict, used = suite_sequential_run(rates, cap, rng, seed * 100_003 + run)
            fixed = suite_fixed_run(rates, 10, rng)
            for method, v, u in (("sequential", verdict, used), ("fixed", fixed, 10.0)):
                cell = cells[method]
                cell.passed += v == "pass"
                cell.failed += v == "fail"
                cell.undecided += v == "undecided"
                cell.repetitions += u
                cell.wrong += v == ("fail" if truth <= SUITE_THRESHOLD else "pass")
        for method, cell in cells.items():
            for name in ("passed", "failed", "undecided", "wrong", "repetitions"):
                setattr(cell, name, getattr(cell, name) / runs)
            table[method][f"{truth:.1f}"] = cell
    for cells_of in table.values():
        mix = Cell()
        for cell in cells_of.values():
            for name in ("passed", "failed", "undecided", "wrong", "repetitions"):
                setattr(mix, name, getattr(mix, name) + getattr(cell, name) / len(SUITE_GAPS))
        cells_of["mix"] = mix
    return table


def suite_render(tasks: int, cap: int, table: dict[str, dict[str, Cell]], runs: int) -> list[str]:
    lines = [
        f"suite gap gate, {tasks} tasks, k = {SUITE_K}, threshold {SUITE_THRESHOLD:g} pp, alpha {ALPHA}, "
        f"sequential cap n = {cap}, {runs} sessions per cell",
        "| true gap (pp) | fixed n = 10: PASS / FAIL, wrong | sequential: PASS / FAIL, wrong, mean repetitions |",
        "|---|---|---|",
    ]
    for key, fixed in table["fixed"].items():
        seq = table["sequential"][key]
        lines.append(
            f"| {key} | {fixed.passed:.3f} / {fixed.failed:.3f}, {fixed.wrong:.3f} | {seq.passed:.3f} / "
            f"{seq.failed:.3f}, {seq.wrong:.3f}, {seq.repetitions:.2f} |"
        )
    ratio = table["sequential"]["mix"].repetitions / table["fixed"]["mix"].repetitions
    target = SUITE_TARGETS.get(tasks)
    lines.append(
        f"sequential / fixed n = 10 repetitions: {ratio:.3f}"
        + ("" if target is None else f" (target <= {target})")
        + f"; decided {1 - table['sequential']['mix'].undecided:.3f} against {1 - table['fixed']['mix'].undecided:.3f}"
    )
    return lines


# --- The regression gate with a margin (``--consistency-sequential --consistency-sequential-margin``) ----------------
#
# A baseline of T tasks run at a fixed n = 10 (10 % never pass, 10 % each at 0.95, 0.8 and 0.6, the rest always
# pass), then this run: the same rates (A/A), or every rate scaled so that the suite pass rate drops by the margin
# exactly (the hardest case for a PASS: it would be wrong) or by 10, 20 and 30 pp (power). This run is read in rounds
# of one repetition (cap n = 10) by :func:`.analysis.suite_sequential.drop_rounds` (the function the plugin skips
# with and the summary decides with) with the baseline's bounds of :func:`.stats.suite_sequential.baseline_bounds`.
# A fixed n = 10 run would spend 10 repetitions per task.
REGRESSION_CELLS = {500: 5.0, 100: 10.0}
REGRESSION_TARGETS = {500: 0.4, 100: 0.6}


def regression_rates(tasks: int) -> list[float]:
    rates = [0.0] * round(0.1 * tasks) + [0.95, 0.8, 0.6] * round(0.1 * tasks)
    return rates + [1.0] * (tasks - len(rates))


def regression_run(
    base: list[float], current: list[float], margin: float, rng: random.Random, seed: int
) -> tuple[str, float]:
    from pytest_consistency.analysis.suite_sequential import drop_rounds, repetitions_of
    from pytest_consistency.stats.suite_sequential import baseline_bounds

    counts = [(sum(rng.random() < p for _ in range(10)), 10) for p in base]
    low, high = baseline_bounds(counts, ALPHA / 2)
    estimate = sum(c for c, _ in counts) / (10 * len(counts))
    seen: dict[str, dict[int, str]] = {f"t{i:05d}": {} for i in range(len(current))}
    chance = dict(zip(seen, current, strict=True))
    while True:
        state = drop_rounds(seen, 1, 10, margin, ALPHA, seed, (low, high, estimate))
        if state.verdict is not None:
            return state.verdict, repetitions_of(state.rounds, 1) / len(current)
        for task, chosen in state.pending_included.items():
            if chosen:
                seen[task][state.pending or 1] = "pass" if rng.random() < chance[task] else "fail"


def regression_measure(tasks: int, runs: int, seed: int) -> list[str]:
    margin = REGRESSION_CELLS.get(tasks, 10.0)
    base = regression_rates(tasks)
    mean = sum(base) / len(base)
    lines = [
        f"regression gate with a margin, {tasks} tasks, margin {margin:g} pp, alpha {ALPHA}, baseline fixed n = 10, "
        f"this run capped at n = 10, {runs} sessions per cell",
        "| true drop (pp) | PASS | FAIL | undecided | wrong | mean repetitions | / fixed n = 10 |",
        "|---|---|---|---|---|---|---|",
    ]
    for drop in (0.0, margin, 10.0, 20.0, 30.0):
        current = [p * (mean - drop / 100) / mean for p in base]
        rng = random.Random(f"{seed}-regression-{tasks}-{drop}")
        found = {"pass": 0, "fail": 0, "undecided": 0}
        used = 0.0
        for run in range(runs):
            verdict, spent = regression_run(base, current, margin, rng, seed * 100_003 + run)
            found[verdict] += 1
            used += spent
        # PASS is wrong at a drop of at least the margin, FAIL at a drop of at most it (at the margin both are)
        wrong = (found["pass"] if drop >= margin else 0) + (found["fail"] if drop <= margin else 0)
        lines.append(
            f"| {drop:g} | {found['pass'] / runs:.3f} | {found['fail'] / runs:.3f} | {found['undecided'] / runs:.3f} "
            f"| {wrong / runs:.3f} | {used / runs:.2f} | {used / runs / 10:.3f} |"
        )
    target = REGRESSION_TARGETS.get(tasks)
    if target is not None:
        lines.append(f"target: PASS of the unchanged agent at <= {target}x fixed n = 10's repetitions")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--caps", default="40,10")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--suite", default="", help="suite sizes for the gap gate in rounds, e.g. 500,100,20")
    parser.add_argument("--suite-cap", type=int, default=10)
    parser.add_argument("--regression", default="", help="suite sizes for the regression gate, e.g. 500,100")
    args = parser.parse_args(argv)
    started = time.monotonic()
    if args.regression:
        for tasks in (int(t) for t in args.regression.split(",")):
            print("\n".join(regression_measure(tasks, args.runs, args.seed)), flush=True)
            print()
        print(f"({time.monotonic() - started:.0f} s)")
        return 0
    if args.suite:
        found = {}
        for tasks in (int(t) for t in args.suite.split(",")):
            table = suite_measure(tasks, args.suite_cap, args.runs, args.seed)
            print("\n".join(suite_render(tasks, args.suite_cap, table, args.runs)), flush=True)
            print()
            found[str(tasks)] = {m: {k: asdict(c) for k, c in cells.items()} for m, cells in table.items()}
        print(f"({time.monotonic() - started:.0f} s)")
        if args.json:
            args.json.write_text(json.dumps({"runs": args.runs, "seed": args.seed, "suite": found}, indent=2))
        return 0
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
