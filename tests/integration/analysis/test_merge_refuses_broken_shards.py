"""Infrastructure errors never pass, and a merge never passes what a full run fails: a caught replay mismatch in
a shard or under xdist, an unmarked failure in a shard, an equivalence hook that raised. Adversarial round two,
parts 2 and 3.
"""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAI, Step
from stories import closing_line, story
from suites import cli, load_report, pattern_suite, run_recorded

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
