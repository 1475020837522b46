"""What a call to an OpenAI API decided, read from a Responses API response object (route.providers.openai_decisions):
message text, function calls and built-in tool calls in order, refusals, and why it stopped; and where what is new
in a request starts, after the model's own last turn."""

from __future__ import annotations

from pytest_consistency.model.trajectory import Decision, ToolCall
from pytest_consistency.route.providers.openai_decisions import is_assistant, new_from, responses_decision


def test_what_is_new_starts_after_the_models_last_turn() -> None:
    user, assistant, tool = {"role": "user"}, {"role": "assistant"}, {"role": "tool"}
    assert new_from([user, assistant, tool, tool], is_assistant) == 2
    assert new_from([user, assistant, user, assistant], is_assistant) == 4  # nothing new after the last turn
    assert new_from([user, tool], is_assistant) == 0  # no turn of the model's yet: all of it is new
    assert new_from([], is_assistant) == 0


def test_a_response_of_text_and_calls_keeps_the_calls_in_the_order_sent() -> None:
    response = {
        "status": "completed",
        "output": [
            {"type": "message", "content": [{"type": "output_text", "text": "Looking "}, {"text": "it up."}]},
            {"type": "function_call", "name": "search", "arguments": '{"q": "x"}', "call_id": "c1"},
            {"type": "web_search_call", "id": "ws_1", "action": {"query": "y"}},
            "not an item",
        ],
    }
    decision = responses_decision(response)
    assert decision.text == "Looking it up."
    assert decision.tool_calls == (
        ToolCall("search", '{"q":"x"}', "c1"),
        ToolCall("web_search", '{"query":"y"}', "ws_1"),
    )
    assert decision.stop_reason == "completed" and decision.refusal is None


def test_a_refusal_is_kept_apart_from_the_text() -> None:
    response = {"output": [{"type": "message", "content": [{"type": "refusal", "refusal": "I cannot help."}]}]}
    assert responses_decision(response) == Decision.of("", (), None, "I cannot help.")


def test_an_incomplete_response_stops_for_its_reason_not_its_status() -> None:
    response = {
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "The total is"}]}],
    }
    assert responses_decision(response).stop_reason == "max_output_tokens"
    assert responses_decision({"status": 3, "output": None}) == Decision.of("")
