"""The suite gap gate in sequential mode (``--consistency-sequential --consistency-gap-max``): decided in rounds of
a pinned k, later rounds not needed once it is decided; the same decision serially and with ``-n 2``; a gap gate
whose k follows n is refused with the fix."""

from __future__ import annotations

from typing import Any

import pytest
from suites import cli, load_report, pattern_suite


def steady(tasks: int, n: int) -> dict[str, str]:
    return {f"t{i:02d}": "P" * n for i in range(tasks)}


def mixed(tasks: int, n: int, flaky: int) -> dict[str, str]:
    """``flaky`` tasks fail every third repetition (by number), the rest always pass."""
    patterns = steady(tasks, n)
    for i in range(flaky):
        patterns[f"t{i:02d}"] = "".join("F" if (r + i) % 3 == 0 else "P" for r in range(1, n + 1))
    return patterns


def suite(report: dict[str, Any]) -> dict[str, Any]:
    return report["summary"]["sequential_suite"]


def test_a_gap_gate_decided_after_round_one_skips_the_later_rounds_as_not_needed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(steady(40, 10), marker="k=5"))
    result = pytester.runpytest(
        "--consistency-report=s.json", "--consistency-sequential", "--consistency-gap-max=15", "-p", "no:randomly"
    )
    assert result.ret == 0
    result.assert_outcomes(passed=200, skipped=200)
    report = load_report(pytester, "s.json")
    facts = suite(report)
    assert all(t["outcomes"][5:] == ["curtailed"] * 5 for t in report["tasks"])  # not needed, not skipped
    assert (facts["verdict"], facts["decided_by"], facts["decided_after"]) == ("pass", "evidence", 1)
    assert facts["repetitions_used"] == 200 and facts["cap_repetitions"] == 400
    result.stdout.fnmatch_lines(
        [
            "consistency gap in rounds of k = 5 (alpha 0.05, seed 0): pass, decided after round 1; 200 repetitions*",
        ]
    )


def test_serial_and_two_workers_reach_the_same_decision_after_the_same_rounds(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(mixed(30, 20, 6), marker="k=5"))
    common = ("--consistency-sequential", "--consistency-gap-max=25", "--consistency-seed=3", "-p", "no:randomly")
    serial = pytester.runpytest("--consistency-report=s.json", "-v", *common)
    parallel = pytester.runpytest("--consistency-report=p.json", "-n", "2", *common)
    one, two = suite(load_report(pytester, "s.json")), suite(load_report(pytester, "p.json"))
    assert one == two
    assert one["decided_after"] >= 2 and one["seed"] == 3  # the later rounds were read, the same tasks drawn
    serial.stdout.fnmatch_lines(
        ["round 1: 30 of 30 tasks, consistency gap bounds *", "round 2: * of 30 tasks, consistency gap bounds *"]
    )
    assert serial.ret == parallel.ret


def test_a_gap_gate_whose_k_follows_n_is_refused_with_the_fix(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(steady(3, 10)))
    result = pytester.runpytest("--consistency-sequential", "--consistency-gap-max=10", "-p", "no:randomly")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*k = n = 10 here*pin k in the marker, e.g. repeat_consistency(n=20, k=5)*"])


AGENT = """
import pytest

TASKS = [f"t{i:02d}" for i in range(30)]

@pytest.mark.parametrize("task", TASKS)
@pytest.mark.repeat_consistency(n=15, k=5)
def test_task(task, pinned_client, consistency):
    reply = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": f"{task} {consistency.repeat}"}])
    assert reply.choices[0].message.content == "widget"
"""


def record(pytester: pytest.Pytester, fake: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """The agent recorded live in rounds (only the repetitions the rounds needed have a cassette), then the key is
    gone; the options every run of it passes."""
    from fake_openai import Step

    patterns = mixed(30, 15, 6)

    def answer(body: dict[str, Any]) -> Step:
        task, repeat = body["messages"][0]["content"].split()
        return Step(text="widget" if patterns[task][int(repeat) - 1] == "P" else "gadget")

    fake.answer = answer
    pytester.makepyfile(test_agent=AGENT)
    common = (
        f"--consistency-base-url={fake.base_url}",
        "--consistency-sequential",
        "--consistency-gap-max=25",
        "--no-consistency-preflight",
        "-p",
        "no:randomly",
    )
    pytester.runpytest("--consistency-record=once", "--consistency-report=live.json", *common)
    live = suite(load_report(pytester, "live.json"))
    assert live["decided_after"] >= 2 and len(fake.requests) == live["repetitions_used"]
    monkeypatch.delenv("OPENAI_API_KEY")
    fake.reset()
    return common


def test_a_replay_reaches_the_recorded_rounds_serially_and_with_xdist_and_calls_nothing(
    pytester: pytest.Pytester, fake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    common = record(pytester, fake, monkeypatch)
    live = suite(load_report(pytester, "live.json"))
    pytester.runpytest("--consistency-record=none", "--consistency-report=serial.json", *common)
    pytester.runpytest("--consistency-record=none", "--consistency-report=parallel.json", "-n", "2", *common)
    assert suite(load_report(pytester, "serial.json")) == live == suite(load_report(pytester, "parallel.json"))
    assert fake.requests == []


def test_shards_run_their_rounds_and_the_merge_decides_the_gate_once_on_the_union(pytester: pytest.Pytester) -> None:
    """A shard sees half the tasks: alone it never stops the rounds; the merge decides on all 40 after round 1, as
    the unsharded run does, and says how many repetitions ran that no round read."""
    pytester.makepyfile(test_task=pattern_suite(steady(40, 10), marker="k=5"))
    common = ("--consistency-sequential", "--consistency-gap-max=15", "-p", "no:randomly")
    pytester.runpytest("--consistency-report=full.json", *common)
    for i in (1, 2):
        pytester.runpytest(f"--consistency-shard={i}/2", f"--consistency-report=s{i}.json", *common)
    merged = cli("merge", "s1.json", "s2.json", "-o", "merged.json", cwd=pytester.path)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    full, joined = suite(load_report(pytester, "full.json")), suite(load_report(pytester, "merged.json"))
    assert (joined["verdict"], joined["decided_after"]) == (full["verdict"], full["decided_after"]) == ("pass", 1)
    assert joined["rounds"] == full["rounds"] and full["beyond"] == 0
    ran = sum(t["scored"] for t in load_report(pytester, "merged.json")["tasks"])
    assert joined["beyond"] == ran - 200 > 0  # the shards' round 2, run after the union's decision
    assert "more ran that no round read" in merged.stdout


def test_a_replay_missing_a_repetition_a_round_needs_ends_the_rounds_undecided_and_calls_nothing(
    pytester: pytest.Pytester, fake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    common = record(pytester, fake, monkeypatch)
    drawn = [
        task for task, inside in suite(load_report(pytester, "live.json"))["rounds"][1]["included"].items() if inside
    ]
    name = drawn[0].split("[")[1].rstrip("]")  # a task drawn for round 2: its repetition 7 is needed
    next((pytester.path / "cassettes").glob(f"test_agent/test_task_{name}*/rep-7.yaml")).unlink()
    pytester.runpytest("--consistency-record=none", "--consistency-report=replay.json", *common)
    found = suite(load_report(pytester, "replay.json"))
    assert (found["verdict"], found["decided_by"], found["decided_after"]) == ("undecided", "cap", 1)
    assert name in found["ended"] and "round 2" in found["ended"]
    assert fake.requests == []
