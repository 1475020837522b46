"""``pytest-consistency verify REPORT`` recomputes every sequential decision a report states from the outcomes it
keeps, by the function the session decided with: reports of real sessions (serial, ``-n 2``, with a repetition
budget) verify; a report edited by hand (an outcome flipped, a verdict changed, alpha changed) does not; a report
without what the decisions need is refused with exit status 4.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from suites import cli, pattern_suite

#: n = 40, min_rate 0.8, alpha 0.05: solid PASS at 16, broken FAIL at 3, late FAIL at 12, edge undecided at 29.
PATTERNS = {"solid": "P" * 40, "broken": "F" * 40, "late": "P" * 5 + "F" * 35, "edge": "PPPPF" * 8}


def task(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in report["tasks"] if t["task_id"].endswith(f"[{name}]"))


def edited(path: Path, edit: Any) -> Path:
    report = json.loads(path.read_text())
    edit(report)
    out = path.with_name(f"edited-{path.name}")
    out.write_text(json.dumps(report))
    return out


@pytest.fixture
def reports(pytester: pytest.Pytester) -> Path:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_rate=0.8"))
    pytester.runpytest("--consistency-report=serial.json", "--consistency-sequential", "-p", "no:randomly")
    return pytester.path


@pytest.mark.parametrize(
    "args",
    [[], ["-n", "2"], ["--consistency-repetition-budget=30"], ["-n", "2", "--consistency-repetition-budget=30"]],
    ids=["serial", "xdist", "budget", "xdist-budget"],
)
def test_a_real_sequential_session_verifies(pytester: pytest.Pytester, args: list[str]) -> None:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_rate=0.8"))
    pytester.runpytest("--consistency-report=r.json", "--consistency-sequential", "-p", "no:randomly", *args)
    done = cli("verify", "r.json", cwd=pytester.path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "verified: 4 decisions\n", "")


def test_a_flipped_outcome_fails_verify(reports: Path) -> None:
    def flip(report: dict[str, Any]) -> None:
        task(report, "broken")["repetitions"][1]["outcome"] = "passed"  # F P F: no FAIL at 3 any more

    done = cli("verify", str(edited(reports / "serial.json", flip)), cwd=reports)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "1 of 4 decisions disagree with the report's records:",
        "  test_task.py::test_task[broken]: stated fail (evidence at 3), recomputed no decision (its repetitions "
        "decide none) (tasks)",
    ]


def test_a_changed_verdict_fails_verify(reports: Path) -> None:
    def change(report: dict[str, Any]) -> None:
        task(report, "edge")["verdict"] = "pass"
        task(report, "late")["decided_at"] = 11

    done = cli("verify", str(edited(reports / "serial.json", change)), cwd=reports)
    assert done.returncode == 1
    assert done.stdout.splitlines()[1:] == [
        "  test_task.py::test_task[late]: stated fail (evidence at 11), recomputed fail (evidence at 12) (tasks)",
        "  test_task.py::test_task[edge]: stated pass (cap at 29), recomputed undecided (cap at 29) (tasks)",
    ]


def test_a_changed_alpha_fails_verify(reports: Path) -> None:
    def change(report: dict[str, Any]) -> None:
        report["summary"]["analysis"]["sequential_alpha"] = 0.2
        report["summary"]["sequential"]["alpha"] = 0.2

    done = cli("verify", str(edited(reports / "serial.json", change)), cwd=reports)
    assert done.returncode == 1
    # At 0.2 the processes cross sooner: every decision by evidence moves.
    assert "test_task.py::test_task[solid]: stated pass (evidence at 16), recomputed pass (evidence at " in done.stdout


def test_a_fixed_n_report_and_an_earlier_report_are_refused(pytester: pytest.Pytester, reports: Path) -> None:
    pytester.runpytest("--consistency-report=fixed.json", "-p", "no:randomly")
    done = cli("verify", "fixed.json", cwd=reports)
    assert (done.returncode, done.stdout) == (4, "")
    assert done.stderr.startswith("pytest-consistency verify: error: fixed.json: not a sequential report")

    def drop(report: dict[str, Any]) -> None:
        for found in report["tasks"]:
            del found["decided_at"]

    done = cli("verify", str(edited(reports / "serial.json", drop)), cwd=reports)
    assert done.returncode == 4
    assert "does not say at which repetition its decision was reached (tasks[].decided_at" in done.stderr
    (reports / "old.json").write_text(json.dumps({"schema": "pytest-consistency/report/2", "summary": {}}))
    done = cli("verify", "old.json", cwd=reports)
    assert done.returncode == 4 and "re-run the session with this version" in done.stderr


def rounds_suite(broken: int = 0) -> dict[str, str]:
    """40 tasks at n = 10: every fourth fails every other repetition, the rest always pass; ``broken`` always fail."""
    found = {f"t{i:02d}": ("PF" * 5 if i % 4 == 0 else "P" * 10) for i in range(40)}
    for i in range(broken):
        found[f"t{i:02d}"] = "F" * 10
    return found


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_suite_gates_decided_in_rounds_verify_and_an_edited_round_does_not(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    """Both suite gates of a sequential session (the gap gate and the regression gate with a margin) are recomputed
    from the tasks' outcomes, the seed and the baseline's counts: a real report verifies; one whose round bounds, gate
    state or seed was edited does not."""
    pytester.makepyfile(test_task=pattern_suite(rounds_suite(), marker="k=5"))
    pytester.runpytest("--consistency-report=base.json", "-p", "no:randomly")
    pytester.makepyfile(test_task=pattern_suite(rounds_suite(broken=2), marker="k=5"))
    args = ["--consistency-sequential", "--consistency-gap-max=30", "--consistency-sequential-margin=10"]
    pytester.runpytest(
        "--consistency-report=r.json", "--consistency-baseline=base.json", "-p", "no:randomly", *args, *workers
    )
    report = json.loads((pytester.path / "r.json").read_text())
    assert report["summary"]["sequential_suite"] is not None and report["summary"]["sequential_regression"] is not None
    done = cli("verify", "r.json", cwd=pytester.path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "verified: 42 decisions\n", ""), done.stderr

    def bounds(report: dict[str, Any]) -> None:
        report["summary"]["sequential_suite"]["rounds"][0]["high_pp"] += 1.0

    def state(report: dict[str, Any]) -> None:
        gap = next(g for g in report["summary"]["gates"] if g["name"] == "consistency_gap")
        gap["state"] = "fail" if gap["state"] != "fail" else "pass"

    def seed(report: dict[str, Any]) -> None:
        report["summary"]["analysis"]["sequential_seed"] = 7

    for edit, option in ((bounds, "--consistency-gap-max"), (state, "--consistency-gap-max"), (seed, None)):
        done = cli("verify", str(edited(pytester.path / "r.json", edit)), cwd=pytester.path)
        assert done.returncode == 1, (edit.__name__, done.stdout, done.stderr)
        assert option is None or f"  {option}: stated " in done.stdout, (edit.__name__, done.stdout)
