"""Merging shard reports gives exactly the figures of one run over everything, and refuses what cannot pool."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suites import records

from pytest_consistency.analysis.adaptive import decided, refused_with_adaptive
from pytest_consistency.analysis.baseline import compare, untested_gates
from pytest_consistency.analysis.merge import MergeError, gated_merge, merge_reports
from pytest_consistency.analysis.summary import build_summary, conclude, default_equivalence
from pytest_consistency.model.records import RepetitionResult
from pytest_consistency.model.result import Analysis, RouteSettings, RunFacts, SessionSummary
from pytest_consistency.model.serial import to_data

PATTERNS = {"a": "PPFPP", "b": "PPPPP", "c": "FPFPF", "d": "PPPPF", "e": "FFFFF"}
ANSWERS = {"a": ["x", "x", "y", "x", "x"], "c": ["1", "2", "1", "1", "1"]}


def shard(keep) -> SessionSummary:  # type: ignore[no-untyped-def]
    """The report of a shard that ran the repetitions ``keep(task, repeat)`` selects."""
    reps = [r for r in records(PATTERNS, ANSWERS) if keep(r.task_id, r.repeat)]
    return SessionSummary.from_dict(json.loads(json.dumps(build_summary(reps).to_dict())))


def comparable(summary: SessionSummary) -> object:
    data = to_data(summary)
    data.pop("warnings")
    return data


def test_shards_that_split_one_tasks_repetitions_merge_into_the_full_run() -> None:
    full = build_summary(records(PATTERNS, ANSWERS))
    shards = [
        ("s1.json", shard(lambda t, r: r % 3 == 0)),
        ("s2.json", shard(lambda t, r: r % 3 == 1)),
        ("s3.json", shard(lambda t, r: r % 3 == 2)),
    ]
    assert all(s.task_count == 0 for _, s in shards)  # every task is incomplete in every shard alone
    merged = merge_reports(shards)
    assert comparable(merged) == comparable(full)
    assert merged.consistency_gap_pp == full.consistency_gap_pp and merged.intervals == full.intervals


def test_shards_by_task_merge_into_the_full_run() -> None:
    full = build_summary(records(PATTERNS, ANSWERS))
    merged = merge_reports([("x", shard(lambda t, r: t in "ab")), ("y", shard(lambda t, r: t not in "ab"))])
    assert comparable(merged) == comparable(full)


def test_the_same_repetition_in_two_reports_is_refused() -> None:
    everything = shard(lambda t, r: True)
    with pytest.raises(MergeError, match=r"repetition 1 of a ran in both one\.json and two\.json"):
        merge_reports([("one.json", everything), ("two.json", everything)])


def test_reports_of_different_routes_are_refused_unless_allowed() -> None:
    route = RouteSettings("http://a/v1", "m", "sha256:1", "K", False, 60.0, 1, None, None, 1)
    one = replace(shard(lambda t, r: t == "a"), run=RunFacts(route=route))
    two = replace(shard(lambda t, r: t == "b"), run=RunFacts(route=replace(route, model="other")))
    with pytest.raises(MergeError, match=r"two was run on http://a/v1 model other.*--allow-mixed"):
        merge_reports([("one", one), ("two", two)])
    merged = merge_reports([("one", one), ("two", two)], allow_mixed=True)
    assert merged.task_count == 2 and any("--allow-mixed" in w for w in merged.warnings)


def test_a_task_with_different_n_is_refused() -> None:
    one = build_summary(records({"a": "PPP"}))
    two = build_summary(records({"a": "PPPPP"}))
    with pytest.raises(MergeError, match=r"task a has n=5, k=5, min_pass=1 in two but n=3, k=3, min_pass=1 in one"):
        merge_reports([("one", one), ("two", two)])


def test_errors_and_other_failures_of_a_shard_are_carried() -> None:
    one = shard(lambda t, r: True)
    one.errors.append("a pytest_consistency_summary hook raised RuntimeError: down")
    one = replace(one, run=replace(one.run, other_failures=2))
    merged = merge_reports([("one", one)])
    assert merged.errors == ["one: a pytest_consistency_summary hook raised RuntimeError: down"]
    assert merged.run.other_failures == 2


def budgeted(patterns: dict[str, str], limit: int, spent: int) -> SessionSummary:
    from pytest_consistency.model.result import TokenBudget

    return build_summary(records(patterns), run=RunFacts(token_budget=TokenBudget(limit=limit, spent=spent)))


def test_a_shard_over_its_own_budget_keeps_the_merged_run_over_budget() -> None:
    # 150 > 100 in s1, 10 of 100 in s2: the sums (160 of 200) would hide s1's overrun.
    merged = merge_reports([("s1.json", budgeted({"a": "PP"}, 100, 150)), ("s2.json", budgeted({"b": "PP"}, 100, 10))])
    budget = merged.run.token_budget
    assert budget is not None and budget.exceeded and budget.exceeded_in == ("s1.json",)
    assert not conclude(merged, {}).passed
    assert any("exceeded in s1.json" in warning for warning in merged.warnings)
    again = merge_reports([("m.json", SessionSummary.from_dict(json.loads(json.dumps(merged.to_dict()))))])
    assert again.run.token_budget is not None and again.run.token_budget.exceeded_in == ("s1.json",)


def test_shards_of_one_task_with_different_min_pass_or_k_are_refused() -> None:
    one = build_summary([r for r in records({"a": "PFPP"}, min_pass=0.5) if r.repeat <= 2])
    two = build_summary([r for r in records({"a": "PFPP"}, min_pass=1.0) if r.repeat > 2])
    with pytest.raises(MergeError, match=r"task a has n=4, k=4, min_pass=1 in two but n=4, k=4, min_pass=0.5 in one"):
        merge_reports([("one", one), ("two", two)])
    three = build_summary([r for r in records({"a": "PFPP"}, k=2, min_pass=0.5) if r.repeat > 2])
    with pytest.raises(MergeError, match=r"k=2"):
        merge_reports([("one", one), ("three", three)])


def test_shards_analysed_differently_are_refused_unless_the_merge_says_how() -> None:
    from pytest_consistency.model.result import Analysis

    one = build_summary(records({"a": "PP"}), analysis=Analysis(confidence=0.95))
    two = build_summary(records({"b": "PP"}), analysis=Analysis(confidence=0.9))
    with pytest.raises(MergeError, match=r"analysed with confidence 0.9"):
        merge_reports([("one", one), ("two", two)])
    assert merge_reports([("one", one), ("two", two)], analysis=Analysis(confidence=0.8)).analysis.confidence == 0.8


def test_a_resample_section_is_not_merged_and_the_merge_says_so() -> None:
    from pytest_consistency.model.resample import DecisionRow, ResampleSummary

    first = shard(lambda t, r: r % 2 == 0)
    first.resample = ResampleSummary("a", 2, 1, 4, 4, 3, "cassettes/x", rows=[DecisionRow("k", "tool k", 4, 2)])
    merged = merge_reports([("s1.json", first), ("s2.json", shard(lambda t, r: r % 2 == 1))])
    assert merged.resample is None
    assert any(w.startswith("s1.json is a resample session (a@2); merge does not combine") for w in merged.warnings)
    assert comparable(merged) == comparable(build_summary(records(PATTERNS, ANSWERS)))


def test_shards_run_with_another_n_or_bar_are_refused_even_without_a_task_in_common() -> None:
    """Issue 41: the merge compared n and min_pass only for a task two reports shared, so shards run with different
    --consistency-repeat or --consistency-min-pass merged where the unsharded run would have failed."""
    one = build_summary(records({"a": "PPPPF"}), run=RunFacts(shard="1/2", verdict_settings={}))
    two = build_summary(records({"b": "PPPPP"}), run=RunFacts(shard="2/2", verdict_settings={}))
    assert merge_reports([("s1.json", one), ("s2.json", two)]).task_count == 2
    for flag, value in (("--consistency-repeat", "10"), ("--consistency-min-pass", "0.8")):
        other = replace(two, run=replace(two.run, verdict_settings={flag: value}))
        with pytest.raises(MergeError, match=rf"s2.json ran with {flag}={value}, s1.json with no verdict option"):
            merge_reports([("s1.json", one), ("s2.json", other)])
    # a report of an older version does not say: it is merged as before
    old = replace(two, run=replace(two.run, verdict_settings=None))
    assert merge_reports([("s1.json", one), ("s2.json", old)]).task_count == 2


# From test_merge_properties.py:
# Invariants of the CI path over many suites (Hypothesis): the merge of every shard is the unsharded run, the merge
# of fewer shards refuses, and a run compared with itself passes every gate it may be gated on.
#
# Each shard is summarised as the plugin summarises a session (its own figures and gates, written to JSON and read
# back), so what the merge receives is what CI hands it. The examples are derandomised: CI runs the same ones every
# time, enough of them to find each merge defect of trust round three when it is put back.


EXAMPLES = settings(
    max_examples=250, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


HOOK = "/ci/conftest.py"


DRAWN_ANSWERS = ("Paris", "paris", "PARIS", "Lyon", None)


def lenient(left: Any, right: Any, task_id: str) -> bool:
    """An equivalence hook that ignores case: the default equivalence disagrees with it on "Paris" and "paris"."""
    return str(left).lower() == str(right).lower()


@st.composite
def suites(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 6))
    tasks = draw(st.integers(1, 7))
    patterns = {f"t{i}": "".join(draw(st.sampled_from("PPPF")) for _ in range(n)) for i in range(tasks)}
    answers = {
        task: [draw(st.sampled_from(DRAWN_ANSWERS)) for _ in range(n)] for task in patterns if draw(st.booleans())
    }
    gates: dict[str, float] = {}
    for dest, high in (("consistency_gap_max", 100), ("answer_disagreement_max", 100), ("pass_hat_k_min", 100)):
        if draw(st.booleans()):
            gates[dest] = float(draw(st.integers(0, high)))
    return {
        "patterns": patterns,
        "answers": {t: [a for a in v] for t, v in answers.items()},
        "k": draw(st.integers(1, n)),
        "min_pass": draw(st.sampled_from([1.0, 0.5, 0.0])),
        "hook": draw(st.booleans()),
        "adaptive": draw(st.booleans()),
        "gates": gates,
        "analysis": Analysis(gate_on=draw(st.sampled_from(["point", "bound"]))),
        "shards": draw(st.integers(1, 4)),
        "deal": draw(st.randoms(use_true_random=False)),
    }


def suite_records(suite: dict[str, Any]) -> list[RepetitionResult]:
    answers = {t: ["" if a is None else a for a in v] for t, v in suite["answers"].items()}
    reps = records(suite["patterns"], answers, k=suite["k"], min_pass=suite["min_pass"])
    for rep in reps:  # None: this repetition recorded no answer
        if rep.task_id in suite["answers"] and suite["answers"][rep.task_id][rep.repeat - 1] is None:
            rep.answer_recorded, rep.answer, rep.normalized = False, None, None
    if suite["adaptive"]:
        curtail(reps)
    return reps


def curtail(reps: list[RepetitionResult]) -> None:
    """What ``--consistency-adaptive`` (n_min 1) leaves: repetitions after the decided verdict are curtailed."""
    tally: dict[str, list[int]] = {}
    for rep in sorted(reps, key=lambda r: (r.task_id, r.repeat)):
        passes, failures = tally.setdefault(rep.task_id, [0, 0])
        if rep.repeat > 1 and decided(passes, failures, rep.n, rep.min_pass) is not None:
            rep.outcome, rep.answer_recorded, rep.answer, rep.normalized = "curtailed", False, None, None
            continue
        tally[rep.task_id] = [passes + rep.succeeded, failures + (not rep.succeeded)]


def session(reps: list[RepetitionResult], suite: dict[str, Any], shard: str | None = None) -> SessionSummary:
    """A session's summary as the plugin makes it, with its gates decided; read back from its JSON report."""
    equivalence: Callable[[Any, Any, str], bool] = lenient if suite["hook"] else default_equivalence
    run = RunFacts(
        equivalence=HOOK if suite["hook"] else "default",
        adaptive_n_min=1 if suite["adaptive"] else None,
        shard=shard,
    )
    summary = build_summary([replace(r) for r in reps], equivalence, run, suite["analysis"])
    conclude(summary, suite["gates"])
    summary.exit_status = 0 if summary.passed else 1
    return SessionSummary.from_dict(json.loads(json.dumps(summary.to_dict())))


