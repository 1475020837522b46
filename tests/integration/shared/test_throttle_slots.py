"""The throttle: a failed request releases its slot, concurrency one holds asyncio.gather and nested streams
without deadlock, a replay is never slowed by the rate limit, and one route's slot never holds back the other.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from fake_anthropic import GOOD_KEY, FakeAnthropic, Step
from fake_openai import FakeOpenAI
from fake_openai import Step as OpenAIStep
from gateways import free_port
from suites import anthropic_suite as suite
from suites import load_report as report
from suites import report_calls as calls
from suites import run_mode as run
from suites import subprocess_session


def run_sub(pytester: pytest.Pytester, mode: str, *args: str, timeout: float = 90) -> pytest.RunResult:
    """The same in a fresh interpreter (respx, which imports httpx at startup, left out)."""
    return subprocess_session(pytester, mode, "-p", "no:randomly", "-p", "no:respx", *args, timeout=timeout)


FAILING_THEN_OK = """
import os

import anthropic
import pytest

ASK = dict(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])

@pytest.mark.repeat_consistency(n=1)
def test_task(pinned_anthropic_client, consistency):
    failure = os.environ["AGENT_FAILURE"]
    if failure == "refused":
        dead = anthropic.Anthropic(
            base_url=os.environ["AGENT_DEAD_URL"], api_key=os.environ["ANTHROPIC_API_KEY"], max_retries=0)
        with pytest.raises(anthropic.APIConnectionError):
            dead.messages.create(**ASK)
    elif failure == "529":
        with pytest.raises(anthropic.APIStatusError):
            pinned_anthropic_client.with_options(max_retries=0).messages.create(**ASK)
    elif failure == "timeout":
        with pytest.raises(anthropic.APITimeoutError):
            pinned_anthropic_client.with_options(max_retries=0, timeout=0.3).messages.create(**ASK)
    for _ in range(2):
        reply = pinned_anthropic_client.messages.create(**ASK)
    consistency.record(reply.content[0].text)
"""


@pytest.mark.parametrize("failure", ["refused", "529", "timeout"])
def test_a_failed_request_releases_its_slot(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    monkeypatch.setenv("AGENT_FAILURE", failure)
    monkeypatch.setenv("AGENT_DEAD_URL", f"http://127.0.0.1:{free_port()}")
    if failure == "529":
        claude.script(Step(status=529), Step(text="ok"), Step(text="ok"))
    if failure == "timeout":
        claude.script(Step(delay=1.5), Step(text="ok"), Step(text="ok"))
    pytester.makepyfile(test_agent=suite(FAILING_THEN_OK))
    began = time.monotonic()
    result = run_sub(pytester, "off", "--consistency-concurrency=1", timeout=60)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert time.monotonic() - began < 30
    task_calls = calls(pytester)
    assert [c["status"] for c in task_calls][-2:] == [200, 200]
    assert (
        task_calls[0]["error" if failure in ("refused", "timeout") else "status"]
        == {
            "refused": "connection",
            "timeout": "timeout",
            "529": 529,
        }[failure]
    )


GATHER_TASK = """
import asyncio

import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(async_pinned_anthropic_client, consistency):
    async def one(i):
        reply = await async_pinned_anthropic_client.messages.create(
            model=MODEL, max_tokens=8, messages=[{"role": "user", "content": f"question {i}"}])
        return reply.content[0].text

    async def all_of_them():
        return await asyncio.gather(*(one(i) for i in range(4)))

    consistency.record(asyncio.run(all_of_them()))
"""


@pytest.mark.parametrize(("limit", "expected"), [(None, "more"), (1, 1)])
def test_concurrency_one_holds_asyncio_gather_to_one_in_flight(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, limit: int | None, expected: Any
) -> None:
    monkeypatch.setattr(claude, "delay", 0.2)
    pytester.makepyfile(test_agent=suite(GATHER_TASK))
    args = [f"--consistency-concurrency={limit}"] if limit else []
    result = run_sub(pytester, "off", *args, timeout=60)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert len(claude.requests) == 8
    if expected == "more":
        assert claude.max_in_flight > 1  # without a limit the calls overlap: the limit means something
    else:
        assert claude.max_in_flight == expected
        assert sum(c["wait_ms"] > 100 for c in calls(pytester)) >= 3


NESTED_TASK = """
import pytest

