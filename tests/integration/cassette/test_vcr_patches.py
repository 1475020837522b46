"""The cached vcrpy patches keep behaviour: a replay without its cassette file fails the repetition and sends
nothing, consecutive sessions in one process replay like fresh ones, and a repetition is never answered from
another repetition's cassette.
"""

from __future__ import annotations

import re

import pytest
from fake_anthropic import GOOD_KEY, MODEL, FakeAnthropic, Step
from suites import anthropic_suite as suite
from suites import load_report as report
from suites import report_calls as calls
from suites import run_mode as run


def task(pytester: pytest.Pytester, name: str) -> dict:
    (found,) = [t for t in report(pytester)["tasks"] if t["task_id"].endswith(name)]
    return found


NO_CASSETTE_TASKS = """
import os

import pytest
import requests
import urllib3

ASK = dict(max_tokens=8, messages=[{"role": "user", "content": "hi"}])

@pytest.mark.repeat_consistency(n=1)
def test_pinned(pinned_anthropic_client, consistency):
    pinned_anthropic_client.messages.create(model=MODEL, **ASK)

@pytest.mark.repeat_consistency(n=1)
def test_pinned_async(async_pinned_anthropic_client, consistency):
    import asyncio
    asyncio.run(async_pinned_anthropic_client.messages.create(model=MODEL, **ASK))

@pytest.mark.repeat_consistency(n=1)
def test_own_httpx(consistency):
    import httpx
    with httpx.Client() as client:
        client.post(
            os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
            headers={"x-api-key": "dummy-replay-key", "anthropic-version": "2023-06-01"},
            json={"model": MODEL, **ASK},
        )

@pytest.mark.repeat_consistency(n=1)
def test_requests(consistency):
    try:
        requests.get(os.environ["ANTHROPIC_BASE_URL"] + "/v1/models", timeout=5)
    except Exception as exc:
        consistency.record(repr(exc))
        raise

@pytest.mark.repeat_consistency(n=1)
def test_urllib3(consistency):
    try:
        urllib3.PoolManager(retries=False).request("GET", os.environ["ANTHROPIC_BASE_URL"] + "/v1/models")
    except Exception as exc:
        consistency.record(repr(exc))
        raise
"""


