"""The decision and the messages asked, parsed beside each provider from the bytes the wire tap sees.

Each response goes through ``wire.ResponseTap`` exactly as the transport feeds it (chunks cut at awkward places),
so these are the shapes a live call and its replay both produce: JSON and SSE, for Chat Completions, the
Responses API and the Messages API; hostile shapes included (tool calls without ids, parallel calls, streamed
tool-call deltas, refusals, empty choices).
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from pytest_consistency.capture.wire import ResponseTap
from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.trajectory import MAX_TEXT, Decision, Message, ToolCall, clip

CHAT = "http://h/v1/chat/completions"
RESPONSES = "http://h/v1/responses"
MESSAGES = "http://h/v1/messages"


def tapped(url: str, body: bytes, sse: bool, status: int = 200, chunk: int = 7) -> CallRecord:
    provider = "anthropic" if url.endswith("/v1/messages") else "openai"
    record = CallRecord("POST", url, "http://h/v1", None, "m", status=status, provider=provider)
    headers = httpx2.Headers({"content-type": "text/event-stream" if sse else "application/json"})
    tap = ResponseTap(record, headers, 0.0, lambda r: None)
    for start in range(0, len(body), chunk):
        tap.feed(body[start : start + chunk])
    tap.close()
    return record


def sse(*events: dict[str, Any], done: bool = True) -> bytes:
    text = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    return (text + ("data: [DONE]\n\n" if done else "")).encode()


def chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {"object": "chat.completion.chunk", "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


def completion(message: dict[str, Any], finish: str = "stop") -> bytes:
    return json.dumps(
        {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    ).encode()


def test_chat_json_text() -> None:
    decision = tapped(CHAT, completion({"role": "assistant", "content": "  The answer\n is 4 "}), sse=False).decision
    assert decision == Decision("The answer is 4", (), "stop", None)
    assert decision.key() == "text:The answer is 4"
    assert decision.label() == "text: The answer is 4"


def test_chat_json_parallel_tool_calls_without_ids_keep_their_order_and_normalise_arguments() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"type": "function", "function": {"name": "search_invoices", "arguments": '{"q": "x",  "limit": 3}'}},
            {"type": "function", "function": {"name": "list_emails", "arguments": "not json"}},
        ],
    }
    decision = tapped(CHAT, completion(message, "tool_calls"), sse=False).decision
    assert decision is not None
    assert decision.tool_calls == (
        ToolCall("search_invoices", '{"limit":3,"q":"x"}', None),
        ToolCall("list_emails", "not json", None),
    )
    assert decision.key() == 'tools:search_invoices({"limit":3,"q":"x"});list_emails(not json)'
    assert decision.label() == "tools search_invoices(...), list_emails(...)"
    assert decision.stop_reason == "tool_calls"


def test_chat_streamed_tool_call_deltas_are_assembled_by_index() -> None:
    body = sse(
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [{"index": 0, "id": "call_a", "function": {"name": "search_", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "list_emails", "arguments": '{"to'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "invoices", "arguments": '{"q":'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": '": "me"}'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ' "x"}'}}]}),
        chunk({}, "tool_calls"),
        {"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
    )
    decision = tapped(CHAT, body, sse=True, chunk=5).decision
    assert decision == Decision(
        "",
        (ToolCall("search_invoices", '{"q":"x"}', "call_a"), ToolCall("list_emails", '{"to":"me"}', "call_b")),
        "tool_calls",
    )


def test_chat_stream_text_and_json_of_the_same_answer_give_the_same_key() -> None:
    streamed = tapped(
        CHAT, sse(*(chunk({"content": w}) for w in ["The ", "answer", " is 4"]), chunk({}, "stop")), sse=True
    )
    whole = tapped(CHAT, completion({"role": "assistant", "content": "The answer is 4"}), sse=False)
    assert streamed.decision == whole.decision


def test_chat_refusal_json_and_streamed() -> None:
    whole = tapped(CHAT, completion({"role": "assistant", "content": None, "refusal": "I can't help"}), sse=False)
    streamed = tapped(
        CHAT, sse(chunk({"refusal": "I can't"}), chunk({"refusal": " help"}), chunk({}, "stop")), sse=True
    )
    assert whole.decision == streamed.decision == Decision("", (), "stop", "I can't help")
    assert whole.decision.key() == "refusal:I can't help"


def test_empty_choices_are_an_empty_decision_not_none() -> None:
    decision = tapped(CHAT, json.dumps({"object": "chat.completion", "choices": []}).encode(), sse=False).decision
    assert decision == Decision()
    assert (decision.key(), decision.label()) == ("empty", "(empty)")
    streamed = tapped(CHAT, sse({"object": "chat.completion.chunk", "choices": []}), sse=True).decision
    assert streamed == Decision()


def test_only_choice_zero_counts() -> None:
    body = json.dumps(
        {
            "choices": [
                {"index": 1, "message": {"role": "assistant", "content": "other"}, "finish_reason": "stop"},
                {"index": 0, "message": {"role": "assistant", "content": "first"}, "finish_reason": "stop"},
            ]
        }
    ).encode()
    assert tapped(CHAT, body, sse=False).decision.text == "first"


def test_legacy_completions_text() -> None:
    body = json.dumps({"choices": [{"index": 0, "text": " hi ", "finish_reason": "length"}]}).encode()
    assert tapped("http://h/v1/completions", body, sse=False).decision == Decision("hi", (), "length")


def test_errors_and_other_endpoints_have_no_decision() -> None:
    assert tapped(CHAT, b'{"error": {"message": "no"}}', sse=False, status=429).decision is None
    assert tapped("http://h/v1/embeddings", b'{"data": []}', sse=False).decision is None
    assert tapped(CHAT, b"not json at all", sse=False).decision is None


RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking."}]},
        {"type": "function_call", "call_id": "call_1", "name": "search_invoices", "arguments": '{"b":1,"a":2}'},
    ],
}


def test_responses_json_and_stream_agree() -> None:
    whole = tapped(RESPONSES, json.dumps(RESPONSE).encode(), sse=False).decision
    streamed = tapped(
        RESPONSES,
        sse(
            {"type": "response.created", "response": {**RESPONSE, "status": "in_progress", "output": []}},
            {"type": "response.output_text.delta", "delta": "Looking.", "output_index": 1},
            {"type": "response.completed", "response": RESPONSE},
            done=False,
        ),
        sse=True,
    ).decision
    assert (
        whole
        == streamed
        == Decision("Looking.", (ToolCall("search_invoices", '{"a":2,"b":1}', "call_1"),), "completed")
    )


def test_responses_stream_cut_before_completion_is_assembled_from_deltas() -> None:
    body = sse(
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "function_call", "name": "f", "call_id": "c"},
        },
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": '{"x":'},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": " 1}"},
        done=False,
    )
    assert tapped(RESPONSES, body, sse=True).decision == Decision("", (ToolCall("f", '{"x":1}', "c"),), None)


def test_responses_refusal_and_incomplete_reason() -> None:
    response = {
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}],
    }
    decision = tapped(RESPONSES, json.dumps(response).encode(), sse=False).decision
    assert decision == Decision("", (), "max_output_tokens", "No.")


def test_messages_json_tool_use_and_text() -> None:
    body = {
        "type": "message",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "search_invoices", "input": {"q": "x", "a": [1]}},
            {"type": "tool_use", "name": "list_emails", "input": {}},
        ],
        "stop_reason": "tool_use",
    }
    decision = tapped(MESSAGES, json.dumps(body).encode(), sse=False).decision
    assert decision == Decision(
        "Let me look.",
        (ToolCall("search_invoices", '{"a":[1],"q":"x"}', "toolu_1"), ToolCall("list_emails", "{}", None)),
        "tool_use",
    )
    assert decision.label() == "tools search_invoices(...), list_emails()"


def test_messages_stream_input_json_deltas() -> None:
    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"

    body = "".join(
        [
            event("message_start", {"message": {"model": "claude", "usage": {"input_tokens": 3}}}),
            event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
            event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Let me"}}),
            event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": " look."}}),
            event("content_block_stop", {"index": 0}),
            event(
                "content_block_start",
                {"index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "search_invoices", "input": {}}},
            ),
            event(
                "content_block_delta", {"index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"a":[1],'}}
            ),
            event(
                "content_block_delta", {"index": 1, "delta": {"type": "input_json_delta", "partial_json": '"q": "x"}'}}
            ),
            event("content_block_stop", {"index": 1}),
            event("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
            event("message_stop", {}),
        ]
    ).encode()
    decision = tapped(MESSAGES, body, sse=True, chunk=11).decision
    assert decision == Decision("Let me look.", (ToolCall("search_invoices", '{"a":[1],"q":"x"}', "t1"),), "tool_use")


def test_messages_refusal_stop_reason() -> None:
    body = {"type": "message", "content": [], "stop_reason": "refusal"}
    decision = tapped(MESSAGES, json.dumps(body).encode(), sse=False).decision
    assert decision is not None and decision.refusal == "refused" and decision.key() == "refusal:refused"


def test_long_text_is_cut_but_keyed_by_its_whole() -> None:
    first = Decision.of("word " * MAX_TEXT + "a")
    second = Decision.of("word " * MAX_TEXT + "b")
    assert MAX_TEXT - 6 <= len(first.text) <= MAX_TEXT and first.text == second.text
    assert first.key() != second.key()


def test_a_cut_never_keeps_part_of_a_word() -> None:
    """Half a key would escape redaction of the whole key: the word a cut falls in is dropped whole."""
    key = "sk-test-good-key-0123456789abcdef"
    assert clip("find " + key + " now", 20) == "find …"
    assert clip(key, 10) == "…"
    assert clip("short", 10) == "short"


def test_react_action_line_is_the_key_of_a_text_step() -> None:
    one = Decision.of("Thought: I should look it up.\nAction: search[invoices]\n")
    two = Decision.of("Thought: let me search   first\naction:  search[invoices]")
    assert one.key() == two.key() == "action:search[invoices]"
    assert one.label() == "action: search[invoices]"


@pytest.mark.parametrize(
    "decision",
    [
        Decision.of("Thought: x\nAction: mail[x]"),
        Decision.of("", (ToolCall("f", '{"a":1}', None), ToolCall("g", "raw", "c2")), "tool_calls"),
        Decision.of("word " * MAX_TEXT, refusal="no"),
        Decision(),
    ],
)
def test_a_decision_survives_the_repetition_payload(decision: Decision) -> None:
    """The collector reads each call from the worker's JSON payload (``model.payload``, through ``serial``): every
    field comes back, the ReAct action too."""
    from pytest_consistency.model.serial import from_data, to_data

    assert from_data(Decision, json.loads(json.dumps(to_data(decision)))) == decision
    for asked in (Message("tool", "found", "c1"), Message("user", "and?")):
        assert from_data(Message, json.loads(json.dumps(to_data(asked)))) == asked