def dealt(suite: dict[str, Any], reps: list[RepetitionResult]) -> list[tuple[str, SessionSummary]]:
    """Every shard's report: whole tasks dealt at random to ``shards`` shards (some may get none)."""
    count = suite["shards"]
    where = {task: suite["deal"].randrange(count) for task in suite["patterns"]}
    return [
        (f"s{i + 1}.json", session([r for r in reps if where[r.task_id] == i], suite, f"{i + 1}/{count}"))
        for i in range(count)
    ]


def story(summary: SessionSummary) -> dict[str, Any]:
    tasks = [
        (t.task_id, t.verdict, t.passes, t.scored, t.distinct_answers, t.answers_disagree, t.gap_pp)
        for t in summary.tasks
    ]
    return {
        "figures": (
            summary.task_count,
            summary.mean_at_k,
            summary.pass_hat_k,
            summary.pass_at_k,
            summary.consistency_gap_pp,
            summary.answer_disagreement_pp,
        ),
        "intervals": summary.intervals,
        "tasks": tasks,
        "gates": [(g.name, g.state, g.value, g.threshold) for g in summary.gates],
        "passed": summary.passed,
        "exit": summary.exit_status,
    }


@EXAMPLES
@given(suites())
def test_the_merge_of_every_shard_is_the_unsharded_run(suite: dict[str, Any]) -> None:
    reps = suite_records(suite)
    refused = suite["adaptive"] and refused_with_adaptive(suite["gates"], False, "--consistency-adaptive")
    reports = dealt(suite, reps)
    if refused:  # pytest refuses the unsharded run (a usage error); the merge refuses the same gates
        try:
            gated_merge(reports, {})
        except MergeError as exc:
            assert "--consistency-adaptive" in str(exc)
            return
        raise AssertionError("the merge of adaptive shards accepted figure gates pytest refuses")
    whole = session(reps, suite)
    merged = gated_merge(reports, {})
    assert story(merged) == story(whole)
    assert merged.run.equivalence == whole.run.equivalence


