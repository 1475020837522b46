"""What a call to the Messages API decided (route.providers.anthropic_decisions), read by ``MessagesReader`` from a
response body or from its stream's events: text blocks, tool_use blocks in block order (streamed arguments assembled
per block), the stop reason, and a refusal kept apart from the text."""

from __future__ import annotations

from typing import Any

from pytest_consistency.model.trajectory import Decision, ToolCall
from pytest_consistency.route.providers.anthropic_decisions import MessagesReader


def read_body(data: dict[str, Any]) -> Decision | None:
    reader = MessagesReader()
    reader.body(data)
    return reader.result()


def read_stream(*events: dict[str, Any]) -> Decision | None:
    reader = MessagesReader()
    for event in events:
        reader.event(event)
    return reader.result()


def test_a_body_of_text_and_tool_use_blocks() -> None:
    decision = read_body(
        {
            "type": "message",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "x"}},
                "not a block",
            ],
            "stop_reason": "tool_use",
        }
    )
    assert decision == Decision.of("Let me look.", (ToolCall("search", '{"q":"x"}', "t1"),), "tool_use")


def test_what_is_not_a_message_is_no_decision() -> None:
    assert read_body({"type": "error", "error": {"type": "overloaded_error"}}) is None
    assert read_stream({"type": "ping"}) is None


def test_a_stream_assembles_each_blocks_arguments_from_its_own_pieces() -> None:
    decision = read_stream(
        {"type": "message_start", "message": {}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t2", "name": "b"}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "a"}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"y":'}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"x": 1'}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": " 2}"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "}"}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Done"}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": " now."}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
    )
    assert decision == Decision.of(
        "Done now.", (ToolCall("a", '{"x":1}', "t1"), ToolCall("b", '{"y":2}', "t2")), "tool_use"
    )


def test_a_refusal_is_no_text_and_has_a_reason_even_when_empty() -> None:
    refused = read_body(
        {"type": "message", "content": [{"type": "text", "text": "I can't."}], "stop_reason": "refusal"}
    )
    assert refused is not None and refused.text == "" and refused.refusal == "I can't."
    silent = read_stream({"type": "message_start"}, {"type": "message_delta", "delta": {"stop_reason": "refusal"}})
    assert silent is not None and silent.refusal == "refused" and silent.stop_reason == "refusal"