def test_replay_without_a_cassette_file_fails_the_repetition_and_sends_nothing(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("CI", "true")  # a task never recorded fails on CI (elsewhere it is skipped: test_first_contact)
    pytester.makepyfile(test_agent=suite(NO_CASSETTE_TASKS))
    result = run(pytester, "none")
    assert claude.requests == []
    assert result.ret == 1
    result.assert_outcomes(failed=5)
    out = result.stdout.str()
    for name in ("test_pinned", "test_pinned_async", "test_own_httpx"):
        assert f"{name}: not recorded yet: no cassette under cassettes/test_agent/{name}/; record it with: " in out
    (own,) = [c for c in calls(pytester) if not c["pinned"]]
    assert own["error"] == "replay_mismatch" and own["provider"] == "anthropic"
    pinned = [c for c in calls(pytester) if c["pinned"]]
    # the SDK retries a connection error once (route retries 1): two refused attempts per task, none sent
    assert len(pinned) == 4 and all(c["error"] == "replay_mismatch" for c in pinned)
    assert all(task(pytester, name)["drift"]["errors"].get("replay_mismatch") for name in ("test_pinned",))
    for name in ("test_requests", "test_urllib3"):
        (answer,) = task(pytester, name)["answers"]
        assert "blocked" in answer, answer
    assert not (pytester.path / "cassettes").exists()


TWO_SESSION_TASK = """
import os

import pytest
import requests

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_anthropic_client, consistency):
    reply = pinned_anthropic_client.messages.create(
        model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "same prompt every time"}])
    # the same request through a client the plugin does not observe (requests): only vcrpy answers it
    raw = requests.post(
        os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
        headers={"x-api-key": os.environ.get("ANTHROPIC_API_KEY") or "dummy", "anthropic-version": "2023-06-01"},
        json={"model": MODEL, "max_tokens": 8, "messages": [{"role": "user", "content": "same prompt every time"}]},
        timeout=10,
    )
    consistency.record([reply.content[0].text, raw.json()["content"][0]["text"]])
"""


def test_consecutive_sessions_in_one_process_replay_like_fresh_ones(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude.script(*(Step(text=t) for t in ("a1", "a2", "b1", "b2", "c1", "c2")))
    pytester.makepyfile(test_agent=suite(TWO_SESSION_TASK))
    assert run(pytester, "once").ret == 0
    assert len(claude.requests) == 6
    assert task(pytester, "test_task")["answers"] == [["a1", "a2"], ["b1", "b2"], ["c1", "c2"]]
    folder = pytester.path / "cassettes" / "test_agent" / "test_task"

    # 1. replay, then replay again after deleting repetition 2's cassette: never rep 1's answer for rep 2
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    first = run(pytester, "none")
    assert first.ret == 0, first.stdout.str()
    assert task(pytester, "test_task")["answers"] == [["a1", "a2"], ["b1", "b2"], ["c1", "c2"]]
    (folder / "rep-2.yaml").unlink()
    second = run(pytester, "none")
    assert claude.requests == []
    reps = task(pytester, "test_task")["repetitions"]
    assert [r["outcome"] for r in reps] == ["passed", "failed", "passed"], second.stdout.str()
    assert [r["answer"] for r in reps] == [["a1", "a2"], None, ["c1", "c2"]]
    assert "no cassette at cassettes/test_agent/test_task/rep-2.yaml" in second.stdout.str()

    # 2. record only the missing repetition, in the same process
    monkeypatch.setenv("ANTHROPIC_API_KEY", GOOD_KEY)
    claude.script(Step(text="z1"), Step(text="z2"))
    third = run(pytester, "once")
    assert third.ret == 0, third.stdout.str()
    assert len(claude.requests) == 2
    assert task(pytester, "test_task")["answers"] == [["a1", "a2"], ["z1", "z2"], ["c1", "c2"]]

    # 3. the model changed: nothing may be answered from the old cassettes
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    pytester.makepyfile(test_agent=suite(TWO_SESSION_TASK).replace(f"MODEL = {MODEL!r}", "MODEL = 'claude-new'"))
    fourth = run(pytester, "none")
    assert claude.requests == []
    reps = task(pytester, "test_task")["repetitions"]
    assert [r["outcome"] for r in reps] == ["failed"] * 3, fourth.stdout.str()
    assert all(r["answer"] is None for r in reps)


def test_a_repetition_is_never_answered_from_another_repetitions_cassette(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repetition 2 asks for more than it recorded: the extra request must not be served by rep 1's cassette."""
    body = TWO_SESSION_TASK.replace("n=3", "n=2")
    claude.script(*(Step(text=t) for t in ("a1", "a2", "b1", "b2")))
    pytester.makepyfile(test_agent=suite(body))
    assert run(pytester, "once").ret == 0
    # rep 2's cassette now records other requests (replays match on the digest of the body as sent): only rep 1's
    # cassette, which the cached patches served just before, holds a match
    folder = pytester.path / "cassettes" / "test_agent" / "test_task"
    text = (folder / "rep-2.yaml").read_text()
    changed = re.sub(r"(x-consistency-body-digest:\n\s+- sha256:)[0-9a-f]+", r"\g<1>" + "0" * 32, text)
    assert changed.count("0" * 32) == 2
    (folder / "rep-2.yaml").write_text(changed)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    result = run(pytester, "none")
    assert claude.requests == []
    reps = task(pytester, "test_task")["repetitions"]
    assert [r["outcome"] for r in reps] == ["passed", "failed"], result.stdout.str()
    assert reps[1]["answer"] is None
