"""A task's recorded cassettes read for the plan: each repetition's calls with the usage the capture wing reads from a
replayed response (a JSON body, an Anthropic stream, a gzip-compressed body), the recorded latency and start, and
the model asked and served; a bad file is a ``CassetteError`` naming it and the fix."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.cassette import _vcr
from pytest_consistency.cassette.messages import CassetteError
from pytest_consistency.cassette.paths import cassette_path
from pytest_consistency.cassette.recorded import recorded_calls, repetition_calls

TASK = "test_agent.py::test_task"


def _exchange(
    url: str, request: dict[str, Any], body: Any, headers: dict[str, list[str]], started: str | None = "1000.0"
) -> dict[str, Any]:
    recorded = {"x-consistency-key-fingerprint": ["sha256:0123abcd"], "x-consistency-latency-ms": ["250.0"]}
    if started is not None:
        recorded["x-consistency-started-at"] = [started]
    return {
        "request": {"body": json.dumps(request), "headers": {}, "method": "POST", "uri": url},
        "response": {
            "body": {"string": body},
            "headers": {**headers, **recorded},
            "status": {"code": 200, "message": "OK"},
        },
    }


def _write(path: Path, *interactions: dict[str, Any]) -> None:
    serializer = "json" if path.suffix == ".json" else "yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_vcr.serializer(serializer).serialize({"interactions": list(interactions), "version": 1}))


CHAT = _exchange(
    "http://127.0.0.1:9/v1/chat/completions",
    {"model": "gpt-asked", "messages": [{"role": "user", "content": "hi"}]},
    json.dumps({"model": "gpt-served", "choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 7}}),
    {"content-type": ["application/json"]},
)
STREAM = _exchange(
    "http://127.0.0.1:9/v1/messages",
    {"model": "claude-x", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    "event: message_start\n"
    'data: {"type": "message_start", "message": {"model": "claude-x", "usage": {"input_tokens": 20, '
    '"output_tokens": 1}}}\n\n'
    "event: message_delta\n"
    'data: {"type": "message_delta", "usage": {"output_tokens": 9}}\n\n'
    'event: message_stop\ndata: {"type": "message_stop"}\n\n',
    {"content-type": ["text/event-stream"]},
    started="1000.5",
)


def test_a_json_and_a_streamed_response_give_their_usage_timing_and_model(tmp_path: Path) -> None:
    _write(cassette_path(tmp_path, TASK, 1), CHAT, STREAM)
    [calls] = recorded_calls(tmp_path, TASK, "re-record it")
    chat, stream = calls
    assert (chat.prompt_tokens, chat.completion_tokens, chat.total_tokens) == (11, 7, 18)
    assert (chat.model_requested, chat.model_served) == ("gpt-asked", "gpt-served")
    assert (stream.prompt_tokens, stream.completion_tokens, stream.total_tokens) == (20, 9, 29)
    assert stream.provider == "anthropic" and stream.model_served == "claude-x"
    assert [c.latency_ms for c in calls] == [250.0, 250.0]
    assert [c.started_at for c in calls] == [1000.0, 1000.5]


def test_a_compressed_body_is_decoded_as_vcrpy_decodes_it(tmp_path: Path) -> None:
    body = gzip.compress(json.dumps({"model": "m", "usage": {"prompt_tokens": 3, "completion_tokens": 4}}).encode())
    exchange = _exchange(
        "http://127.0.0.1:9/v1/chat/completions",
        {"model": "m"},
        body,
        {"content-type": ["application/json"], "content-encoding": ["gzip"]},
    )
    path = cassette_path(tmp_path, TASK, 1)
    _write(path, exchange)
    [call] = repetition_calls(path, "re-record it")
    assert call.total_tokens == 7


def test_repetitions_in_order_and_one_format_per_repetition(tmp_path: Path) -> None:
    _write(cassette_path(tmp_path, TASK, 2), CHAT)
    _write(cassette_path(tmp_path, TASK, 10), STREAM)
    _write(cassette_path(tmp_path, TASK, 2, ".json"), STREAM)  # the same repetition in the other format
    tokens = [[c.total_tokens for c in calls] for calls in recorded_calls(tmp_path, TASK, "fix")]
    assert tokens == [[18], [29]]
    tokens = [[c.total_tokens for c in calls] for calls in recorded_calls(tmp_path, TASK, "fix", ".json")]
    assert tokens == [[29], [29]]


def test_no_folder_is_no_repetition(tmp_path: Path) -> None:
    assert recorded_calls(tmp_path, TASK, "fix") == []


def test_a_bad_file_names_itself_and_the_fix(tmp_path: Path) -> None:
    path = cassette_path(tmp_path, TASK, 1)
    path.parent.mkdir(parents=True)
    path.write_text("interactions: [\n")
    with pytest.raises(CassetteError, match=r"rep-1\.yaml is not a valid cassette.*; re-record it"):
        recorded_calls(tmp_path, TASK, "re-record it")
