"""The wire parser on the Messages API's shapes (JSON, and the SSE events of a stream), beside the OpenAI ones."""

from __future__ import annotations

import json

import httpx2

from pytest_consistency.capture.wire import ResponseTap, apply_payload, complete_headers, provider_of, split_url
from pytest_consistency.model.records import CallRecord


def record() -> CallRecord:
    return CallRecord("POST", "http://h/v1/messages", "http://h", None, "claude-x")


def sse(*events: tuple[str, dict]) -> bytes:
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


STREAM = sse(
    (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "model": "claude-x-20250101",
                "usage": {"input_tokens": 25, "output_tokens": 1, "cache_read_input_tokens": 100},
            },
        },
    ),
    ("content_block_start", {"type": "content_block_start", "index": 0}),
    ("ping", {"type": "ping"}),
    ("content_block_delta", {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "hi"}}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 15}}),
    ("message_stop", {"type": "message_stop"}),
)


def test_a_json_message_gives_model_input_output_and_cache_tokens() -> None:
    rec = record()
    apply_payload(
        rec,
        {
            "type": "message",
            "model": "claude-x",
            "usage": {
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_creation_input_tokens": 3,
                "cache_read_input_tokens": 7,
            },
        },
    )
    assert rec.model_served == "claude-x"
    assert (rec.prompt_tokens, rec.completion_tokens, rec.cache_creation_tokens, rec.cache_read_tokens) == (10, 5, 3, 7)
    assert rec.total_tokens == 25


def test_a_stream_keeps_message_start_input_when_message_delta_reports_output() -> None:
    done: list[CallRecord] = []
    tap = ResponseTap(record(), {"content-type": "text/event-stream"}, 0.0, done.append)
    for i in range(0, len(STREAM), 7):  # arbitrary chunk boundaries, mid-line
        tap.feed(STREAM[i : i + 7])
    tap.close()
    (rec,) = done
    assert rec.model_served == "claude-x-20250101"
    assert (rec.prompt_tokens, rec.completion_tokens, rec.cache_read_tokens) == (25, 15, 100)
    assert rec.total_tokens == 140


def test_openai_usage_is_read_as_before() -> None:
    rec = record()
    apply_payload(rec, {"model": "gpt-x", "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}})
    assert (rec.prompt_tokens, rec.completion_tokens, rec.total_tokens) == (4, 2, 6)
    rec = record()
    apply_payload(rec, {"type": "response.completed", "response": {"model": "gpt-y", "usage": {"input_tokens": 9}}})
    assert (rec.model_served, rec.prompt_tokens, rec.total_tokens) == ("gpt-y", 9, 9)


def test_a_negative_or_non_numeric_count_is_ignored() -> None:
    rec = record()
    apply_payload(rec, {"usage": {"input_tokens": -3, "output_tokens": "7", "cache_read_input_tokens": True}})
    assert (rec.prompt_tokens, rec.completion_tokens, rec.cache_read_tokens, rec.total_tokens) == (0, 0, 0, 0)


def test_the_provider_is_told_by_the_anthropic_version_header_or_the_messages_path() -> None:
    assert provider_of(httpx2.Headers({"anthropic-version": "2023-06-01"}), "http://gw/x") == "anthropic"
    assert provider_of(httpx2.Headers({}), "http://gw/v1/messages") == "anthropic"
    assert provider_of(httpx2.Headers({}), "http://gw/v1/threads/t1/messages") == "openai"
    assert provider_of(httpx2.Headers({}), "http://gw/v1/chat/completions") == "openai"


def test_an_anthropic_base_url_has_no_v1_and_openai_ones_keep_theirs() -> None:
    assert split_url("https://api.anthropic.com/v1/messages?beta=true") == (
        "https://api.anthropic.com/v1/messages",
        "https://api.anthropic.com",
    )
    assert split_url("http://gw:4000/v1/messages/count_tokens")[1] == "http://gw:4000"
    assert split_url("https://api.openai.com/v1/chat/completions")[1] == "https://api.openai.com/v1"
    assert split_url("https://api.openai.com/v1/models")[1] == "https://api.openai.com/v1"


def test_rate_limit_and_retry_after_headers_are_kept() -> None:
    rec = record()
    response = httpx2.Response(
        529,
        headers={
            "anthropic-ratelimit-requests-remaining": "0",
            "Retry-After": "3",
            "x-ratelimit-limit-tokens": "1000",
            "request-id": "req_1",
        },
    )
    complete_headers(rec, response)
    assert rec.status == 529
    assert rec.rate_limit == {
        "anthropic-ratelimit-requests-remaining": "0",
        "retry-after": "3",
        "x-ratelimit-limit-tokens": "1000",
    }
