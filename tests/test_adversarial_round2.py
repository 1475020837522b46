"""Adversarial round two: try to make the outputs tell different stories, infrastructure errors pass, shards and
merges pass what a full run fails, retries hide a first failure, secrets leak, or words disagree with numbers.

A test that fails here is a defect of the current code; one that passes is an attack that held.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Step
from suites import cli, load_report, pattern_suite, run_recorded


def closing_line(result: pytest.RunResult) -> str:
    return next(line for line in reversed(result.stdout.lines) if re.search(r" in [0-9.]+s", line))


def junit_failing(path: Path) -> list[str]:
    root = ET.parse(path).getroot()
    return [
        str(tc.get("name"))
        for tc in root.iter("testcase")
        if tc.find("failure") is not None or tc.find("error") is not None
    ]


def story(pytester: pytest.Pytester, result: pytest.RunResult, report: str = "report.json") -> dict[str, Any]:
    """Every output's verdict of one session: they must agree with the exit status."""
    data = load_report(pytester, report)
    ok = result.ret == 0
    assert data["summary"]["passed"] is ok, (result.ret, data["summary"])
    assert data["summary"]["exit_status"] == result.ret, (result.ret, data["summary"]["exit_status"])
    line = closing_line(result)
    if not ok:
        assert "failed" in line or "error" in line or "interrupted" in line, line
    out = result.stdout.str()
    if (pytester.path / "junit.xml").exists():
        failing = junit_failing(pytester.path / "junit.xml")
        assert bool(failing) is (not ok), (failing, result.ret)
    show = cli("show", report, "--format", "junit", cwd=pytester.path)
    if show.returncode in (0, 1) and show.stdout.strip().startswith("<"):
        cases = [
            tc
            for tc in ET.fromstring(show.stdout).iter("testcase")
            if tc.find("failure") is not None or tc.find("error") is not None
        ]
        assert bool(cases) is (not ok), show.stdout
    if (pytester.path / "summary.md").exists():
        md = (pytester.path / "summary.md").read_text()
        assert ("❌" in md) is (not ok), md[:800]
    merged = cli("merge", report, "-o", "merged.json", cwd=pytester.path)
    assert (merged.returncode == 0) is ok, (result.ret, merged.returncode, merged.stdout, merged.stderr, out[-1500:])
    return data


OUT = ["--consistency-report=report.json", "--junitxml=junit.xml", "--consistency-md=summary.md"]


# --- 1. one story ----------------------------------------------------------------------------------------------


