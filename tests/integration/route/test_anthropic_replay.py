"""The Anthropic route's replay equals its recording (JSON, streamed, async, retried; serial and under xdist), and
a replay shows each route's recorded key on its own route (from the adversarial tests of the routes, part 2).
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_anthropic import GOOD_KEY, MODEL, FakeAnthropic, Step
from suites import anthropic_suite as suite
from suites import load_report as report
from suites import report_calls as calls
from suites import run_mode as run
from suites import without_timings

from pytest_consistency.secrets.keys import fingerprint

MIXED_TASKS = """
import asyncio

import pytest

ASK = dict(model=MODEL, max_tokens=32)

@pytest.mark.repeat_consistency(n=2)
def test_json(pinned_anthropic_client, consistency):
    reply = pinned_anthropic_client.messages.create(**ASK, messages=[{"role": "user", "content": "json please"}])
    consistency.record(reply.content[0].text)

@pytest.mark.repeat_consistency(n=2)
def test_stream(pinned_anthropic_client, consistency):
    with pinned_anthropic_client.messages.stream(
        **ASK, messages=[{"role": "user", "content": "stream it please"}]
    ) as stream:
        text = "".join(stream.text_stream)
    consistency.record(text)

@pytest.mark.repeat_consistency(n=2)
def test_async(async_pinned_anthropic_client, consistency):
    async def go():
        reply = await async_pinned_anthropic_client.messages.create(
            **ASK, messages=[{"role": "user", "content": "async please"}])
        return reply.content[0].text
    consistency.record(asyncio.run(go()))

@pytest.mark.repeat_consistency(n=2)
def test_async_stream(async_pinned_anthropic_client, consistency):
    async def go():
        stream = await async_pinned_anthropic_client.messages.create(
            **ASK, stream=True, messages=[{"role": "user", "content": "async stream"}])
        parts = []
        async for event in stream:
            if event.type == "content_block_delta":
                parts.append(event.delta.text)
        return "".join(parts)
    consistency.record(asyncio.run(go()))

@pytest.mark.repeat_consistency(n=1)
def test_retry(pinned_anthropic_client, consistency):
    reply = pinned_anthropic_client.messages.create(**ASK, messages=[{"role": "user", "content": "retry please"}])
    consistency.record(reply.content[0].text)
"""


MIXED_SCRIPT = (
    Step(text="alice", cache_read_input_tokens=5, cache_creation_input_tokens=2),
    Step(text="alice", served_model=MODEL + "-20250101"),
    Step(text="bob carol dave"),
    Step(text="bob carol"),
    Step(text="erin", output_tokens=9),
    Step(text="frank"),
    Step(text="gina hal"),
    Step(text="gina hal ian"),
    Step(status=529, retry_after="0"),
    Step(text="judy"),
)


CALL_FIELDS = (
    "provider",
    "method",
    "url",
    "base_url",
    "status",
    "error",
    "stream",
    "pinned",
    "model_requested",
    "model_served",
    "prompt_tokens",
    "completion_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "total_tokens",
    "tokens_estimated",
    "retry_index",
    "key_fingerprint",
)


def facts(pytester: pytest.Pytester) -> dict[str, Any]:
    data = report(pytester)
    return {
        t["task_id"]: {
            "answers": t["answers"],
            "drift": t["drift"]["kinds"],
            "retries": t["drift"]["retries"],
            "tokens": t["drift"]["tokens"],
            "calls": [[{k: c[k] for k in CALL_FIELDS} for c in r["calls"]] for r in t["repetitions"]],
        }
        for t in data["tasks"]
    }


@pytest.fixture
def recorded_mixed(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> tuple[pytest.RunResult, dict[str, Any], dict[str, Any]]:
    claude.script(*MIXED_SCRIPT)
    pytester.makepyfile(test_agent=suite(MIXED_TASKS))
    result = run(pytester, "once", "--consistency-max-retries=2")
    assert result.ret == 0, result.stdout.str()
    assert len(claude.requests) == len(MIXED_SCRIPT)
    live = facts(pytester)
    raw = report(pytester)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    return result, live, raw


def test_anthropic_replay_equals_the_recording(
    pytester: pytest.Pytester, claude: FakeAnthropic, recorded_mixed: tuple[pytest.RunResult, dict, dict]
) -> None:
    _, live, _ = recorded_mixed
    # the recording itself read the wire right
    assert live[next(t for t in live if t.endswith("test_retry"))]["calls"][0][0]["status"] == 529
    assert live[next(t for t in live if t.endswith("test_retry"))]["calls"][0][1]["retry_index"] == 1
    json_task = live[next(t for t in live if t.endswith("test_json"))]
    assert json_task["calls"][0][0]["cache_read_tokens"] == 5
    assert json_task["calls"][1][0]["model_served"] == MODEL + "-20250101"
    stream_task = live[next(t for t in live if t.endswith("test_async_stream"))]
    assert [c[0]["completion_tokens"] for c in stream_task["calls"]] == [2, 3]
    replayed = run(pytester, "none", "--consistency-max-retries=2")
    assert replayed.ret == 0, replayed.stdout.str()
    assert claude.requests == []
    assert all(c["replayed"] for c in calls(pytester))
    assert facts(pytester) == live


def test_anthropic_replay_under_xdist_equals_the_serial_replay(
    pytester: pytest.Pytester, claude: FakeAnthropic, recorded_mixed: tuple[pytest.RunResult, dict, dict]
) -> None:
    assert run(pytester, "none", "--consistency-max-retries=2").ret == 0
    serial = without_timings(report(pytester))
    parallel_run = run(pytester, "none", "--consistency-max-retries=2", "-n", "2")
    assert parallel_run.ret == 0, parallel_run.stdout.str()
    assert claude.requests == []
    parallel = without_timings(report(pytester))
    for data in (serial, parallel):
        data.pop("created", None)
        data.get("summary", {}).pop("duration", None)
    assert parallel["tasks"] == serial["tasks"]
    assert parallel["summary"] == serial["summary"]


def test_a_replayed_retry_reports_the_rate_limit_headers_the_server_sent(
    pytester: pytest.Pytester, claude: FakeAnthropic, recorded_mixed: tuple[pytest.RunResult, dict, dict]
) -> None:
    """The 529 said ``retry-after: 0``; the replay must not report a header the server never sent."""
    _, _, raw = recorded_mixed
    live = [c["rate_limit"] for t in raw["tasks"] for r in t["repetitions"] for c in r["calls"]]
    assert run(pytester, "none", "--consistency-max-retries=2").ret == 0
    again = [c["rate_limit"] for c in calls(pytester)]
    assert again == live


def test_a_replay_shows_each_routes_recorded_key_on_its_own_route(
    pytester: pytest.Pytester, claude: FakeAnthropic, recorded_mixed: tuple[pytest.RunResult, dict, dict]
) -> None:
    """Replayed without keys, the OpenAI route (never called) must not claim the Anthropic key as its own."""
    replayed = run(pytester, "none", "--consistency-max-retries=2")
    assert replayed.ret == 0, replayed.stdout.str()
    anthropic_key = fingerprint(GOOD_KEY)
    assert anthropic_key is not None
    route = report(pytester)["summary"]["route"]
    for line in replayed.stdout.lines:
        if line.startswith("route: "):  # the OpenAI route's line, if it is shown at all
            assert anthropic_key not in line, line
    assert anthropic_key not in route["key_shown"], route["key_shown"]
    (anthropic_line,) = [line for line in replayed.stdout.lines if line.startswith("route (anthropic): ")]
    assert f"key {anthropic_key} (recorded)" in anthropic_line, anthropic_line
