"""xdist gives the same answer as a serial session: the baseline comparison, bound gates, an inconclusive state,
adaptive verdicts.
"""

from __future__ import annotations

import pytest
from stories import BASELINE, STEADY, figures, one_story, session
from suites import load_report, pattern_suite

DEGRADED = {**STEADY, "target": "FFFFF", "flaky": "PFPPF"}


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
