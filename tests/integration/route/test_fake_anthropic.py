"""The fake Anthropic server, driven by the real ``anthropic`` SDK: what it sends must parse as the real API's."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from fake_anthropic import GOOD_KEY, MODEL, FakeAnthropic, Step

MESSAGES: list[Any] = [{"role": "user", "content": "one two three"}]


@pytest.fixture(scope="module")
def server_once() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic().start()
    yield server
    server.stop()


@pytest.fixture
def server(server_once: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    server_once.reset()
    server_once.keys = {GOOD_KEY}
    server_once.delay = 0.0
    return server_once


def client(server: FakeAnthropic, **kwargs: Any) -> anthropic.Anthropic:
    kwargs.setdefault("api_key", GOOD_KEY)
    kwargs.setdefault("max_retries", 0)
    return anthropic.Anthropic(base_url=server.base_url, **kwargs)


def test_a_json_call_parses_text_model_and_usage(server: FakeAnthropic) -> None:
    server.script(Step(text="Hello there world", cache_creation_input_tokens=5, cache_read_input_tokens=7))
    raw = client(server).messages.with_raw_response.create(
        model="claude-asked", max_tokens=10, system="be brief", messages=MESSAGES
    )
    message = raw.parse()
    assert message.content[0].type == "text" and message.content[0].text == "Hello there world"
    assert message.model == "claude-asked" and message.stop_reason == "end_turn" and message.id.startswith("msg_")
    assert message.usage.input_tokens == 5  # "be brief" + "one two three", in words
    assert message.usage.output_tokens == 3
    assert message.usage.cache_creation_input_tokens == 5 and message.usage.cache_read_input_tokens == 7
    assert raw.headers["request-id"].startswith("req_") and message._request_id == raw.headers["request-id"]
    assert raw.headers["anthropic-ratelimit-requests-limit"] == "50"
    assert raw.headers["anthropic-ratelimit-requests-remaining"] == "49"
    assert raw.headers["anthropic-ratelimit-tokens-reset"].endswith("Z")
    [request] = server.requests
    assert request["method"] == "POST" and request["path"] == "/v1/messages"
    assert request["body"]["model"] == "claude-asked" and request["body"]["messages"] == MESSAGES
    assert request["headers"]["anthropic-version"] and request["auth"] in {"x-api-key", "authorization"}
    assert request["start"] <= request["end"]


def test_a_step_overrides_model_usage_and_headers(server: FakeAnthropic) -> None:
    server.script(
        Step(
            served_model="claude-drifted",
            input_tokens=100,
            output_tokens=42,
            headers={"anthropic-ratelimit-requests-remaining": "0"},
        )
    )
    raw = client(server).messages.with_raw_response.create(model="claude-asked", max_tokens=10, messages=MESSAGES)
    message = raw.parse()
    assert message.model == "claude-drifted"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (100, 42)
    assert message.usage.cache_read_input_tokens == 0
    assert raw.headers.get_list("anthropic-ratelimit-requests-remaining") == ["0"]


def test_either_auth_header_is_accepted_and_recorded(server: FakeAnthropic) -> None:
    client(server, api_key=None, auth_token=GOOD_KEY).messages.create(model=MODEL, max_tokens=5, messages=MESSAGES)
    request = urllib.request.Request(
        server.base_url + "/v1/messages",
        data=json.dumps({"model": MODEL, "max_tokens": 5, "messages": MESSAGES}).encode(),
        headers={"x-api-key": GOOD_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        assert json.load(response)["content"] == [{"type": "text", "text": "OK"}]
    assert [r["auth"] for r in server.requests] == ["authorization", "x-api-key"]
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {GOOD_KEY}"


def test_a_wrong_key_is_an_authentication_error(server: FakeAnthropic) -> None:
    with pytest.raises(anthropic.AuthenticationError) as caught:
        client(server, api_key="sk-ant-wrong").messages.create(model=MODEL, max_tokens=5, messages=MESSAGES)
    assert caught.value.status_code == 401
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }


def test_models_and_count_tokens(server: FakeAnthropic) -> None:
    sdk = client(server)
    assert [model.id for model in sdk.models.list()] == [MODEL]
    counted = sdk.messages.count_tokens(model=MODEL, system="be brief", messages=MESSAGES)
    assert counted.input_tokens == 5
    assert [(r["method"], r["path"].split("?")[0]) for r in server.requests] == [
        ("GET", "/v1/models"),
        ("POST", "/v1/messages/count_tokens"),
    ]


def test_messages_stream_yields_the_deltas_and_a_final_message(server: FakeAnthropic) -> None:
    server.script(Step(text="alpha beta gamma", served_model="claude-served", cache_read_input_tokens=4))
    with client(server).messages.stream(model="claude-asked", max_tokens=10, messages=MESSAGES) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert pieces == ["alpha ", "beta ", "gamma"]
    assert final.content[0].type == "text" and final.content[0].text == "alpha beta gamma"
    assert final.model == "claude-served" and final.stop_reason == "end_turn"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (3, 3)
    assert final.usage.cache_read_input_tokens == 4 and final.usage.cache_creation_input_tokens == 0
    assert server.requests[0]["body"]["stream"] is True


def test_create_stream_true_sends_the_events_in_the_real_order(server: FakeAnthropic) -> None:
    server.script(Step(text="alpha beta"))
    events = list(client(server).messages.create(model=MODEL, max_tokens=10, messages=MESSAGES, stream=True))
    assert [event.type for event in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]  # the SDK drops the ping
    start, delta = events[0], events[5]
    assert start.type == "message_start" and start.message.model == MODEL
    assert (start.message.usage.input_tokens, start.message.usage.output_tokens) == (3, 1)
    assert delta.type == "message_delta" and delta.usage.output_tokens == 2
    assert delta.delta.stop_reason == "end_turn"
    texts = [e.delta.text for e in events if e.type == "content_block_delta" and e.delta.type == "text_delta"]
    assert texts == ["alpha ", "beta"]


def test_the_wire_format_is_event_and_data_lines_with_a_ping(server: FakeAnthropic) -> None:
    request = urllib.request.Request(
        server.base_url + "/v1/messages",
        data=json.dumps({"model": MODEL, "max_tokens": 5, "messages": MESSAGES, "stream": True}).encode(),
        headers={"x-api-key": GOOD_KEY, "anthropic-version": "2023-06-01"},
    )
    with urllib.request.urlopen(request) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["request-id"].startswith("req_")
        text = response.read().decode()
    names = [line[len("event: ") :] for line in text.splitlines() if line.startswith("event: ")]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]


def test_a_held_stream_reaches_the_client_before_it_ends(server: FakeAnthropic) -> None:
    release = threading.Event()
    server.script(Step(text="first second third", hold=release))
    stream = client(server).messages.create(model=MODEL, max_tokens=10, messages=MESSAGES, stream=True)
    events = iter(stream)
    assert next(events).type == "message_start"
    assert server.holding, "the first event arrived only after the server finished"
    release.set()
    assert [e.type for e in events][-1] == "message_stop"
    assert not server.holding


def test_a_429_with_retry_after_is_retried(server: FakeAnthropic) -> None:
    server.script(Step(status=429, retry_after="0"), Step(text="after the retry"))
    message = client(server, max_retries=2).messages.create(model=MODEL, max_tokens=5, messages=MESSAGES)
    assert message.content[0].type == "text" and message.content[0].text == "after the retry"
    assert len(server.requests) == 2
    assert server.requests[1]["headers"]["x-stainless-retry-count"] == "1"


@pytest.mark.parametrize(
    ("status", "error", "kind"),
    [
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (529, anthropic.InternalServerError, "overloaded_error"),
        (500, anthropic.InternalServerError, "api_error"),
    ],
)
def test_scripted_faults_surface_as_typed_sdk_errors(
    server: FakeAnthropic, status: int, error: type[anthropic.APIStatusError], kind: str
) -> None:
    server.script(Step(status=status, retry_after="3"))
    with pytest.raises(error) as caught:
        client(server).messages.create(model=MODEL, max_tokens=5, messages=MESSAGES)
    assert isinstance(caught.value, anthropic.APIStatusError) and caught.value.status_code == status
    assert caught.value.body == {"type": "error", "error": {"type": kind, "message": f"scripted {status}"}}
    assert caught.value.response.headers["retry-after"] == "3"
    assert caught.value.request_id is not None and caught.value.request_id.startswith("req_")
    assert len(server.requests) == 1


def test_sequential_calls_never_overlap(server: FakeAnthropic) -> None:
    sdk = client(server)
    for _ in range(3):
        sdk.messages.create(model=MODEL, max_tokens=5, messages=MESSAGES)
    assert server.max_in_flight == 1 and server.in_flight == 0
    assert len(server.starts) == len(server.ends) == 3
    assert all(end <= start for end, start in zip(server.ends[:-1], server.starts[1:], strict=True))


def test_concurrent_calls_are_counted_in_flight(server: FakeAnthropic) -> None:
    server.delay = 0.3
    sdk = client(server)
    threads = [
        threading.Thread(target=lambda: sdk.messages.create(model=MODEL, max_tokens=5, messages=MESSAGES))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert server.max_in_flight >= 2 and server.in_flight == 0
    assert abs(server.starts[1] - server.starts[0]) < 0.3


def test_the_async_client_parses_json_streams_and_runs_concurrently(server: FakeAnthropic) -> None:
    async def scenario() -> None:
        sdk = anthropic.AsyncAnthropic(base_url=server.base_url, auth_token=GOOD_KEY, api_key=None, max_retries=0)
        server.script(Step(text="async reply", cache_creation_input_tokens=2))
        message = await sdk.messages.create(model="claude-async", max_tokens=5, messages=MESSAGES)
        assert message.content[0].type == "text" and message.content[0].text == "async reply"
        assert message.model == "claude-async" and message.usage.cache_creation_input_tokens == 2
        server.script(Step(text="streamed async reply"))
        async with sdk.messages.stream(model="claude-async", max_tokens=5, messages=MESSAGES) as stream:
            pieces = [text async for text in stream.text_stream]
            final = await stream.get_final_message()
        assert pieces == ["streamed ", "async ", "reply"]
        assert (final.usage.input_tokens, final.usage.output_tokens) == (3, 3)
        server.delay = 0.3
        await asyncio.gather(*(sdk.messages.create(model=MODEL, max_tokens=5, messages=MESSAGES) for _ in range(2)))
        await sdk.close()

    asyncio.run(scenario())
    assert server.max_in_flight >= 2
    assert {r["auth"] for r in server.requests} == {"authorization"}


def test_as_a_subprocess_it_prints_ready_and_serves_stats() -> None:
    script = Path(str(sys.modules[FakeAnthropic.__module__].__file__))  # tests/support/fake_anthropic.py
    process = subprocess.Popen(
        [sys.executable, str(script), "--port", "0", "--delay", "0.05"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        ready, base_url = process.stdout.readline().split()
        assert ready == "READY" and base_url.startswith("http://127.0.0.1:")
        sdk = anthropic.Anthropic(base_url=base_url, api_key=GOOD_KEY, max_retries=0)
        for _ in range(2):
            assert sdk.messages.create(model=MODEL, max_tokens=5, messages=MESSAGES).model == MODEL
        with urllib.request.urlopen(base_url + "/_stats") as response:
            stats = json.load(response)
        assert stats["requests"] == 2 and stats["max_in_flight"] == 1 and stats["in_flight"] == 0
        assert len(stats["starts"]) == 2 and stats["starts"][1] - stats["starts"][0] >= 0.05
        reset = urllib.request.Request(base_url + "/_reset", data=b"", method="POST")
        with urllib.request.urlopen(reset), urllib.request.urlopen(base_url + "/_stats") as response:
            assert json.load(response)["requests"] == 0
    finally:
        process.terminate()
        process.wait(5)
        if process.stdout is not None:
            process.stdout.close()


def test_the_fakes_know_the_plugins_preflight_prompt() -> None:
    import fake_anthropic
    import fake_openai

    from pytest_consistency.route.providers.openai import PROMPT

    assert fake_anthropic.PREFLIGHT_PROMPT == fake_openai.PREFLIGHT_PROMPT == PROMPT
