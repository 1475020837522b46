"""What the Anthropic provider reads of a request (route.providers.anthropic): what a Messages request asked, after the
model's last turn."""

from __future__ import annotations

from pytest_consistency.model.trajectory import Message
from pytest_consistency.route.providers.anthropic import PROVIDER as ANTHROPIC

MESSAGES = "http://h/v1/messages"


def test_messages_asked() -> None:
    body = {
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": "Find it"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "found"}]},
                    {"type": "text", "text": "and then?"},
                ],
            },
        ],
    }
    assert ANTHROPIC.asked(MESSAGES, body) == (Message("tool", "found", "t1"), Message("user", "and then?"))
    first = {"system": "Be brief.", "messages": [{"role": "user", "content": "Find it"}]}
    assert ANTHROPIC.asked(MESSAGES, first) == (Message("system", "Be brief."), Message("user", "Find it"))
