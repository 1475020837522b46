"""A simulated user's part of the gap (``analysis.user``), from typed records: the judge's construction with the
agent sampled and the user's script held."""

from __future__ import annotations

import pytest

from pytest_consistency.analysis.user import not_an_agent_verdict, scripts, user_split
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.trajectory import Decision
from pytest_consistency.stats.metrics import TaskCounts, gap_pp

URL = "http://h/v1/chat/completions"


def user_call(words: str, error: str | None = None) -> CallRecord:
    return CallRecord("POST", URL, "http://h/v1", None, "m", role="user", decision=Decision(words), error=error)


def rep(index: int, passed: bool, said: tuple[str, ...], n: int = 8, **fields: object) -> RepetitionResult:
    return RepetitionResult(
        task_id="t",
        nodeid="t[x]",
        repeat=index,
        n=n,
        k=2,
        min_pass=0.0,
        outcome="passed" if passed else "failed",
        calls=[user_call(words) for words in said],
        **fields,  # type: ignore[arg-type]
    )


def test_a_deterministic_agent_on_varying_users_leaves_the_whole_gap_to_the_user() -> None:
    # 4 recorded users x 2 agent samples: the agent does what the user's words say, every time.
    users = [("refund",), ("exchange",), ("refund",), ("exchange",)]
    reps = [rep(2 * r + j + 1, said == ("refund",), said) for r, said in enumerate(users) for j in range(2)]
    summary = user_split(reps, samples=2)
    [task] = summary.tasks
    f = task.figures
    assert f.flip_rate == 0.0 and f.flip_interval is not None and f.flip_interval.high < 1
    assert f.agent_gap_pp == 0.0
    assert f.user_gap_pp == f.observed_gap_pp == pytest.approx(gap_pp(TaskCounts(2, 4, 2)))
    assert [row.verdicts for row in task.repetitions] == ["PP", "FF", "PP", "FF"]


def test_a_flaky_agent_on_one_user_pools_every_repetition_and_is_the_whole_gap() -> None:
    # One script for all 4 repetitions: their majority is pooled (5 of 8 pass: pass), observed P F F P.
    outcomes = [True, True, False, True, False, True, True, False]
    summary = user_split([rep(i + 1, o, ("refund",)) for i, o in enumerate(outcomes)], samples=2)
    [task] = summary.tasks
    assert [row.majority for row in task.repetitions] == [True] * 4
    assert task.figures.user_gap_pp == 0.0
    assert task.figures.agent_gap_pp == task.figures.observed_gap_pp == pytest.approx(gap_pp(TaskCounts(2, 4, 2)))
    assert task.figures.flip_rate == 0.75  # 3 of the 4 pairs disagree
    assert summary.suite.agent_gap_interval is not None


def test_a_scripts_turns_are_the_longest_any_sample_played() -> None:
    # Repetition 1's first sample stopped after one user turn, its second played two: the script is both turns;
    # repetition 2's samples played the same two, so the two repetitions share a script.
    reps = [rep(1, True, ("a",)), rep(2, True, ("a", "b")), rep(3, False, ("a", "b")), rep(4, True, ("a", "b"))]
    found = scripts(reps, samples=2)
    assert found[("t", 1)] == found[("t", 2)]
    other = scripts([rep(1, True, ("a",)), rep(3, True, ("c",))], samples=2)
    assert other[("t", 1)] != other[("t", 2)]
    # A user call that did not play (beyond the recording) is no turn of the script.
    beyond = rep(1, True, ("a",))
    beyond.calls.append(user_call("", error="replay_mismatch"))
    assert scripts([beyond], samples=1) == scripts([rep(1, True, ("a",))], samples=1)


def test_samples_that_are_not_verdicts_are_excluded_and_said() -> None:
    beyond = rep(2, False, ("a",))
    beyond.calls.append(user_call("", error="replay_mismatch"))
    agent = CallRecord("POST", URL, "http://h/v1", None, "m", error="replay_mismatch")
    reps = [rep(1, True, ("a",)), beyond, rep(3, True, ("a",)), rep(4, True, ("a",))]
    reps[2].calls.append(agent)
    [task] = user_split(reps, samples=2).tasks
    assert task.excluded == [
        "rep1@agent2: the simulated user's recorded turns ran out (the agent took more turns than the recording)",
        "rep2@agent1: its agent's calls did not replay",
    ]
    assert not_an_agent_verdict(reps[0]) is None
    assert not_an_agent_verdict(rep(5, False, (), infrastructure="the route is down")) == "the route is down"