def test_an_unmarked_failure_among_tolerated_tasks_fails_every_output(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a=pattern_suite({"a": "PFP"}, marker="min_pass=0.5"),
        test_b="def test_plain():\n    assert False, 'plain failure'\n",
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_strict_xfail_that_passes_fails_every_output(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.xfail(strict=True, reason="known")
@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    consistency.record("x")
"""
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_non_strict_xfail_task_is_green_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.xfail(reason="known")
@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    consistency.record("x")
    assert False
"""
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 0
    story(pytester, result)


def test_a_skipped_task_with_a_gate_is_not_measurable_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    pytest.skip("no data")
"""
    )
    result = pytester.runpytest("--consistency-gap-max=10", *OUT)
    assert result.ret == 1
    story(pytester, result)


def test_maxfail_with_tolerated_tasks_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "FPPP", "b": "FPPP", "c": "PPPP"}, marker="min_pass=0.5"))
    result = pytester.runpytest("--maxfail=2", *OUT)
    assert result.ret != 0
    story(pytester, result)


def test_last_failed_rerun_of_a_tolerated_task_never_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "PPPF", "b": "FFFF"}, marker="min_pass=0.5"))
    first = pytester.runpytest("-p", "cacheprovider")
    assert first.ret == 1
    result = pytester.runpytest("-p", "cacheprovider", "--lf", *OUT)
    assert result.ret != 0, result.stdout.str()
    story(pytester, result)


def test_pytest_exit_returncode_zero_mid_task_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_task(consistency):
    consistency.record("x")
    if consistency.repeat == 2:
        pytest.exit("stop", returncode=0)
"""
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_collection_error_beside_tolerated_tasks_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a=pattern_suite({"a": "PFP"}, marker="min_pass=0.5"),
        test_broken="import no_such_module_anywhere\n",
    )
    result = pytester.runpytest("--continue-on-collection-errors", *OUT)
    assert result.ret == 1
    story(pytester, result)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_inconclusive_bound_gate_is_one_story(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makepyfile(pattern_suite({"a": "PPPPF", "b": "PPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest("--consistency-gate-on=bound", "--consistency-gap-max=10", *workers, *OUT)
    story(pytester, result)


def test_an_inconclusive_gate_passed_by_option_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "PPPPF", "b": "PPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest(
        "--consistency-gate-on=bound", "--consistency-gap-max=10", "--consistency-inconclusive=pass", *OUT
    )
    story(pytester, result)


def test_adaptive_with_gate_is_one_story_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "FFFFF", "b": "PPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest("--consistency-adaptive", "-n", "2", *OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_summary_hook_that_raises_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
def pytest_consistency_summary(summary, config):
    raise RuntimeError("dashboard down")
"""
    )
    pytester.makepyfile(pattern_suite({"a": "PPP"}))
    result = pytester.runpytest(*OUT)
    story(pytester, result)


# --- 2. infrastructure errors, 3. shards and merge -------------------------------------------------------------

CAUGHT = """
import os, pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_task(pinned_client, consistency):
    prompt = "do the task"
    if os.environ.get("CHANGED_REP") == str(consistency.repeat):
        prompt = "a prompt that was never recorded"
    try:
        reply = pinned_client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": prompt}])
        answer = reply.choices[0].message.content
    except Exception:
        answer = "the risk is low"  # the agent swallows the error and carries on
    consistency.record(answer)
"""


def test_a_caught_replay_mismatch_in_a_shard_breaks_the_shard_and_the_merge(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.script(*[Step(text="the risk is low")] * 3)
    pytester.makepyfile(test_agent=CAUGHT, test_other=pattern_suite({"b": "PPP"}))
    assert run_recorded(pytester, fake.base_url, "once").ret == 0
    fake.reset()
    monkeypatch.setenv("CHANGED_REP", "2")
    shards = [
        run_recorded(pytester, fake.base_url, "none", f"--consistency-shard={i}/2", f"--consistency-report=s{i}.json")
        for i in (1, 2)
    ]
    assert sorted(r.ret for r in shards) == [0, 1], [r.stdout.str()[-800:] for r in shards]
    merged = cli("merge", "s1.json", "s2.json", "-o", "m.json", cwd=pytester.path)
    assert merged.returncode == 1, merged.stdout
    assert any(t["verdict"] == "error" for t in load_report(pytester, "m.json")["tasks"])


def test_a_caught_replay_mismatch_under_xdist_is_an_error(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.script(*[Step(text="the risk is low")] * 3)
    pytester.makepyfile(test_agent=CAUGHT)
    assert run_recorded(pytester, fake.base_url, "once").ret == 0
    fake.reset()
    monkeypatch.setenv("CHANGED_REP", "3")
    result = run_recorded(pytester, fake.base_url, "none", "-n", "2", "--junitxml=junit.xml")
    assert result.ret == 1, result.stdout.str()
    assert load_report(pytester)["tasks"][0]["verdict"] == "error"
    assert "task in error" in closing_line(result)
    story(pytester, result)


def test_an_unmarked_failure_in_a_shard_fails_the_merge(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a=pattern_suite({"a": "PPP", "b": "PPP"}),
        test_b="def test_plain():\n    assert False\n",
    )
    results = [pytester.runpytest(f"--consistency-shard={i}/2", f"--consistency-report=s{i}.json") for i in (1, 2)]
    assert all(r.ret == 0 for r in results)
    merged = cli("merge", "s1.json", "s2.json", "-o", "m.json", cwd=pytester.path)
    assert merged.returncode == 1, merged.stdout


EQUIV_RAISES = """
def pytest_consistency_answers_equivalent(left, right, task_id):
    raise RuntimeError("cannot compare")
"""


def test_a_merge_never_passes_a_run_whose_equivalence_hook_raised(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(EQUIV_RAISES)
    pytester.makepyfile(pattern_suite({"a": "PPP"}, answers={"a": ["x", "y", "x"]}))
    full = pytester.runpytest("--consistency-report=report.json")
    assert full.ret == 1  # docs/metrics.md: a figure is missing, the run fails
    merged = cli("merge", "report.json", "-o", "m.json", cwd=pytester.path)
    assert merged.returncode == 1, merged.stdout  # the merge passes what the full run failed


def test_a_merge_never_passes_shards_whose_equivalence_hook_raised(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(EQUIV_RAISES)
    pytester.makepyfile(pattern_suite({"a": "PPP", "b": "PPP"}, answers={"a": ["x", "y", "x"], "b": ["z"] * 3}))
    assert pytester.runpytest("--consistency-report=full.json").ret == 1
    shards = [pytester.runpytest(f"--consistency-shard={i}/2", f"--consistency-report=s{i}.json") for i in (1, 2)]
    merged = cli("merge", "s1.json", "s2.json", "-o", "m.json", cwd=pytester.path)
    assert merged.returncode == 1 or any(r.ret == 1 for r in shards), (merged.stdout, [r.ret for r in shards])


# --- 4. retry plugins ------------------------------------------------------------------------------------------


def test_reruns_never_hide_a_first_failure_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

SEEN = {}

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency, request):
    key = consistency.repeat
    SEEN[key] = SEEN.get(key, 0) + 1
    consistency.record("x")
    assert not (key == 2 and SEEN[key] == 1)
"""
    )
    result = pytester.runpytest("--reruns=2", "-n", "2", *OUT)
    assert result.ret == 1, result.stdout.str()
    data = story(pytester, result)
    assert data["tasks"][0]["repetitions"][1]["outcome"] == "failed"


# --- 5. secrets ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
def test_a_short_key_in_a_failure_message_is_never_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "sk-1234")
    pytester.makepyfile(
        f"""
import os, pytest

@pytest.mark.repeat_consistency(n=2, min_pass=0.5)
def test_task(consistency):
    consistency.record("x")
    assert consistency.repeat == 1, "the agent used key " + os.environ[{variable!r}] + " and failed"
"""
    )
    result = pytester.runpytest(*OUT, "--consistency-html=page.html", "-rA", "-vv")
    texts = {"stdout": result.stdout.str() + result.stderr.str()}
    for name in ("report.json", "junit.xml", "summary.md", "page.html"):
        texts[name] = (pytester.path / name).read_text()
    texts["show-junit"] = cli("show", "report.json", "--format", "junit", cwd=pytester.path).stdout
    texts["show"] = cli("show", "report.json", cwd=pytester.path).stdout
    leaks = [name for name, text in texts.items() if re.search(r"(?<![\w-])sk-1234(?![\w-])", text)]
    assert leaks == []
    assert "the agent used key" in json.dumps(load_report(pytester))


# --- 6. words match numbers ------------------------------------------------------------------------------------


def test_eighty_column_ids_are_never_cut_into_ambiguity(pytester: pytest.Pytester) -> None:
    long = "find-items-under-twenty-and-return-their-names-in-order-"
    patterns = {long + "alpha": "PPF", long + "alphb": "PPP"}
    pytester.makepyfile(pattern_suite(patterns, marker="min_pass=0.5"))
    result = pytester.runpytest("--consistency-report=report.json")
    assert result.ret == 0
    shown = cli("show", "report.json", cwd=pytester.path).stdout
    for text in (result.stdout.str(), shown):
        for task in patterns:
            assert f"test_task[{task}]" in text.replace("\n", "") or f"test_task[{task}]" in text, text
    assert "met min_pass 0.5, 1 failed" in shown
