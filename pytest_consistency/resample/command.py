"""``python -m pytest_consistency.resample TASK``: bisect a task's trajectory with resample sessions.

Why a command of its own (and not an option of one session): each probe is a whole resample session (its samples
must finish before the next step is chosen), so the search drives ``pytest`` once per probed step, each time with
``--consistency-resample=TASK@STEP`` and a JSON report of its own, and reads the ``resample`` section back. The
search itself is :func:`.bisect.bisect`; what "reproduces" means is defined there.

Every probe's samples land in their own cassettes, so a bisection run once live (``-- --consistency-record=once``
with the route's key) replays offline afterwards, probe for probe.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_consistency.analysis.resample.bisect import Bisection, bisect
from pytest_consistency.resample.plan import NOT_COLLECTED, NOT_MARKED

PROG = "python -m pytest_consistency.resample"


#: pytest's exit status for a usage error (``pytest.ExitCode.USAGE_ERROR``; pytest is not imported here).
USAGE_ERROR = 4


class ProbeError(RuntimeError):
    """A probe session could not be run or read; the message says which step and why."""


class ArgumentError(ProbeError):
    """The probe session refused the command's own arguments (TASK, ``--from``): said in the command's terms."""


def refusal(stderr: str, task: str, step: int, source: int) -> str | None:
    """The usage error a probe session printed (pytest's ``ERROR: ...`` line), in the command's terms when it is
    about TASK or ``--from`` (the session names the options the command passed it); None without one."""
    found = [line[len("ERROR: ") :] for line in stderr.splitlines() if line.startswith("ERROR: ")]
    if not found:
        return None
    text = found[0]
    about_task, about_source = f"--consistency-resample={task}@{step}: ", f"--consistency-resample-from={source}: "
    if text.startswith(about_task):
        body = text[len(about_task) :]
        if body.startswith(NOT_COLLECTED) or NOT_MARKED in body.split(" (", 1)[0]:
            return "TASK: " + body
    if text.startswith(about_source):
        return f"--from {source}: " + text[len(about_source) :]
    return f"step {step}: the resample session exited {USAGE_ERROR} (a usage error): {text}"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Find the step whose resampling alone reproduces TASK's inconsistency: resample sessions for the "
        "steps a binary search asks about, each reporting whether its samples both pass and fail.",
        epilog="Arguments after -- go to every pytest session (paths, --consistency-config, "
        "--consistency-record=once to sample live). See docs/trajectory.md.",
    )
    p.add_argument("task", help="the task id as the report prints it")
    p.add_argument("-n", "--samples", type=int, default=10, metavar="M", help="samples per probed step (default 10)")
    p.add_argument("--from", dest="source", type=int, default=1, metavar="REP", help="the repetition (default 1)")
    p.add_argument("--reports", metavar="DIR", help="keep each probe's JSON report in DIR (default: a temporary dir)")
    return p


def run_probe(
    task: str, step: int, samples: int, source: int, report: Path, pytest_args: Sequence[str]
) -> dict[str, Any]:
    """One resample session; its report's ``resample`` section."""
    command = [sys.executable, "-m", "pytest", *pytest_args, f"--consistency-resample={task}@{step}"]
    command += [f"--consistency-resample-n={samples}", f"--consistency-resample-from={source}"]
    command += [f"--consistency-report={report}", "-p", "no:cacheprovider", "-q"]
    done = subprocess.run(command, capture_output=True, text=True)
    section = None
    if report.is_file():
        section = json.loads(report.read_text(encoding="utf-8")).get("summary", {}).get("resample")
    refused = refusal(done.stderr, task, step, source) if done.returncode == USAGE_ERROR else None
    if refused is not None:
        raise ArgumentError(refused)
    if section is None:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-12:]
        raise ProbeError(f"step {step}: the resample session exited {done.returncode}:\n" + "\n".join(tail))
    if section.get("errors"):
        raise ProbeError(f"step {step}: some samples did not run to an outcome: " + "; ".join(section["errors"]))
    if int(section.get("steps") or 0) < step:  # a session that wrote a section for no recorded step: never bisected
        raise ProbeError(f"step {step}: the resample session reports {section.get('steps')} recorded step(s)")
    return dict(section)


def reproduces(section: dict[str, Any]) -> bool:
    """Both a pass and a failure among the scored samples (as ``ResampleSummary.reproduces``)."""
    counted = sum(int(row["samples"]) for row in section["rows"])
    passed = sum(int(row["passed"]) for row in section["rows"])
    return 0 < passed < counted


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser().parse_args(argv[:split])
    args.pytest_args = argv[split + 1 :]
    if args.samples < 2:
        print(f"{PROG}: -n {args.samples}: at least 2 samples are needed to see a pass and a failure", file=sys.stderr)
        return 2
    reports = Path(args.reports) if args.reports else Path(tempfile.mkdtemp(prefix="consistency-bisect-"))
    reports.mkdir(parents=True, exist_ok=True)
    sections: dict[int, dict[str, Any]] = {}

    def probe(step: int) -> bool:
        if step not in sections:
            path = reports / f"resample-step-{step}.json"
            sections[step] = run_probe(args.task, step, args.samples, args.source, path, args.pytest_args)
            rows = ", ".join(f"{r['label']} {r['passed']}/{r['samples']}" for r in sections[step]["rows"])
            print(f"step {step}: {'reproduces' if reproduces(sections[step]) else 'settled'} ({rows})", flush=True)
        return reproduces(sections[step])

    try:
        probe(1)
        found: Bisection = bisect(int(sections[1]["steps"]), probe)
    except ProbeError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    print(found.sentence())
    return 0 if found.step is not None else 1