@EXAMPLES
@given(suites(), st.data())
def test_the_merge_of_fewer_shards_refuses_naming_what_is_missing(suite: dict[str, Any], data: Any) -> None:
    if suite["shards"] < 2:
        return
    reports = dealt(suite, suite_records(suite))
    kept = data.draw(st.lists(st.sampled_from(range(len(reports))), min_size=1, max_size=len(reports) - 1, unique=True))
    missing = [f"{i + 1}/{len(reports)}" for i in range(len(reports)) if i not in kept]
    try:
        gated_merge([reports[i] for i in kept], {})
    except MergeError as exc:
        assert all(label in str(exc) for label in missing), (missing, str(exc))
        assert "missing" in str(exc)
    else:
        raise AssertionError(f"a merge without shard(s) {missing} was accepted")


@EXAMPLES
@given(suites(), st.booleans())
def test_a_run_compared_with_itself_passes_every_gate_it_may_be_gated_on(suite: dict[str, Any], again: bool) -> None:
    baseline = session(suite_records(suite), suite)
    current = session(suite_records(suite), suite) if again else baseline
    current.comparison = compare(baseline, current, "base.json")
    thresholds: dict[str, float | None] = {
        "consistency_regressions_max": 0,
        "gap_increase_max": 0,
        "mcnemar_p_min": 0.05,
    }
    current.analysis = replace(current.analysis, suite_regression=True)
    problem = untested_gates(current, thresholds)
    if suite["adaptive"] and any(t.curtailed for t in current.tasks):
        assert problem is not None and "curtailed" in problem  # refused, never a failed gate
        return
    assert problem is None
    conclude(current, thresholds)
    for gate in current.gates:
        assert gate.state != "fail", gate
        # on the point every gate passes; the gap increase is a test on its bounds in both modes (it may be undecided)
        if current.analysis.gate_on == "point" and gate.option != "--gap-increase-max":
            assert gate.state == "pass", gate


