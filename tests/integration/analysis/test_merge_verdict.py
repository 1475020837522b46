"""The merge of CI shards gives the verdict one unsharded run gives, or refuses (exit 2) saying why.

Each test is an attack a user's CI makes by accident: an artifact that failed to upload, shards of two different
splits, shards gated differently, adaptive shards, an answer-equivalence hook the merge cannot call, more shards
than tasks, a collection error every shard sees.
"""

from __future__ import annotations

from typing import Any

import pytest
from suites import cli, load_report, pattern_suite

STEADY = {f"t{i}": "PPPPP" for i in range(4)}
DEGRADED = {**STEADY, "t1": "PFPPP", "t3": "FFFFF"}
XDIST = pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])


def shards(pytester: pytest.Pytester, count: int, *args: str, only: tuple[int, ...] = ()) -> list[Any]:
    return [
        pytester.runpytest(f"--consistency-shard={i}/{count}", f"--consistency-report=s{i}.json", *args)
        for i in (only or range(1, count + 1))
    ]


def merge(pytester: pytest.Pytester, *args: str) -> Any:
    return cli("merge", *args, "-o", "merged.json", cwd=pytester.path)


def figures(report: dict[str, Any]) -> dict[str, Any]:
    keep = ("mean_at_k", "pass_hat_k", "pass_at_k", "consistency_gap_pp", "answer_disagreement_pp", "task_count")
    tasks = {t["task_id"]: (t["outcomes"], t["verdict"], t["distinct_answers"]) for t in report["tasks"]}
    gates = [(g["name"], g["state"]) for g in report["summary"]["gates"]]
    run = report["summary"]["run"]
    return {**{k: report["summary"][k] for k in keep}, "tasks": tasks, "gates": gates, "other": run["other_failures"]}


def test_a_missing_shard_is_refused_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite(DEGRADED, marker="min_pass=0"))
    # a gap of at most 0 is refuted for certain by a flaky task (t1), whatever the interval says
    assert pytester.runpytest("--consistency-report=full.json", "--consistency-gap-max=0").ret == 1
    assert [r.ret for r in shards(pytester, 2, "--consistency-gap-max=0")] == [0, 0]
    alone = merge(pytester, "s1.json", "--consistency-gap-max=0")
    assert alone.returncode == 2, alone.stdout + alone.stderr
    assert "shard 2/2 is missing (have 1/2)" in alone.stderr
    # The same with a baseline and the suite-level test: the missing tasks never pass as "removed".
    for flag in ("--consistency-suite-regression", "--consistency-regressions-max=0"):
        again = merge(pytester, "s1.json", "--consistency-baseline=full.json", flag)
        assert again.returncode == 2 and "shard 2/2 is missing" in again.stderr, again.stderr
    both = merge(pytester, "s1.json", "s2.json")
    assert both.returncode == 1, both.stdout + both.stderr  # the gap gate the shards ran with fails, as in full.json
    assert figures(load_report(pytester, "merged.json")) == figures(load_report(pytester, "full.json"))


def test_shards_of_different_splits_are_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite(DEGRADED, marker="min_pass=0"))
    shards(pytester, 2, only=(1,))
    pytester.runpytest("--consistency-shard=2/3", "--consistency-report=t2.json")
    result = merge(pytester, "s1.json", "t2.json")
    assert result.returncode == 2
    assert "different numbers of shards (s1.json of 2; t2.json of 3)" in result.stderr, result.stderr
    shards(pytester, 2, only=(2,))
    pytester.runpytest("--consistency-report=whole.json")
    mixed = merge(pytester, "s1.json", "s2.json", "whole.json")
    assert mixed.returncode == 2 and "whole.json is a report of a whole run, beside shard reports" in mixed.stderr
    twice = merge(pytester, "s1.json", "s1.json", "s2.json")
    assert twice.returncode == 2 and "shard 1/2 is there 2 times (s1.json, s1.json)" in twice.stderr


def test_gates_that_differ_between_shards_are_refused_unless_the_merge_sets_them(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite(DEGRADED, marker="min_pass=0"))
    pytester.runpytest("--consistency-shard=1/2", "--consistency-report=s1.json", "--consistency-gap-max=0")
    pytester.runpytest("--consistency-shard=2/2", "--consistency-report=s2.json", "--consistency-gap-max=2")
    result = merge(pytester, "s1.json", "s2.json")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--consistency-gap-max with different thresholds (0 in s1.json, 2 in s2.json)" in result.stderr
    assert "set --consistency-gap-max=... on the merge" in result.stderr
    pytester.runpytest("--consistency-shard=2/2", "--consistency-report=s2.json")  # one gated, one not
    ungated = merge(pytester, "s1.json", "s2.json")
    assert ungated.returncode == 2 and "(0 in s1.json, not set in s2.json)" in ungated.stderr
    explicit = merge(pytester, "s1.json", "s2.json", "--consistency-gap-max=0")
    assert explicit.returncode == 1 and "gate --consistency-gap-max" in explicit.stdout  # the merge's own gate


