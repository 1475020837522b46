"""A merge tells one story and equals one full run: only some shards, an interrupted report, odd shards
(serial and under xdist), the same shard twice, a merged report merged again, shards gated on a baseline.
"""

from __future__ import annotations

import pytest
from stories import BASELINE, figures, one_story, session
from suites import ODD_SUITE, cli, load_report, pattern_suite, session_only

from pytest_consistency.model.result import SessionSummary


def test_merging_only_some_shards_does_not_pass_where_their_session_failed(pytester: pytest.Pytester) -> None:
    """Shard s1 ran a failing repetition of a task that needs every repetition (min_pass 1): its session exits 1."""
    pytester.makepyfile(test_task=pattern_suite({"a": "FPPPP", "b": "PPPPP"}))
    shard = pytester.runpytest("--consistency-report=s1.json", "-k", "rep1 or rep2")
    one_story(shard.ret, load_report(pytester, "s1.json"))
    assert shard.ret == 1
    merged = cli("merge", "s1.json", "-o", "m.json", cwd=pytester.path)
    report = load_report(pytester, "m.json")
    one_story(merged.returncode, report)
    assert merged.returncode == 1, merged.stdout


def test_merging_an_interrupted_report_never_passes(pytester: pytest.Pytester) -> None:
    result = session(pytester, {"a": "PFPPP", "b": "PPPPP"}, "-x", report="x.json", marker="min_pass=0.6")
    assert result.ret != 0
    merged = cli("merge", "x.json", "-o", "m.json", cwd=pytester.path)
    report = load_report(pytester, "m.json")
    one_story(merged.returncode, report)
    assert report["summary"]["run"]["interrupted"] is True
    assert merged.returncode != 0


@pytest.mark.parametrize(
    ("split", "xdist"),
    [
        ("reps", []),
        ("reps", ["-n", "2"]),
        ("tasks", []),
    ],
    ids=["by-rep", "by-rep-xdist", "by-task"],
)
def test_merge_of_odd_shards_equals_the_full_run(pytester: pytest.Pytester, split: str, xdist: list[str]) -> None:
    pytester.makepyfile(test_task=ODD_SUITE)
    full = pytester.runpytest("--consistency-report=full.json", "--consistency-gap-max=50")
    selections = {
        "reps": ["rep1 or rep2", "rep3", "rep4 or rep5"],
        "reps-xdist": ["rep1 or rep2 or rep3", "rep4 or rep5"],  # two shards: xdist start-up is slow on 2 cores
        "tasks": ["ck or plain", "two", "not (ck or plain or two)"],
    }[split + ("-xdist" if xdist else "")]
    names = []
    for i, selection in enumerate(selections):
        pytester.runpytest(f"--consistency-report=s{i}.json", "-k", selection, *xdist)
        names.append(f"s{i}.json")
    merged = cli("merge", *names, "-o", "merged.json", "--consistency-gap-max=50", cwd=pytester.path)
    full_report, merged_report = load_report(pytester, "full.json"), load_report(pytester, "merged.json")
    one_story(full.ret, full_report)
    one_story(merged.returncode, merged_report)
    assert merged.returncode == full.ret, merged.stdout + merged.stderr
    assert sum(len(t["repetitions"]) for t in merged_report["tasks"]) == 20
    assert figures(merged_report) == figures(full_report)
    assert merged_report["summary"]["gates"] == full_report["summary"]["gates"]


def test_merge_refuses_the_same_shard_twice_and_shards_of_different_n(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite({"a": "PPFPP", "b": "PPPPP"}, marker="min_pass=0"))
    pytester.runpytest("--consistency-report=s1.json", "-k", "rep1 or rep2")
    pytester.runpytest("--consistency-report=s2.json", "-k", "rep3 or rep4", "--consistency-repeat=4")
    twice = cli("merge", "s1.json", "s1.json", "-o", "m.json", cwd=pytester.path)
    assert twice.returncode == 2 and "ran in both s1.json and s1.json" in twice.stderr, twice.stderr
    mixed = cli("merge", "s1.json", "s2.json", "-o", "m.json", cwd=pytester.path)
    assert (
        mixed.returncode == 2
        and "has n=4, k=4, min_pass=0 in s2.json but n=5, k=5, min_pass=0 in s1.json" in mixed.stderr
    ), mixed.stderr
    assert "Traceback" not in twice.stderr + mixed.stderr
    assert not (pytester.path / "m.json").exists()


def test_a_merged_report_is_itself_mergeable_showable_and_round_trips(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=ODD_SUITE)
    pytester.runpytest("--consistency-report=s1.json", "-k", "rep1 or rep2 or rep3")
    pytester.runpytest("--consistency-report=s2.json", "-k", "rep4 or rep5")
    first = cli("merge", "s1.json", "s2.json", "-o", "m1.json", "--pass-hat-k-min=10", cwd=pytester.path)
    again = cli("merge", "m1.json", "-o", "m2.json", cwd=pytester.path)  # the recorded gate carries over
    m1, m2 = load_report(pytester, "m1.json"), load_report(pytester, "m2.json")
    one_story(first.returncode, m1)
    one_story(again.returncode, m2)
    assert first.returncode == again.returncode
    assert figures(m1) == figures(m2) and m1["summary"]["gates"] == m2["summary"]["gates"]
    shown = cli("show", "m1.json", cwd=pytester.path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [line for line in first.stdout.splitlines() if not session_only(line)]
    assert SessionSummary.from_dict(m1).to_dict() == m1


def test_merged_shards_that_gated_on_a_baseline_fail_closed(pytester: pytest.Pytester) -> None:
    """A merge has no baseline comparison: the carried-over regressions gate cannot be measured, so it fails."""
    session(pytester, BASELINE, report="base.json")
    args = ("--consistency-baseline=base.json", "--consistency-regressions-max=0")
    session(pytester, BASELINE, *args, "-k", "rep1 or rep2", report="s1.json")
    session(pytester, BASELINE, *args, "-k", "not (rep1 or rep2)", report="s2.json")
    merged = cli("merge", "s1.json", "s2.json", "-o", "m.json", cwd=pytester.path)
    report = load_report(pytester, "m.json")
    one_story(merged.returncode, report)
    assert merged.returncode == 1 and report["summary"]["gates"][0]["state"] == "fail"
