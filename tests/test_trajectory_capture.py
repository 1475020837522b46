"""Each call's decision and what it asked, captured on the wire: the same live and replayed, streamed or not.

A real multi-step agent (the openai SDK on the pinned client, tool calls answered by the loopback server) runs in an
inner pytest session; its report's call records must hold every step's decision (tool names, normalised arguments,
stop reason) and the new messages it asked (tool results included), and the replay of its cassettes must give
exactly the same records.
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_openai import FakeOpenAI, Step
from suites import report_calls, run_recorded

AGENT = """
import json, pytest

STREAM = {stream}
TOOLS = [{{"type": "function", "function": {{"name": name, "parameters": {{"type": "object"}}}}}}
         for name in ("search_invoices", "list_emails")]

def ask(client, messages):
    if not STREAM:
        reply = client.chat.completions.create(model="fake-model", messages=messages, tools=TOOLS)
        choice = reply.choices[0]
        return choice.finish_reason, choice.message.content
    text, finish = [], None
    for chunk in client.chat.completions.create(model="fake-model", messages=messages, tools=TOOLS, stream=True):
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            text.append(choice.delta.content or "")
    return finish, "".join(text)

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency):
    messages = [{{"role": "system", "content": "File invoices."}}, {{"role": "user", "content": "total for march?"}}]
    for step in range(5):
        finish, text = ask(pinned_client, messages)
        if finish != "tool_calls":
            consistency.record(text)
            assert text == "total-42"
            return
        messages.append({{"role": "assistant", "content": None, "tool_calls": [
            {{"id": "call_0", "type": "function", "function": {{"name": "search_invoices", "arguments": "{{}}"}}}}]}})
        messages.append({{"role": "tool", "tool_call_id": "call_0", "content": f"result {{step}}"}})
    raise AssertionError("no answer")
"""

SCRIPT = [
    Step(tool_calls=(("search_invoices", '{"month": "march", "limit": 3}'),)),
    Step(text="total-42"),
    Step(tool_calls=(("search_invoices", '{"limit":3,"month":"march"}'), ("list_emails", "{}"))),
    Step(text="total-42"),
]


def decisions(calls: list[dict[str, Any]]) -> list[Any]:
    return [(c["decision"], c["asked"]) for c in calls]


@pytest.mark.parametrize("stream", [False, True])
def test_live_and_replayed_calls_carry_the_same_steps(
    pytester: pytest.Pytester, fake: FakeOpenAI, stream: bool
) -> None:
    fake.script(*SCRIPT)
    pytester.makepyfile(test_agent=AGENT.format(stream=stream))
    live = run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly")
    assert live.ret == 0, live.stdout.str()
    recorded = report_calls(pytester)
    assert len(recorded) == 4 and len(fake.requests) == 4

    first = recorded[0]["decision"]
    assert [c["name"] for c in first["tool_calls"]] == ["search_invoices"]
    assert first["tool_calls"][0]["arguments"] == '{"limit":3,"month":"march"}'
    assert first["tool_calls"][0]["id"] == "call_0"
    assert first["stop_reason"] == "tool_calls"
    assert [m["role"] for m in recorded[0]["asked"]] == ["system", "user"]
    assert recorded[1]["asked"] == [{"role": "tool", "text": "result 0", "tool_call_id": "call_0"}]
    assert recorded[1]["decision"]["text"] == "total-42"
    assert recorded[1]["decision"]["stop_reason"] == (None if stream else "stop")  # the fake streams no finish_reason
    parallel = recorded[2]["decision"]["tool_calls"]
    assert [(c["name"], c["arguments"]) for c in parallel] == [
        ("search_invoices", '{"limit":3,"month":"march"}'),
        ("list_emails", "{}"),
    ]

    fake.reset()
    replay = run_recorded(pytester, fake.base_url, "none", "-p", "no:randomly")
    assert replay.ret == 0, replay.stdout.str()
    assert fake.requests == []  # served from the cassettes
    replayed = report_calls(pytester)
    assert all(c["replayed"] for c in replayed)
    assert decisions(replayed) == decisions(recorded)