def test_the_merge_refuses_figure_gates_on_adaptive_shards_as_pytest_does(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "PPPPF", "b": "PPPPP"}, marker="min_pass=0.8"))
    refused = pytester.runpytest("--consistency-adaptive", "--consistency-gap-max=10")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert [r.ret for r in shards(pytester, 2, "--consistency-adaptive")] == [0, 0]
    result = merge(pytester, "s1.json", "s2.json", "--consistency-gap-max=10")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "the reports ran with --consistency-adaptive, which stops a task" in result.stderr
    assert "--consistency-gap-max would gate on them" in result.stderr
    assert merge(pytester, "s1.json", "s2.json", "--route-drift-max=0").returncode in (0, 1)  # allowed, as in pytest
    assert merge(pytester, "s1.json", "s2.json").returncode == 0


HOOK = """
def pytest_consistency_answers_equivalent(left, right, task_id):
    return str(left).lower() == str(right).lower()
"""
STRICT = """
def pytest_consistency_answers_equivalent(left, right, task_id):
    return False if "strict" in task_id else left == right
"""


#: Both hooks serially; under xdist the lenient one (the hook decides on the controller either way).
@pytest.mark.parametrize(
    ("workers", "hook"),
    [
        pytest.param([], HOOK, id="serial-lenient"),
        pytest.param(["-n", "2"], HOOK, id="xdist-lenient"),
        pytest.param([], STRICT, id="serial-strict"),
    ],
)
def test_the_merge_keeps_what_the_equivalence_hook_decided(
    pytester: pytest.Pytester, hook: str, workers: list[str]
) -> None:
    pytester.makeconftest(hook)
    answers = {"a": ["Paris", "paris", "PARIS"], "strict_b": ["x", "x", "x"], "c": ["1", "1", "1"]}
    pytester.makepyfile(pattern_suite({"a": "PPP", "strict_b": "PPP", "c": "PPP"}, answers=answers))
    full = pytester.runpytest("--consistency-report=full.json", "--answer-disagreement-max=0", *workers)
    shards(pytester, 2, "--answer-disagreement-max=0", *workers)
    merged = merge(pytester, "s1.json", "s2.json")
    assert merged.returncode == full.ret, merged.stdout + merged.stderr
    data, whole = load_report(pytester, "merged.json"), load_report(pytester, "full.json")
    assert figures(data) == figures(whole)
    hook_name = whole["summary"]["run"]["equivalence"]
    assert data["summary"]["run"]["equivalence"] == hook_name and hook_name.endswith("conftest.py")
    assert [t["trajectory"] for t in data["tasks"]] == [t["trajectory"] for t in whole["tasks"]]


def test_a_task_split_across_hooked_reports_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(HOOK)
    pytester.makepyfile(pattern_suite({"a": "PPPP"}, answers={"a": ["Paris", "paris", "PARIS", "Paris"]}))
    pytester.runpytest("-k", "rep1 or rep2", "--consistency-report=r1.json")
    pytester.runpytest("-k", "rep3 or rep4", "--consistency-report=r2.json")
    result = merge(pytester, "r1.json", "r2.json")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "whose answers were compared with" in result.stderr
    assert "conftest.py: the merge cannot call the hook to compare the answers of different reports" in result.stderr


@XDIST
def test_a_shard_dealt_no_task_passes_says_so_and_merges(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makepyfile(pattern_suite({"a": "PPP", "b": "PFP"}, marker="min_pass=0"))
    full = pytester.runpytest("--consistency-report=full.json", *workers)
    results = shards(pytester, 3, *workers)
    assert [r.ret for r in results] == [0, 0, 0], results[2].stdout.str()
    empty = results[2].stdout.str()
    assert "shard 3/3: ran no task, none was dealt to it" in empty and "consistency failed" not in empty
    assert load_report(pytester, "s3.json")["tasks"] == []
    merged = merge(pytester, "s1.json", "s2.json", "s3.json")
    assert merged.returncode == full.ret == 0, merged.stdout + merged.stderr
    assert figures(load_report(pytester, "merged.json")) == figures(load_report(pytester, "full.json"))


@XDIST
def test_a_collection_error_every_shard_sees_counts_once(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PPP", "b": "PPP", "c": "PPP"}))
    pytester.makepyfile(test_broken="import nowhere_to_be_found\n")
    going = ("--continue-on-collection-errors", *workers)
    full = pytester.runpytest("--consistency-report=full.json", *going)
    assert full.ret == 1 and load_report(pytester, "full.json")["summary"]["run"]["other_failures"] == 1
    assert [r.ret for r in shards(pytester, 3, *going)] == [1, 1, 1]  # each shard collected the broken file
    merged = merge(pytester, "s1.json", "s2.json", "s3.json")
    assert merged.returncode == 1
    run = load_report(pytester, "merged.json")["summary"]["run"]
    assert run["other_failures"] == 1 and run["other_failed"] == ["test_broken.py"]
    assert "1 other test(s) or collection error(s) failed" in merged.stdout


@pytest.mark.parametrize("option", ["--consistency-repeat=3", "--consistency-min-pass=0.6"])
def test_shards_run_with_another_verdict_option_are_refused_naming_it(pytester: pytest.Pytester, option: str) -> None:
    """Issue 41: the options changed verdicts in one shard only (no task in common) and the merge passed."""
    pytester.makepyfile(pattern_suite(DEGRADED))  # min_pass 1.0 from the marker's default, n = 5
    pytester.runpytest("--consistency-shard=1/2", "--consistency-report=s1.json", option)
    pytester.runpytest("--consistency-shard=2/2", "--consistency-report=s2.json")
    result = merge(pytester, "s1.json", "s2.json")
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"s2.json ran with no verdict option, s1.json with {option}: each changes a task's verdict" in result.stderr
