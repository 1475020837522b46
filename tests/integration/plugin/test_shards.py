"""CI shards defer to the merge: a shard exits 0 unless something broke, the merge decides every gate once.

The suite is split by task (every repetition of a task in one shard); the merge of all shards gives the figures of
one run over everything, and compares with a baseline when asked, so a degraded agent fails the merged run and an
unchanged one passes it.
"""

from __future__ import annotations

from typing import Any

import pytest
from suites import cli, load_report, pattern_suite

STEADY = {f"t{i}": "PPPPP" for i in range(6)}
DEGRADED = {**STEADY, "t2": "PFFFF", "t4": "FFFFF"}


def figures(report: dict[str, Any]) -> dict[str, Any]:
    keep = ("mean_at_k", "pass_hat_k", "pass_at_k", "consistency_gap_pp", "answer_disagreement_pp", "task_count")
    tasks = {t["task_id"]: (t["outcomes"], t["verdict"]) for t in report["tasks"]}
    return {**{k: report["summary"][k] for k in keep}, "tasks": tasks}


def run_shards(pytester: pytest.Pytester, count: int, *args: str, prefix: str = "shard") -> list[pytest.RunResult]:
    return [
        pytester.runpytest(f"--consistency-shard={i}/{count}", f"--consistency-report={prefix}{i}.json", *args)
        for i in range(1, count + 1)
    ]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_shards_split_by_task_defer_their_verdict_and_merge_into_the_full_run(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    pytester.makepyfile(pattern_suite(DEGRADED, marker="min_pass=0"))
    full = pytester.runpytest("--consistency-report=full.json", "--consistency-gap-max=0", *workers)
    assert full.ret == 1
    shards = run_shards(pytester, 3, "--consistency-gap-max=0", *workers)
    for result in shards:
        assert result.ret == 0, result.stdout.str()  # failed repetitions and a failed gate: the merge decides
        result.stdout.fnmatch_lines(["*shard */3: verdict deferred to pytest-consistency merge*"])
    seen: list[str] = []
    for i in range(1, 4):
        report = load_report(pytester, f"shard{i}.json")
        assert report["summary"]["run"]["shard"] == f"{i}/3"
        for task in report["tasks"]:
            assert task["scored"] == 5, task  # never a task's repetitions across shards
            seen.append(task["task_id"])
    assert sorted(seen) == sorted(t["task_id"] for t in load_report(pytester, "full.json")["tasks"])
    assert [len(load_report(pytester, f"shard{i}.json")["tasks"]) for i in range(1, 4)] == [2, 2, 2]
    merged = cli("merge", "shard1.json", "shard2.json", "shard3.json", "-o", "merged.json", cwd=pytester.path)
    assert merged.returncode == 1, merged.stdout + merged.stderr  # the gap gate the shards ran with decides here
    assert "gate --consistency-gap-max" in merged.stdout and "FAILED" in merged.stdout
    data = load_report(pytester, "merged.json")
    assert figures(data) == figures(load_report(pytester, "full.json"))
    assert data["summary"]["run"]["shard"] is None and data["summary"]["passed"] is False


def test_a_shard_that_broke_fails_itself(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
def pytest_consistency_normalize_answer(answer, task_id):
    raise ValueError("broken hook")
"""
    )
    pytester.makepyfile(pattern_suite({"a": "PPP", "b": "PPP"}, answers={"a": ["x"] * 3}, marker="min_pass=0"))
    results = run_shards(pytester, 2)
    assert sorted(r.ret for r in results) == [0, 1]  # the shard holding task a broke; the other did not
    broken = next(r for r in results if r.ret == 1)
    assert "task in error" in broken.stdout.str()


def merge_against_base(pytester: pytest.Pytester, prefix: str, out: str) -> Any:
    """``pytest-consistency merge`` of two shards against base.json, gated on regressions."""
    return cli(
        "merge",
        f"{prefix}1.json",
        f"{prefix}2.json",
        "-o",
        out,
        "--consistency-baseline=base.json",
        "--consistency-regressions-max=0",
        cwd=pytester.path,
    )


def test_the_merge_compares_with_a_baseline_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite(STEADY, marker="min_pass=0"))
    assert pytester.runpytest("--consistency-report=base.json").ret == 0
    # The same agent again: the merged comparison passes its baseline gate.
    for result in run_shards(pytester, 2, prefix="same"):
        assert result.ret == 0
    same = merge_against_base(pytester, "same", "m1.json")
    assert same.returncode == 0, same.stdout + same.stderr
    # A degraded agent: each shard defers, the merge fails naming the task that regressed.
    pytester.makepyfile(pattern_suite(DEGRADED, marker="min_pass=0"))
    for result in run_shards(pytester, 2, prefix="worse"):
        assert result.ret == 0
    worse = merge_against_base(pytester, "worse", "m2.json")
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert "not measurable" not in worse.stdout
    assert "test_task[t4]" in worse.stdout and "REGRESSION" in worse.stdout
    assert load_report(pytester, "m2.json")["summary"]["comparison"]["regressions"] >= 1


def test_a_baseline_gate_without_a_baseline_in_the_merge_says_how_to_give_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite(STEADY, marker="min_pass=0"))
    assert pytester.runpytest("--consistency-report=base.json").ret == 0
    run_shards(pytester, 2, "--consistency-baseline=base.json", "--consistency-regressions-max=0")
    merged = cli("merge", "shard1.json", "shard2.json", "-o", "m.json", cwd=pytester.path)
    assert merged.returncode == 1  # a gate that cannot be measured never passes
    assert "not measurable" in merged.stdout


@pytest.mark.parametrize("bad", ["0/3", "4/3", "two", "1/0", "1-3"])
def test_a_malformed_shard_is_a_usage_error_naming_the_option(pytester: pytest.Pytester, bad: str) -> None:
    pytester.makepyfile(pattern_suite({"a": "PP"}))
    result = pytester.runpytest(f"--consistency-shard={bad}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--consistency-shard" in result.stderr.str() and "e.g. 2/4" in result.stderr.str()


def test_the_shard_option_is_also_read_from_yaml(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "PP", "b": "PP"}))
    pytester.makefile(".yaml", consistency="shard: 2/2\n")
    result = pytester.runpytest("--consistency-config=consistency.yaml", "--consistency-report=r.json")
    assert result.ret == 0
    assert [t["task_id"].split("::")[-1] for t in load_report(pytester, "r.json")["tasks"]] == ["test_task[b]"]


def test_pytest_split_groups_defer_to_the_merge_too(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_split")
    pytester.makepyfile(pattern_suite(DEGRADED, marker="min_pass=0"))
    groups = [
        pytester.runpytest("--splits=2", f"--group={g}", f"--consistency-report=g{g}.json", "--consistency-gap-max=0")
        for g in (1, 2)
    ]
    assert [r.ret for r in groups] == [0, 0]
    assert {load_report(pytester, f"g{g}.json")["summary"]["run"]["shard"] for g in (1, 2)} == {"1/2", "2/2"}
    merged = cli("merge", "g1.json", "g2.json", "-o", "m.json", cwd=pytester.path)
    assert merged.returncode == 1 and load_report(pytester, "m.json")["summary"]["task_count"] == len(DEGRADED)
