"""Baseline comparison: classification, exact per-task tests with Benjamini–Hochberg, confounding, route changes."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from suites import records

from pytest_consistency.analysis.baseline import compare
from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.result import Analysis, RouteSettings, RunFacts, SessionSummary
from pytest_consistency.stats.significance import mcnemar_one_sided

STEADY = {f"s{i}": "PPPPP" for i in range(4)}


def run(patterns: dict[str, str], test: str = "boschloo") -> SessionSummary:
    return build_summary(records(patterns), analysis=Analysis(test=test))  # type: ignore[arg-type]


def change(comparison, task_id):  # type: ignore[no-untyped-def]
    return next(c for c in comparison.tasks if c.task_id == task_id)


def test_a_drop_from_5_of_5_to_0_of_5_among_five_tasks_is_a_regression_with_its_p_value() -> None:
    result = compare(run({**STEADY, "t": "PPPPP"}), run({**STEADY, "t": "FFFFF"}), "base.json")
    t = change(result, "t")
    assert t.status == "newly failing" and t.regression
    assert t.p_value == pytest.approx(0.5**10, rel=1e-9)  # Boschloo: the worst nuisance value is 1/2
    assert t.q_value == pytest.approx(t.p_value * 5)  # BH: smallest of five p-values, times five
    assert result.regressions == 1 and result.flips_worse == 1 and result.flips_better == 0


def test_a_drop_from_5_of_5_to_1_of_5_is_significant_alone_but_not_among_five() -> None:
    alone = compare(run({"t": "PPPPP"}), run({"t": "PFFFF"}), "base.json")
    assert change(alone, "t").p_value == pytest.approx(0.01074, abs=1e-5) and change(alone, "t").regression
    among = compare(run({**STEADY, "t": "PPPPP"}), run({**STEADY, "t": "PFFFF"}), "base.json")
    assert change(among, "t").q_value == pytest.approx(0.0537, abs=1e-4) and not change(among, "t").regression


def test_fisher_is_more_conservative_on_the_same_counts() -> None:
    result = compare(run({"t": "PPPPP"}, "fisher"), run({"t": "PPFFF"}, "fisher"), "base")
    assert change(result, "t").p_value == pytest.approx(0.083, abs=1e-3)
    assert not change(result, "t").regression and result.minimum_detectable_drop == 4
    boschloo = compare(run({"t": "PPPPP"}), run({"t": "PPFFF"}), "base")
    assert change(boschloo, "t").p_value == pytest.approx(0.0309, abs=1e-4) and change(boschloo, "t").regression
    assert boschloo.minimum_detectable_drop == 3


def test_benjamini_hochberg_keeps_a_lone_borderline_drop_among_many_tasks_unflagged() -> None:
    steady = {f"s{i}": "PPPPP" for i in range(19)}
    result = compare(run({**steady, "t": "PPPPP"}), run({**steady, "t": "PPFFF"}), "base")
    assert change(result, "t").p_value == pytest.approx(0.0309, abs=1e-4)
    assert not change(result, "t").regression and result.regressions == 0


def test_identical_runs_never_regress() -> None:
    patterns = {**STEADY, "f": "PFPFP", "z": "FFFFF"}
    result = compare(run(patterns), run(patterns), "base")
    assert result.regressions == 0 and result.gap_change_pp == 0
    assert {c.status for c in result.tasks} == {"unchanged", "still flaky"}
    assert result.gap_change_interval is not None and result.gap_change_interval.contains(0.0)


@pytest.mark.parametrize(
    ("before", "after", "status"),
    [
        ("PPPPP", "PFPPP", "newly failing"),  # min_pass 1: a failure fails the task
        ("PFPPP", "PPPPP", "recovered"),
        ("PFPFP", "FPFPP", "still flaky"),
        ("FFFFF", "FFFFF", "unchanged"),
        ("PPPPP", "PPPPP", "unchanged"),
        ("FFFFF", "FPFFF", "newly flaky"),
    ],
)
def test_classification(before: str, after: str, status: str) -> None:
    assert change(compare(run({"t": before}), run({"t": after}), "b"), "t").status == status


def test_new_and_removed_tasks() -> None:
    result = compare(run({"old": "PPPPP", "both": "PPPPP"}), run({"both": "PPPPP", "new": "PPPPP"}), "b")
    assert change(result, "old").status == "removed" and change(result, "new").status == "new"
    assert result.common_tasks == 1


def test_route_drift_marks_a_task_confounded_and_route_changes_are_listed() -> None:
    route = RouteSettings("http://a/v1", "m", "sha256:1", "K", False, 60.0, 1, 0.0, None, 1)
    base_reps = records({"t": "PPPPP"})
    now_reps = records({"t": "PFFFF"})
    for i, rep in enumerate(now_reps):
        model = "m" if i else "m-fallback"
        rep.calls = [CallRecord("POST", "http://a/v1/chat", "http://a/v1", "sha256:1", "m", model, status=200)]
    baseline = build_summary(base_reps, run=RunFacts(route=route))
    current = build_summary(now_reps, run=RunFacts(route=replace(route, model="m2", temperature=0.7)))
    result = compare(baseline, current, "b")
    t = change(result, "t")
    assert t.regression and t.confounded
    assert "model: m -> m2" in result.route_changes and "temperature: 0.0 -> 0.7" in result.route_changes


def test_a_baseline_that_shares_no_task_says_it_is_another_suites() -> None:
    """It printed '0 tasks in both runs; 0 significant regressions' and nothing else, as if all were well."""
    result = compare(run({"test_a.py::one": "PPPPP"}), run({"test_b.py::two": "PPPPP"}), label="base.json")
    assert result.common_tasks == 0
    assert any("shares no task with this run" in note and "'test_a.py::one'" in note for note in result.notes)
    overlapping = compare(run({"one": "PPPPP", "two": "PPPPP"}), run({"two": "PPPPP"}), label="base.json")
    assert not any("shares no task" in note for note in overlapping.notes)


# From test_baseline_like_with_like.py:
# A baseline comparison compares like with like: the same k, the same event, binomial counts, or it says why not.


def test_the_gap_change_is_scored_at_the_common_k() -> None:
    # The same agent at p = 0.9: 9/10 at k=10 reads a 90 pp gap, 2/3 at k=3 reads 66.7 pp. Subtracted as they are,
    # the gap "fell" by 23 pp; at the common k=3 the baseline's 9/10 reads 20 pp, so it grew by 46.7 pp.
    baseline = build_summary(records({"a": "PPPPPPPPPF"}))
    current = build_summary(records({"a": "PPF"}))
    comparison = compare(baseline, current, "base.json")
    assert comparison.gap_change_pp == pytest.approx(200 / 3 - 20)
    assert "gap change scored at the common k=3 (baseline k=10, this run k=3)" in comparison.notes
    current.comparison = comparison
    gates = {g.option: g for g in conclude(current, {"gap_increase_max": 10}).gates}
    gate = gates["--gap-increase-max"]
    # One task is no evidence: the change is read at the common k, and decided on its one-sided bounds, never the
    # estimate (it was a point comparison, which failed this unchanged agent).
    assert gate.value == pytest.approx(200 / 3 - 20)
    assert gate.on == "bound" and gate.interval is not None and gate.interval.low < 10 < gate.interval.high
    assert gate.state == "undecided"


def test_mcnemar_reads_the_same_event_at_different_n() -> None:
    # 12 tasks going 3/3 -> 9/10 with the failure in repetition 10: "all n passed" flipped for every task, yet the
    # first three repetitions, the event both runs share, passed in both.
    baseline = build_summary(records({f"t{i}": "PPP" for i in range(12)}))
    current = build_summary(records({f"t{i}": "PPPPPPPPPF" for i in range(12)}))
    comparison = compare(baseline, current, "base.json")
    assert (comparison.flips_worse, comparison.flips_better, comparison.flips_p_value) == (0, 0, None)
    assert any("first 3 repetition(s) of each task" in note for note in comparison.notes)
    current.comparison = comparison
    gates = {g.option: g for g in conclude(current, {"mcnemar_p_min": 0.05}).gates}
    assert gates["--mcnemar-p-min"].state == "pass"
    # A failure within the first three repetitions is a flip on the shared event.
    worse = build_summary(records({f"t{i}": "PPFPPPPPPP" for i in range(12)}))
    flipped = compare(baseline, worse, "base.json")
    assert flipped.flips_worse == 12 and flipped.flips_p_value == pytest.approx(0.5**12)


def _trip_probability(p: float, tasks: int, n_base: int, n_cur: int, m: int | None, alpha: float = 0.05) -> float:
    """Exact chance that McNemar trips for an unchanged agent, reading "the first m passed" (None: all n)."""
    q_base = p ** (m or n_base)
    q_cur = p ** (m or n_cur)
    worse, better = q_base * (1 - q_cur), (1 - q_base) * q_cur
    tie = 1 - worse - better
    total = 0.0
    for w in range(tasks + 1):
        for b in range(tasks - w + 1):
            if w + b and mcnemar_one_sided(w, b) <= alpha:
                ways = math.comb(tasks, w) * math.comb(tasks - w, b)
                total += ways * worse**w * better**b * tie ** (tasks - w - b)
    return total


def test_an_unchanged_agent_trips_mcnemar_at_most_alpha_on_the_shared_event() -> None:
    assert _trip_probability(0.6, 20, 3, 10, None) == pytest.approx(0.41, abs=0.01)  # "all n": the old event
    assert _trip_probability(0.6, 20, 3, 10, 3) <= 0.05


def curtailed(patterns: dict[str, str]) -> list[object]:
    """Records of an adaptive run: "-" after the decided verdict reads "curtailed"."""
    reps = records({task: pattern.replace("-", "S") for task, pattern in patterns.items()})
    for rep, mark in zip(reps, "".join(patterns.values()), strict=True):
        if mark == "-":
            rep.outcome = "curtailed"
    return reps


def test_a_curtailed_baseline_is_classified_by_verdict_but_never_tested_as_binomial() -> None:
    # min_pass=1: a task stops at its first failure, so its passes per scored repetition are biased low.
    baseline = build_summary(curtailed({"a": "PF---", "b": "F----", "c": "PPPPP"}))
    current = build_summary(records({"a": "PPPPF", "b": "PPFPP", "c": "PPPPP"}))
    comparison = compare(baseline, current, "base.json")
    assert comparison.untested is not None and "the baseline has 2 curtailed task(s)" in comparison.untested
    assert all(change.p_value is None for change in comparison.tasks)
    assert comparison.suite_change is None and comparison.gap_change_pp is None
    assert comparison.flips_p_value is None and comparison.regressions == 0
    # curtailment keeps the verdict, not the state: a and b fail in both runs ("F----" stopped at its first failure
    # and is no "all fail"), so they are unchanged; on 6925489 they read "still flaky" and "newly flaky"
    assert [change.status for change in comparison.tasks] == ["unchanged", "unchanged", "unchanged"]
    current.comparison = comparison
    from pytest_consistency.analysis.baseline import untested_gates

    thresholds = {"consistency_regressions_max": 0, "mcnemar_p_min": 0.05}
    problem = untested_gates(current, thresholds)
    assert problem is not None
    assert problem.startswith("--consistency-baseline: --consistency-regressions-max, --mcnemar-p-min cannot be")
    assert untested_gates(current, {"route_drift_max": 0}) is None
    # ... and the gates themselves say so: not measurable, failed, never "ok" beside the error (issue 41)
    gates = {g.option: g for g in conclude(current, thresholds).gates}
    for option in ("--consistency-regressions-max", "--mcnemar-p-min"):
        assert (gates[option].value, gates[option].state, gates[option].passed) == (None, "fail", False), option
    from pytest_consistency.report.terminal import gate_line

    line = gate_line(gates["--mcnemar-p-min"], current).text
    assert "not measurable in this session: cannot be decided: a run with curtailed tasks" in line, line


def test_a_task_curtailed_at_a_decided_pass_is_not_newly_flaky_against_a_full_run() -> None:
    """min_pass 0.8, n = 5: the baseline stopped at 4/4 (decided), the full run passed 4/5; same verdict."""
    reps = curtailed({f"t{i}": "PPPP-" for i in range(3)})
    for rep in reps:
        rep.min_pass = 0.8
    baseline = build_summary(reps)
    current = build_summary(records({f"t{i}": "PPPFP" for i in range(3)}, min_pass=0.8))
    assert [t.verdict for t in baseline.tasks] == [t.verdict for t in current.tasks] == ["pass"] * 3
    comparison = compare(baseline, current, "base.json")
    assert [change.status for change in comparison.tasks] == ["unchanged"] * 3
