"""Merging shard reports gives exactly the figures of one run over everything, and refuses what cannot pool."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from suites import records

from pytest_consistency.merge import MergeError, merge_reports
from pytest_consistency.result import RouteSettings, RunFacts, SessionSummary
from pytest_consistency.serial import to_data
from pytest_consistency.summary import build_summary

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
    with pytest.raises(MergeError, match=r"task a has n=5 in two but n=3 in one"):
        merge_reports([("one", one), ("two", two)])


def test_errors_and_other_failures_of_a_shard_are_carried() -> None:
    one = shard(lambda t, r: True)
    one.errors.append("a pytest_consistency_summary hook raised RuntimeError: down")
    one = replace(one, run=replace(one.run, other_failures=2))
    merged = merge_reports([("one", one)])
    assert merged.errors == ["one: a pytest_consistency_summary hook raised RuntimeError: down"]
    assert merged.run.other_failures == 2
