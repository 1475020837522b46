"""Gates on the point and on the bound: pass, fail and inconclusive, and nothing passes by accident."""

from __future__ import annotations

from dataclasses import replace

import pytest
from suites import records

from pytest_consistency.analysis.gates import (
    ALL_GATES,
    BY_DEST,
    CAUSE_GATES,
    CAUSE_OPTION,
    CAUSE_WORDS,
    GATES,
    decide,
    thresholds_of,
)
from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.config.options import GATE_OPTIONS
from pytest_consistency.model.cause import CAUSES
from pytest_consistency.model.result import Analysis, SessionSummary
from pytest_consistency.stats.interval import Interval

GAP = BY_DEST["consistency_gap_max"]
PASS_HAT = BY_DEST["pass_hat_k_min"]


def summary(
    gap: float | None, low: float, high: float, gate_on: str = "bound", inconclusive: str = "fail"
) -> SessionSummary:
    base = build_summary(
        records({"a": "PPFPP", "b": "PPPPP"}), analysis=Analysis(gate_on=gate_on, inconclusive=inconclusive)
    )  # type: ignore[arg-type]
    assert base.intervals is not None
    return replace(base, consistency_gap_pp=gap, intervals=replace(base.intervals, gap_pp=Interval(low, high)))


def test_every_gate_is_an_option_declared_once() -> None:
    assert [o.dest for o in GATE_OPTIONS] == [g.dest for g in GATES] + [CAUSE_OPTION]
    assert len({g.flag for g in ALL_GATES}) == len(ALL_GATES)


def test_one_cause_gate_per_cause_under_one_option() -> None:
    assert CAUSE_WORDS == CAUSES
    assert [g.flag for g in CAUSE_GATES] == [f"--consistency-cause-max={cause}" for cause in CAUSES]
    assert [o.flag for o in GATE_OPTIONS if o.dest == CAUSE_OPTION] == ["--consistency-cause-max"]
    thresholds = thresholds_of({CAUSE_OPTION: (("input", 0.0), ("route", 2.5))}.get)
    assert {dest: t for dest, t in thresholds.items() if t is not None} == {
        "cause_input_max": 0.0,
        "cause_route_max": 2.5,
    }


@pytest.mark.parametrize(
    ("low", "high", "state"),
    [
        (2.0, 9.0, "pass"),
        (13.0, 20.0, "fail"),
        (8.0, 16.0, "inconclusive"),
        (5.0, 12.0, "pass"),
        (12.0, 14.0, "inconclusive"),
    ],
)
def test_a_max_gate_on_the_bound(low: float, high: float, state: str) -> None:
    result = decide(GAP, summary((low + high) / 2, low, high), 12.0)
    assert result.state == state and result.on == "bound"
    assert result.passed is (state == "pass")


def test_an_inconclusive_gate_says_how_many_more_repetitions_and_follows_the_policy() -> None:
    failing = decide(GAP, summary(10.0, 6.0, 14.0), 12.0)
    assert failing.state == "inconclusive" and not failing.passed
    assert failing.more_repetitions is not None and failing.more_repetitions > 0
    tolerant = decide(GAP, summary(10.0, 6.0, 14.0, inconclusive="pass"), 12.0)
    assert tolerant.state == "inconclusive" and tolerant.passed


def test_point_mode_ignores_the_interval() -> None:
    result = decide(GAP, summary(10.0, 6.0, 14.0, gate_on="point"), 12.0)
    assert result.state == "pass" and result.on == "point" and result.interval is None


def test_a_min_gate_on_the_bound_needs_the_lower_bound_above() -> None:
    base = summary(10.0, 6.0, 14.0)
    assert base.intervals is not None
    s = replace(base, pass_hat_k=0.9, intervals=replace(base.intervals, pass_hat_k=Interval(0.85, 0.95)))
    assert decide(PASS_HAT, s, 80.0).state == "pass"
    assert decide(PASS_HAT, s, 90.0).state == "inconclusive"
    assert decide(PASS_HAT, s, 96.0).state == "fail"


def test_an_unmeasurable_gate_fails_in_both_modes() -> None:
    for mode in ("point", "bound"):
        result = decide(GAP, summary(None, 0.0, 0.0, gate_on=mode), 50.0)
        assert result.state == "fail" and not result.passed and result.value is None


def test_comparison_gates_without_a_baseline_fail_rather_than_pass() -> None:
    s = conclude(build_summary(records({"a": "PPPPP"})), {"consistency_regressions_max": 0, "gap_increase_max": 5})
    assert [g.state for g in s.gates] == ["fail", "fail"] and not s.passed
