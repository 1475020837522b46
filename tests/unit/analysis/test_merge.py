"""Merging shard reports gives exactly the figures of one run over everything, and refuses what cannot pool."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from suites import records

from pytest_consistency.analysis.merge import MergeError, merge_reports
from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.result import RouteSettings, RunFacts, SessionSummary
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
