"""Regression gating in real sessions: intervals, gates on the bound, baselines, adaptive repetitions, xdist.

Each case runs serially; that xdist gives the same intervals, comparison, gates and adaptive verdicts is
``test_xdist_gives_the_same_intervals_and_comparison`` here and tests/integration/plugin/test_xdist_same_answer.py.

Each test runs inner pytest sessions (pytester) from :func:`suites.pattern_suite`, whose repetitions pass or fail
on a fixed pattern, so every figure, p-value and verdict is known in advance.
"""

from __future__ import annotations

import pytest
from suites import consistency_section, load_report, pattern_suite, without_timings

STEADY = {f"steady{i}": "PPPPP" for i in range(5)}
BASELINE = {**STEADY, "target": "PPPPP", "flaky": "PFPPF"}
DEGRADED = {**STEADY, "target": "FFFFF", "flaky": "PFPPF"}


def session(pytester: pytest.Pytester, patterns: dict[str, str], *args: str, report: str = "report.json"):  # type: ignore[no-untyped-def]
    pytester.makepyfile(test_task=pattern_suite(patterns, marker="min_pass=0"))
    return pytester.runpytest(f"--consistency-report={report}", *args)


def test_intervals_are_shown_and_reported(pytester: pytest.Pytester) -> None:
    result = session(pytester, {"a": "PPPPP", "b": "PPPPF"})
    section = "\n".join(consistency_section(result))
    assert "5/5        -  [47.8, 100.0]" in section and "4/5        -  [28.4, 99.5]" in section
    assert "intervals: 95 % confidence, for this suite of tasks (repetition noise only)" in section
    report = load_report(pytester)
    a, b = report["tasks"]
    assert a["pass_rate_interval"]["low"] == pytest.approx(0.478, abs=1e-3) and a["pass_rate_interval"]["high"] == 1
    assert b["pass_hat_k_interval"]["low"] == pytest.approx(0.284**5, rel=1e-2)
    gap = report["summary"]["intervals"]["gap_pp"]
    assert gap["low"] <= report["summary"]["consistency_gap_pp"] <= gap["high"]


def test_a_gate_straddled_by_its_bounds_is_undecided_and_fails_only_when_counted_so(pytester: pytest.Pytester) -> None:
    patterns = {**STEADY, "flaky": "PFPPF"}
    result = session(pytester, patterns, "--consistency-gap-max=12", "--consistency-inconclusive=fail")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "gate --consistency-gap-max: consistency gap 10.0 pp, one-sided bounds * hold 12.0 pp  UNDECIDED (level "
            "0.05; with k = n, more repetitions raise k too and the interval does not narrow: pin k "
            "(repeat_consistency(n=..., k=5)) and plan a fresh run at n = * per task, which would likely decide it; "
            "counted as a failure: --consistency-inconclusive=fail)"
        ]
    )
    gate = load_report(pytester)["summary"]["gates"][0]
    assert (gate["state"], gate["passed"], gate["on"]) == ("undecided", False, "bound")
    assert gate["plan_n"] > 5 and gate["level"] == 0.05
    assert load_report(pytester)["summary"]["passed"] is False

    result = session(pytester, patterns, "--consistency-gap-max=12")  # the default: fail only on evidence
    assert result.ret == 0
    assert load_report(pytester)["summary"]["gates"][0]["state"] == "undecided"
    assert load_report(pytester)["summary"]["passed"] is True


def test_on_the_point_the_same_gate_passes(pytester: pytest.Pytester) -> None:
    result = session(pytester, {**STEADY, "flaky": "PFPPF"}, "--consistency-gap-max=10", "--consistency-gate-on=point")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["gate --consistency-gap-max: consistency gap 10.0 pp <= 10.0 pp  ok"])


def test_a_degraded_task_is_a_significant_regression_against_the_baseline(pytester: pytest.Pytester) -> None:
    assert session(pytester, BASELINE, report="base.json").ret == 0
    result = session(pytester, DEGRADED, "--consistency-baseline=base.json", "--consistency-regressions-max=0")
    assert result.ret == 1
    # two statistical gates (the regression count and the suite-level test, on with a baseline): each at 0.05 / 2
    result.stdout.fnmatch_lines(
        [
            "baseline base.json: 7 tasks in both runs; 1 significant regression(s) (boschloo, one-sided, "
            "Benjamini-Hochberg q <= 0.025)",
            "  test_task.py::test_task[target]: newly failing 5/5 -> 0/5  p = 0.000977, q = 0.00684  REGRESSION",
            "gate --consistency-regressions-max: consistency regressions 1 > 0  FAILED (level 0.025 = 0.05 / 2 gates "
            "(Bonferroni))",
        ]
    )
    comparison = load_report(pytester)["summary"]["comparison"]
    target = next(t for t in comparison["tasks"] if t["task_id"].endswith("[target]"))
    assert target["regression"] and target["p_value"] == pytest.approx(0.5**10)
    assert comparison["minimum_detectable_drop"] == 4  # at the gates' level, 0.025: Boschloo sees a drop of 4 of 5