ASK = dict(model=MODEL, max_tokens=8)

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_anthropic_client, consistency):
    texts = []
    with pinned_anthropic_client.messages.stream(**ASK, messages=[{"role": "user", "content": "outer"}]) as stream:
        for text in stream.text_stream:
            texts.append(text)
            if len(texts) == 1:  # a tool call while the stream is still open
                inner = pinned_anthropic_client.messages.create(**ASK, messages=[{"role": "user", "content": "in"}])
                texts.append(inner.content[0].text)
    consistency.record(texts)
"""


def test_concurrency_one_never_deadlocks_a_call_made_while_a_stream_is_open(
    pytester: pytest.Pytester, claude: FakeAnthropic
) -> None:
    """A stream's slot is held until its response headers arrive (Throttle.acquire, Attempt.tap), not until its
    body ends: a call made while the agent still reads a stream must get a slot, or concurrency=1 would hang."""
    claude.script(*[Step(text="one two three"), Step(text="inner")] * 2)
    pytester.makepyfile(test_agent=suite(NESTED_TASK))
    result = run_sub(pytester, "off", "--consistency-concurrency=1", timeout=60)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert report(pytester)["tasks"][0]["answers"] == [["one ", "inner", "two ", "three"]] * 2
    assert len(claude.requests) == 4


REPLAY_TASK = """
import os

import anthropic
import pytest

ASK = dict(model=MODEL, max_tokens=8)

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_anthropic_client, consistency):
    a = pinned_anthropic_client.messages.create(**ASK, messages=[{"role": "user", "content": "pinned"}])
    own = anthropic.Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], api_key=os.environ["AGENT_ANTHROPIC_KEY"])
    b = own.messages.create(**ASK, messages=[{"role": "user", "content": "own"}])
    consistency.record([a.content[0].text, b.content[0].text])
"""


@pytest.mark.parametrize("mode", ["none", "once", "new_episodes"])
def test_a_replay_is_never_slowed_by_the_rate_limit(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("AGENT_ANTHROPIC_KEY", GOOD_KEY)
    claude.script(Step(status=529, retry_after="0"), *[Step(text="ok")] * 6)
    pytester.makepyfile(test_agent=suite(REPLAY_TASK))
    assert run(pytester, "once").ret == 0
    assert len(claude.requests) == 7
    claude.reset()
    if mode == "none":
        monkeypatch.delenv("ANTHROPIC_API_KEY")
        monkeypatch.setenv("AGENT_ANTHROPIC_KEY", "replay-dummy-key")
    began = time.monotonic()
    # at one request a minute the 6 further attempts would take 6 minutes
    result = run_sub(pytester, mode, "--consistency-rpm=1", "--consistency-concurrency=1", timeout=40)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert time.monotonic() - began < 30
    assert claude.requests == []
    seen = calls(pytester)
    assert len(seen) == 7 and all(c["replayed"] and c["wait_ms"] == 0 for c in seen)


ROUTES_APART_TASK = """
import threading
import time

import pytest

@pytest.mark.repeat_consistency(n=1)
def test_task(pinned_client, pinned_anthropic_client, consistency):
    slow = threading.Thread(target=lambda: pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "slow"}]))
    slow.start()
    time.sleep(0.3)  # the OpenAI call now holds the OpenAI route's only slot
    reply = pinned_anthropic_client.messages.create(
        model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "quick"}])
    slow.join()
    consistency.record(reply.content[0].text)
"""


def test_one_routes_slot_never_holds_back_the_other_route(
    pytester: pytest.Pytester, claude: FakeAnthropic, fake: FakeOpenAI
) -> None:
    fake.script(OpenAIStep(text="slow", delay=1.5))
    pytester.makepyfile(test_agent=suite(ROUTES_APART_TASK))
    result = run_sub(pytester, "off", f"--consistency-base-url={fake.base_url}", "--consistency-concurrency=1")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    (anthropic_call,) = [c for c in calls(pytester) if c["provider"] == "anthropic"]
    assert anthropic_call["wait_ms"] < 200, anthropic_call
