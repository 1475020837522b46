"""The regression gate in sequential mode needs a margin (``--consistency-sequential-margin``): with one, an
unchanged agent is shown "not worse by the margin" in rounds and stops early, and a large drop fails; without one
the suite-level regression gate is refused, naming the option; a margin needs a baseline."""

from __future__ import annotations

from typing import Any

import pytest
from suites import load_report, pattern_suite


def patterns(tasks: int, broken: int = 0) -> dict[str, str]:
    """Every fourth task fails every other repetition, the rest always pass; the first ``broken`` always fail."""
    found = {f"t{i:03d}": ("PF" * 5 if i % 4 == 0 else "P" * 10) for i in range(tasks)}
    for i in range(broken):
        found[f"t{i:03d}"] = "F" * 10
    return found


def baseline(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(patterns(100)))
    pytester.runpytest("--consistency-report=base.json", "-p", "no:randomly")
    assert load_report(pytester, "base.json")["summary"]["sequential"] is None


def sequential(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--consistency-sequential", "--consistency-baseline=base.json", "-p", "no:randomly", *args
    )


def gate(report: dict[str, Any]) -> dict[str, Any]:
    return next(g for g in report["summary"]["gates"] if g["name"] == "suite_regression_margin")


def test_an_unchanged_agent_passes_with_a_margin_and_stops_early(pytester: pytest.Pytester) -> None:
    baseline(pytester)
    result = sequential(pytester, "--consistency-sequential-margin=10", "--consistency-report=cur.json")
    report = load_report(pytester, "cur.json")
    facts = report["summary"]["sequential_suite"]
    assert gate(report)["state"] == "pass" and facts["verdict"] == "pass" and facts["decided_by"] == "evidence"
    assert facts["repetitions_used"] < 0.6 * facts["cap_repetitions"]  # fewer than a fixed n = 10 run's
    result.stdout.fnmatch_lines(["suite pass rate drop in rounds of k = 1 (alpha 0.05, seed 0): pass, decided after*"])


def test_a_large_drop_fails_the_margin_gate(pytester: pytest.Pytester) -> None:
    baseline(pytester)
    pytester.makepyfile(test_task=pattern_suite(patterns(100, broken=40)))
    sequential(pytester, "--consistency-sequential-margin=10", "--consistency-report=cur.json")
    report = load_report(pytester, "cur.json")
    assert gate(report)["state"] == "fail" and report["summary"]["sequential_suite"]["decided_by"] == "evidence"


def test_the_suite_regression_gate_without_a_margin_is_refused_naming_the_option(pytester: pytest.Pytester) -> None:
    baseline(pytester)
    result = sequential(pytester, "--consistency-suite-regression")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*needs a margin*--consistency-sequential-margin=PP*"])


def test_a_margin_without_a_baseline_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(patterns(3)))
    result = pytester.runpytest("--consistency-sequential", "--consistency-sequential-margin=5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--consistency-sequential-margin gates the drop from a baseline*"])