def test_two_runs_of_the_same_agent_never_regress(pytester: pytest.Pytester) -> None:
    assert session(pytester, BASELINE, report="base.json").ret == 0
    result = session(
        pytester,
        BASELINE,
        "--consistency-baseline=base.json",
        "--consistency-regressions-max=0",
        "--gap-increase-max=0",
    )
    assert result.ret == 0, result.stdout.str()
    summary = load_report(pytester)["summary"]
    assert summary["comparison"]["regressions"] == 0 and summary["comparison"]["gap_change_pp"] == 0
    # no evidence of a regression; "the gap grew by at most 0" is not shown by 7 tasks, so that gate is undecided
    states = {g["option"]: g["state"] for g in summary["gates"]}
    assert states == {
        "--consistency-regressions-max": "pass",
        "--gap-increase-max": "undecided",
        "--consistency-suite-regression": "pass",
    }


def test_an_unreadable_baseline_is_an_error_that_names_it(pytester: pytest.Pytester) -> None:
    (pytester.path / "base.json").write_text('{"schema": "pytest-consistency/report/2", "summary": {}}')
    result = session(pytester, BASELINE, "--consistency-baseline=base.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["error: --consistency-baseline: *base.json: schema 'pytest-consistency/report/2'*"])
    result = session(pytester, BASELINE, "--consistency-baseline=missing.json")
    result.stdout.fnmatch_lines(["error: --consistency-baseline: *missing.json does not exist*"])
    assert result.ret == 1


def test_adaptive_repetitions_keep_every_verdict_with_fewer_repetitions(pytester: pytest.Pytester) -> None:
    patterns = {"solid": "PPPPP", "broken": "FFFFF", "late": "PPPFP"}
    pytester.makepyfile(test_task=pattern_suite(patterns))  # min_pass 1.0: a failure decides the task
    full = pytester.runpytest("--consistency-report=full.json")
    adaptive = pytester.runpytest("--consistency-report=adaptive.json", "--consistency-adaptive")
    assert full.ret == adaptive.ret == 1
    verdicts = {t["task_id"]: t["verdict"] for t in load_report(pytester, "full.json")["tasks"]}
    report = load_report(pytester, "adaptive.json")
    assert {t["task_id"]: t["verdict"] for t in report["tasks"]} == verdicts
    used = {t["task_id"].split("[")[1][:-1]: t["scored"] for t in report["tasks"]}
    # serially the order is fixed: broken stops after 1, late after its first failure (4); xdist gives the same
    # verdicts (tests/integration/plugin/test_xdist_same_answer.py::test_xdist_gives_the_same_adaptive_verdicts)
    assert used == {"solid": 5, "broken": 1, "late": 4}
    assert report["summary"]["adaptive"]["repetitions_saved"] == 5
    adaptive.stdout.fnmatch_lines(["*adaptive (n_min 1): * task(s) stopped early once their verdict was decided*"])


def test_adaptive_respects_n_min_and_refuses_figure_gates(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite({"broken": "FFFFF"}))
    pytester.runpytest("--consistency-report=report.json", "--consistency-adaptive", "--consistency-n-min=3")
    assert load_report(pytester)["tasks"][0]["scored"] == 3
    result = pytester.runpytest("--consistency-adaptive", "--consistency-gap-max=10")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--consistency-adaptive stops a task once*--consistency-gap-max would gate on them*"])


def test_xdist_gives_the_same_intervals_and_comparison(pytester: pytest.Pytester) -> None:
    session(pytester, BASELINE, report="base.json")
    args = ("--consistency-baseline=base.json", "--consistency-gap-max=20")
    session(pytester, DEGRADED, *args, report="serial.json")
    session(pytester, DEGRADED, *args, "-n", "2", report="parallel.json")
    serial, parallel = load_report(pytester, "serial.json"), load_report(pytester, "parallel.json")
    assert without_timings(serial) == without_timings(parallel)
