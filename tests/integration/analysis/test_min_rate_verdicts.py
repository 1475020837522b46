"""``min_rate``: a task passes, fails or is undecided on exact tests, and every output says the same, whatever
``--consistency-inconclusive`` decides about the exit status; a task whose n cannot pass is warned about once."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from stories import story
from suites import cli, junit_props, load_report

pytest_plugins = ["pytester"]

# 20 repetitions: 20/20 shows >= 0.8 (lower bound 0.861), 15/20 shows neither, 10/20 shows < 0.8.
PATTERNS = {"steady": "P" * 20, "near": "P" * 15 + "F" * 5, "bad": "PF" * 10}
OUT = ("--consistency-report=report.json", "--junitxml=junit.xml", "--consistency-md=summary.md")


def suite(pytester: pytest.Pytester, patterns: dict[str, str], marker: str) -> None:
    n = len(next(iter(patterns.values())))
    pytester.makepyfile(
        test_task=f"""
import pytest

PATTERNS = {patterns!r}

@pytest.mark.parametrize("task", list(PATTERNS))
@pytest.mark.repeat_consistency(n={n}, {marker})
def test_task(task, consistency):
    assert PATTERNS[task][consistency.repeat - 1] == "P"
"""
    )


def verdicts(pytester: pytest.Pytester, name: str = "report.json") -> dict[str, str]:
    return {t["task_id"].split("[")[1][:-1]: t["verdict"] for t in load_report(pytester, name)["tasks"]}


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_pass_fail_and_undecided_in_every_output(pytester: pytest.Pytester, xdist: list[str]) -> None:
    suite(pytester, {k: v for k, v in PATTERNS.items() if k != "bad"}, "min_rate=0.8")
    result = pytester.runpytest(*OUT, *xdist)
    assert result.ret == 0  # undecided is no failure by default: the run fails only on evidence
    data = story(pytester, result)
    assert verdicts(pytester) == {"steady": "pass", "near": "undecided"}
    near = next(t for t in data["tasks"] if "near" in t["task_id"])
    assert near["min_rate"] == 0.8 and near["plan_n"] > 20
    assert near["rate_bounds"]["low"] < 0.8 < near["rate_bounds"]["high"]
    out = result.stdout.str()
    assert "pass (min_rate 0.8 shown: 0.86-1.00)" in out
    assert (
        f"undecided (0.54-0.90 holds min_rate 0.8; a fresh run at n = {near['plan_n']} would likely decide it)" in out
    )
    # the near task's five failures are tolerated (undecided counts as passed), not failures of the run
    assert "5 tolerated" in out.splitlines()[-1]
    md = (pytester.path / "summary.md").read_text()
    assert "1 task(s) undecided, counted as passed (--consistency-inconclusive=pass)" in md
    cases = {c.get("name"): junit_props(c) for c in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")}
    assert cases["test_task[near-rep20]"]["consistency.task.verdict"] == "undecided"
    assert cases["test_task[near-rep20]"]["consistency.task.min_rate"] == "0.8"
    html = cli("show", "report.json", "--format", "html", cwd=pytester.path).stdout
    assert "undecided (0.54-0.90 holds min_rate 0.8" in html and "1 undecided task(s) (counted as passed)" in html


def test_undecided_fails_the_run_when_counted_so(pytester: pytest.Pytester) -> None:
    suite(pytester, {k: v for k, v in PATTERNS.items() if k != "bad"}, "min_rate=0.8")
    result = pytester.runpytest(*OUT, "--consistency-inconclusive=fail")
    assert result.ret == 1
    story(pytester, result)
    assert "1 task undecided" in result.stdout.lines[-1]
    assert "1 task(s) undecided (--consistency-inconclusive=fail)" in result.stdout.str()
    # the JUnit file has a failing testcase for the run, beside the undecided task's failed repetitions
    failing = [
        c.get("name")
        for c in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
        if c.find("failure") is not None
    ]
    assert "run" in failing


def test_a_failing_task_fails_and_a_merge_of_shards_decides_the_same(pytester: pytest.Pytester) -> None:
    suite(pytester, PATTERNS, "min_rate=0.8")
    whole = pytester.runpytest("--consistency-report=whole.json")
    assert whole.ret == 1
    assert verdicts(pytester, "whole.json") == {"steady": "pass", "near": "undecided", "bad": "fail"}
    for shard in (1, 2):
        pytester.runpytest(f"--consistency-shard={shard}/2", f"--consistency-report=shard{shard}.json")
    merged = cli("merge", "shard1.json", "shard2.json", "-o", "merged.json", cwd=pytester.path)
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert verdicts(pytester, "merged.json") == verdicts(pytester, "whole.json")


def test_a_task_whose_n_cannot_pass_is_warned_about_once(pytester: pytest.Pytester) -> None:
    suite(pytester, {"a": "PPPPP", "b": "PPPPP"}, "min_rate=0.8")
    for xdist in ([], ["-n", "2"]):
        result = pytester.runpytest("-p", "no:cacheprovider", *xdist)
        text = result.stdout.str()
        warning = "n = 5 cannot show a rate of at least 0.8 at 95 %: 5/5 gives a lower bound of 0.55; n = 14 can"
        assert text.count(warning) == 1, text
        assert sum("undecided (0.55-1.00 holds min_rate 0.8" in line for line in text.splitlines()) == 2, text


def test_min_pass_and_min_rate_together_are_refused(pytester: pytest.Pytester) -> None:
    suite(pytester, {"a": "PPPPP"}, "min_pass=0.8, min_rate=0.8")
    result = pytester.runpytest()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*give min_pass (a rule on the observed count*or min_rate*not both*"])


def test_the_default_bar_comes_from_the_option_and_a_markers_own_wins(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_task="""
import pytest

@pytest.mark.repeat_consistency(n=20)
def test_default(consistency):
    assert consistency.repeat != 1

@pytest.mark.repeat_consistency(n=20, min_pass=0.9)
def test_own(consistency):
    assert consistency.repeat != 1
"""
    )
    result = pytester.runpytest("--consistency-min-rate=0.8", "--consistency-report=report.json")
    tasks = {t["task_id"]: t for t in load_report(pytester)["tasks"]}
    assert tasks["test_task.py::test_default"]["min_rate"] == 0.8
    assert tasks["test_task.py::test_default"]["verdict"] == "undecided"  # 19/20 does not show >= 0.8 at 95 %
    assert tasks["test_task.py::test_own"]["min_rate"] is None and tasks["test_task.py::test_own"]["verdict"] == "pass"
    assert result.ret == 0
    bad = pytester.runpytest("--consistency-min-rate=1")
    assert bad.ret == 4
    bad.stderr.fnmatch_lines(["*--consistency-min-rate*strictly between 0 and 1*"])


def test_both_default_bars_are_refused_naming_where_each_came_from(pytester: pytest.Pytester) -> None:
    suite(pytester, {"a": "PPPPP"}, "k=5")
    pytester.makeini("[pytest]\nconsistency_min_rate = 0.8\n")
    result = pytester.runpytest("--consistency-min-pass=0.9")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [
            "*--consistency-min-pass (--consistency-min-pass) and --consistency-min-rate "
            "(*tox.ini (consistency_min_rate)) are both set*keep one*"
        ]
    )
