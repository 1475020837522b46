"""Sequential decisions serially and with ``-n 4``: the same decisions, and what the workers cost in repetitions.

    python benchmarks/sequential_workers.py [--tasks 8] [--cap 40] [--seed 43] [--workers 4] [--json out.json]

Why: issue 43 asks for "decided-wrong <= alpha in every cell of the benchmark ... serially and with -n 4". The
decisions are read along the repetition numbers (:func:`pytest_consistency.analysis.sequential.task_decision`), so
they cannot depend on the worker count; this measures it on real pytest sessions instead of arguing it. One
suite, ``--tasks`` tasks per cell of ``benchmarks/sequential.py``'s mix (true pass rates 0.5 ... 1.0), each a test
body that passes with its cell's probability from a seeded RNG keyed by the task and the repetition number (no
network, no model: the outcome of repetition i of a task is the same in every session). The suite runs twice with
``--consistency-sequential`` (``min_rate`` 0.8, cap ``--cap``): serially and with ``-n WORKERS``. Per cell it
prints whether every task's decision (verdict, ``decided_by``, ``decided_at``) is identical, the wrong decisions
(a PASS below 0.8 or a FAIL at or above it), and the repetitions each session ran: the ``-n`` overrun is
repetitions handed out to a worker before their task was decided. Both reports are then checked by
``pytest-consistency verify``.

The per-cell error rates themselves are the simulation's (``benchmarks/sequential.py``, 4,000 tasks per rate):
a handful of real tasks per cell cannot measure a rate of 0.05; what this adds is that ``-n 4`` decides exactly as
the serial run does, so it inherits the simulation's rates.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RATE = 0.8
#: The cells of benchmarks/sequential.py's mix (its weights do not matter here: every cell is reported).
RATES = (0.5, 0.65, 0.75, 0.8, 0.85, 0.95, 1.0)

SUITE = """
import random

import pytest

SEED = {seed}
TASKS = {tasks}


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.repeat_consistency(n={cap}, min_rate={rate})
def test_task(task, consistency):
    rate = float(task.split("-")[0][1:])
    # Seeded by the task and the repetition number: the same outcome in every session, whichever worker runs it.
    assert random.Random(f"{{SEED}}:{{task}}:{{consistency.repeat}}").random() < rate
"""


def session(directory: Path, report: str, *args: str) -> float:
    started = time.perf_counter()
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    subprocess.run(
        [*command, "--consistency-sequential", f"--consistency-report={report}", *args],
        cwd=directory,
        capture_output=True,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    return time.perf_counter() - started


def decisions(path: Path) -> dict[str, tuple[str, str | None, int | None, int]]:
    """Each task's (verdict, decided_by, decided_at, repetitions run), by its parameter."""
    report = json.loads(path.read_text())
    return {
        t["task_id"].split("[")[1].rstrip("]"): (t["verdict"], t["decided_by"], t["decided_at"], t["scored"])
        for t in report["tasks"]
    }


def wrong(rate: float, verdict: str) -> bool:
    return (verdict == "pass" and rate < RATE) or (verdict == "fail" and rate >= RATE)


def verify(directory: Path, report: str) -> str:
    command = Path(sys.executable).with_name("pytest-consistency")
    done = subprocess.run([str(command), "verify", report], cwd=directory, capture_output=True, text=True)
    return (done.stdout or done.stderr).strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=8, help="tasks per cell (default 8)")
    parser.add_argument("--cap", type=int, default=40)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    names = [f"p{rate}-t{i}" for rate in RATES for i in range(args.tasks)]
    with tempfile.TemporaryDirectory(prefix="sequential-workers-") as temporary:
        directory = Path(temporary)
        (directory / "test_cells.py").write_text(SUITE.format(seed=args.seed, tasks=names, cap=args.cap, rate=RATE))
        serial_wall = session(directory, "serial.json")
        parallel_wall = session(directory, "parallel.json", "-n", str(args.workers))
        serial, parallel = decisions(directory / "serial.json"), decisions(directory / "parallel.json")
        checked = {name: verify(directory, f"{name}.json") for name in ("serial", "parallel")}
    rows: list[dict[str, Any]] = []
    for rate in RATES:
        cell = [name for name in names if name.startswith(f"p{rate}-")]
        rows.append(
            {
                "rate": rate,
                "tasks": len(cell),
                "identical": all(serial[n][:3] == parallel[n][:3] for n in cell),
                "pass": sum(serial[n][0] == "pass" for n in cell),
                "fail": sum(serial[n][0] == "fail" for n in cell),
                "undecided": sum(serial[n][0] == "undecided" for n in cell),
                "wrong_serial": sum(wrong(rate, serial[n][0]) for n in cell),
                "wrong_parallel": sum(wrong(rate, parallel[n][0]) for n in cell),
                "repetitions_serial": sum(serial[n][3] for n in cell),
                "repetitions_parallel": sum(parallel[n][3] for n in cell),
            }
        )
    used = {key: sum(row[f"repetitions_{key}"] for row in rows) for key in ("serial", "parallel")}
    workers = f"-n {args.workers}"
    print(f"{len(names)} tasks ({args.tasks} per cell), cap {args.cap}, min_rate {RATE}, seed {args.seed}")
    print(
        f"| true rate | tasks | pass / fail / undecided | identical serial and {workers} | wrong (serial, {workers}) "
        f"| repetitions serial | {workers} | overrun |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        overrun = row["repetitions_parallel"] / row["repetitions_serial"]
        print(
            f"| {row['rate']} | {row['tasks']} | {row['pass']} / {row['fail']} / {row['undecided']} | "
            f"{'yes' if row['identical'] else 'NO'} | {row['wrong_serial']}, {row['wrong_parallel']} | "
            f"{row['repetitions_serial']} | {row['repetitions_parallel']} | {overrun:.2f}x |"
        )
    print(
        f"all: {used['serial']} repetitions serially, {used['parallel']} with {workers} "
        f"({used['parallel'] / used['serial']:.2f}x; cap's fixed run {len(names) * args.cap}); wall "
        f"{serial_wall:.1f} s and {parallel_wall:.1f} s; verify: serial {checked['serial']!r}, "
        f"{workers} {checked['parallel']!r}"
    )
    if args.json is not None:
        args.json.write_text(json.dumps({"rows": rows, "used": used, "verify": checked}, indent=2) + "\n")
    return 0 if all(row["identical"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
