"""xdist gives the same answer as a serial session: the baseline comparison, bound gates, an inconclusive state,
adaptive verdicts.
"""

from __future__ import annotations

from typing import Any

import pytest
from suites import load_report, pattern_suite

STEADY = {f"steady{i}": "PPPPP" for i in range(4)}


BASELINE = {**STEADY, "target": "PPPPP", "flaky": "PFPPF"}


DEGRADED = {**STEADY, "target": "FFFFF", "flaky": "PFPPF"}


def session(pytester: pytest.Pytester, patterns: dict[str, str], *args: str, report: str = "report.json", **kw: Any):  # type: ignore[no-untyped-def]
    pytester.makepyfile(test_task=pattern_suite(patterns, kw.get("answers"), marker=kw.get("marker", "min_pass=0")))
    return pytester.runpytest(f"--consistency-report={report}", *args)


def one_story(ret: int, report: dict[str, Any]) -> None:
    """Exit status, ``summary.passed`` and ``summary.exit_status`` tell one story."""
    summary = report["summary"]
    assert summary["exit_status"] == int(ret), (summary["exit_status"], ret)
    assert summary["passed"] is (int(ret) == 0), (summary["passed"], ret)


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """Every figure and per-task field, without wall-clock values and what a merge legitimately re-decides."""
    summary = {k: v for k, v in report["summary"].items() if k not in ("warnings", "exit_status", "passed", "gates")}
    tasks = []
    for task in report["tasks"]:
        reps = []
        for rep in task["repetitions"]:
            calls = [{k: v for k, v in c.items() if k != "latency_ms"} for c in rep["calls"]]
            reps.append({**rep, "duration": 0, "calls": calls})
        tasks.append({**task, "repetitions": reps})
    return {"summary": summary, "tasks": tasks}


def test_xdist_gives_the_same_comparison_bound_gates_and_inconclusive_state(pytester: pytest.Pytester) -> None:
    session(pytester, BASELINE, report="base.json")
    args = (
        "--consistency-baseline=base.json",
        "--consistency-gate-on=bound",
        "--gap-increase-max=10",
        "--pass-hat-k-min=50",
        "--consistency-regressions-max=1",
    )
    serial = session(pytester, DEGRADED, *args, report="serial.json")
    parallel = session(pytester, DEGRADED, *args, "-n", "2", report="parallel.json")
    s, p = load_report(pytester, "serial.json"), load_report(pytester, "parallel.json")
    one_story(serial.ret, s)
    one_story(parallel.ret, p)
    assert serial.ret == parallel.ret
    assert figures(s) == figures(p) and s["summary"]["gates"] == p["summary"]["gates"]


def test_xdist_gives_the_same_adaptive_verdicts(pytester: pytest.Pytester) -> None:
    patterns = {"solid": "PPPPP", "broken": "FFFFF", "late": "PPPFP", "early": "FPPPP"}
    pytester.makepyfile(test_task=pattern_suite(patterns, marker="min_pass=0.6"))
    serial = pytester.runpytest("--consistency-report=s.json", "--consistency-adaptive")
    parallel = pytester.runpytest("--consistency-report=p.json", "--consistency-adaptive", "-n", "2")
    s, p = load_report(pytester, "s.json"), load_report(pytester, "p.json")
    one_story(serial.ret, s)
    one_story(parallel.ret, p)
    assert serial.ret == parallel.ret == 1
    assert {t["task_id"]: t["verdict"] for t in s["tasks"]} == {t["task_id"]: t["verdict"] for t in p["tasks"]}