@EXAMPLES
@given(suites(), st.data())
def test_shards_gated_differently_or_of_another_split_are_refused(suite: dict[str, Any], data: Any) -> None:
    if suite["shards"] < 2:
        return
    reports = dealt(suite, suite_records(suite))
    victim = data.draw(st.integers(0, len(reports) - 1))
    name, report = reports[victim]
    if data.draw(st.booleans()):  # one shard ran with another threshold of a gate, or without it
        from pytest_consistency.analysis.gates import GATES

        gate = data.draw(st.sampled_from([g for g in GATES if g.dest in ("consistency_gap_max", "pass_hat_k_min")]))
        changed = dict(suite["gates"])
        changed[gate.dest] = None if gate.dest in changed and data.draw(st.booleans()) else 50.5
        if changed.get(gate.dest) == suite["gates"].get(gate.dest):
            return
        tampered = session(
            [r for t in report.tasks for r in t.repetitions], {**suite, "gates": changed}, report.run.shard
        )
        expected = gate.flag
    else:  # a shard of another split of the suite (1/2 beside 2/3)
        tampered = replace(report, run=replace(report.run, shard=f"{victim + 1}/{len(reports) + 1}"))
        expected = "different numbers of shards"
    reports[victim] = (name, tampered)
    try:
        gated_merge(reports, {})
    except MergeError as exc:
        assert expected in str(exc), (expected, str(exc))
    else:
        raise AssertionError(f"accepted: {expected}")
