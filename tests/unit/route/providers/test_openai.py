"""What the OpenAI provider reads of a request (route.providers.openai): what a chat completions or Responses request
asked, after the model's last turn."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_consistency.model.trajectory import Message
from pytest_consistency.route.providers.openai import PROVIDER as OPENAI

CHAT = "http://h/v1/chat/completions"


RESPONSES = "http://h/v1/responses"


@pytest.mark.parametrize(
    ("body", "asked"),
    [
        (
            {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]},
            (Message("system", "Be brief."), Message("user", "Hi")),
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "Find it"},
                    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "3 invoices"},
                    {"role": "tool", "content": [{"type": "text", "text": "no id"}]},
                ]
            },
            (Message("tool", "3 invoices", "c1"), Message("tool", "no id", None)),
        ),
    ],
)
def test_chat_asked_is_what_follows_the_last_assistant_turn(body: dict[str, Any], asked: tuple[Message, ...]) -> None:
    assert OPENAI.asked(CHAT, body) == asked


def test_responses_asked() -> None:
    first = {"instructions": "Be brief.", "input": "Find it"}
    assert OPENAI.asked(RESPONSES, first) == (Message("system", "Be brief."), Message("user", "Find it"))
    later = {
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": "Find it"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "found"},
        ],
    }
    assert OPENAI.asked(RESPONSES, later) == (Message("tool", "found", "c1"),)
    chained = {
        "previous_response_id": "r1",
        "instructions": "x",
        "input": [{"type": "function_call_output", "call_id": "c", "output": "o"}],
    }
    assert OPENAI.asked(RESPONSES, chained) == (Message("tool", "o", "c"),)
