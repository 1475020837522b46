"""A sequential run recorded live from a loopback server replays to the same decisions, serially and with -n 2,
with no live call; a replay that would need a repetition it has no cassette for ends that task's sequence there
(undecided at the cap), never a live call.
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_openai import FakeOpenAI, Step
from suites import cli, load_report

#: n = 40, min_rate 0.8: solid's all-pass answers decide PASS at repetition 16; edge (a rate of 0.8) is undecided
#: once repetition 29 leaves no crossing reachable.
PATTERNS = {"solid": "P" * 40, "edge": "PPPPF" * 8}

AGENT = """
import pytest

@pytest.mark.parametrize("task", ["solid", "edge"])
@pytest.mark.repeat_consistency(n=40, min_rate=0.8)
def test_task(task, pinned_client, consistency):
    reply = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": f"{task} {consistency.repeat}"}])
    answer = reply.choices[0].message.content
    consistency.record(answer)
    assert answer == "widget"
"""


def answer(body: dict[str, Any]) -> Step:
    task, repeat = body["messages"][0]["content"].split()
    return Step(text="widget" if PATTERNS[task][int(repeat) - 1] == "P" else "gadget")


def run(pytester: pytest.Pytester, fake: FakeOpenAI, mode: str, report: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        f"--consistency-base-url={fake.base_url}",
        f"--consistency-record={mode}",
        f"--consistency-report={report}",
        "--consistency-sequential",
        "--no-consistency-preflight",
        "-p",
        "no:randomly",
        *args,
    )


def decisions(report: dict[str, Any]) -> dict[str, tuple[str, str | None, int]]:
    return {t["task_id"].split("[")[1][:-1]: (t["verdict"], t["decided_by"], t["scored"]) for t in report["tasks"]}


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """The sequential run recorded live: only the repetitions it needed have a cassette. Then the key is gone."""
    fake.answer = answer
    pytester.makepyfile(test_agent=AGENT)
    run(pytester, fake, "once", "live.json")
    assert decisions(load_report(pytester, "live.json")) == {
        "solid": ("pass", "evidence", 16),
        "edge": ("undecided", "cap", 29),
    }
    assert len(fake.requests) == 16 + 29
    assert len(list((pytester.path / "cassettes").rglob("rep-*.yaml"))) == 16 + 29
    monkeypatch.delenv("OPENAI_API_KEY")
    fake.reset()
    return pytester


def test_a_replay_reaches_the_recorded_decisions_serially_and_with_xdist(
    recorded: pytest.Pytester, fake: FakeOpenAI
) -> None:
    live = decisions(load_report(recorded, "live.json"))
    run(recorded, fake, "none", "serial.json")
    assert decisions(load_report(recorded, "serial.json")) == live
    run(recorded, fake, "none", "parallel.json", "-n", "2")
    parallel = decisions(load_report(recorded, "parallel.json"))
    # Under -n 2 a repetition handed out before the decision has no cassette: it is not run (no live call), and
    # the decision, read by repetition number, is the recorded one.
    assert {name: d[:2] for name, d in parallel.items()} == {name: d[:2] for name, d in live.items()}
    assert fake.requests == []
    # Each report's decisions recompute from the outcomes it keeps (pytest-consistency verify).
    for report in ("live.json", "serial.json", "parallel.json"):
        done = cli("verify", report, cwd=recorded.path)
        assert (done.returncode, done.stdout) == (0, "verified: 2 decisions\n"), (report, done.stdout, done.stderr)


def test_a_replay_missing_a_needed_repetition_is_undecided_at_the_cap_and_calls_nothing(
    recorded: pytest.Pytester, fake: FakeOpenAI
) -> None:
    missing = next((recorded.path / "cassettes").glob("test_agent/test_task_solid*/rep-10.yaml"))
    missing.unlink()
    result = run(recorded, fake, "none", "replay.json", "-rs")
    assert fake.requests == []
    found = decisions(load_report(recorded, "replay.json"))
    assert found == {"solid": ("undecided", "cap", 9), "edge": ("undecided", "cap", 29)}
    result.stdout.fnmatch_lines(
        ["*not recorded (--consistency-sequential): *solid* repetition 10 has no cassette at *rep-10.yaml*"]
    )
    assert cli("verify", "replay.json", cwd=recorded.path).stdout == "verified: 2 decisions\n"
