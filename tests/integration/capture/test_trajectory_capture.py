"""Each call's decision and what it asked, captured on the wire: the same live and replayed, streamed or not.

A real multi-step agent (the openai SDK on the pinned client, tool calls answered by the loopback server) runs in an
inner pytest session; its report's call records must hold every step's decision (tool names, normalised arguments,
stop reason) and the new messages it asked (tool results included), and the replay of its cassettes must give
exactly the same records.
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_anthropic import MODEL, FakeAnthropic
from fake_anthropic import Step as AnthropicStep
from fake_openai import FakeOpenAI, Step
from suites import report_calls, run_mode, run_recorded

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


RESPONSES_AGENT = """
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency):
    if {stream}:
        events = pinned_client.responses.create(model="fake-model", instructions="Be brief.", input="ok?", stream=True)
        text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    else:
        text = pinned_client.responses.create(model="fake-model", instructions="Be brief.", input="ok?").output_text
    consistency.record(text)
"""


@pytest.mark.parametrize("stream", [False, True])
def test_responses_api_steps_live_and_replayed(pytester: pytest.Pytester, fake: FakeOpenAI, stream: bool) -> None:
    fake.script(Step(text="total 42"), Step(text="total 42"))
    pytester.makepyfile(test_agent=RESPONSES_AGENT.format(stream=stream))
    live = run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly")
    assert live.ret == 0, live.stdout.str()
    recorded = report_calls(pytester)
    assert [c["decision"]["text"] for c in recorded] == ["total 42"] * 2
    assert recorded[0]["decision"]["stop_reason"] == "completed"
    assert recorded[0]["asked"] == [
        {"role": "system", "text": "Be brief.", "tool_call_id": None},
        {"role": "user", "text": "ok?", "tool_call_id": None},
    ]
    fake.reset()
    assert run_recorded(pytester, fake.base_url, "none", "-p", "no:randomly").ret == 0
    assert fake.requests == [] and decisions(report_calls(pytester)) == decisions(recorded)


MESSAGES_AGENT = """
import pytest

MODEL = {model!r}

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_anthropic_client, consistency):
    request = dict(model=MODEL, max_tokens=64, system="Be brief.", messages=[{{"role": "user", "content": "sender?"}}])
    if {stream}:
        with pinned_anthropic_client.messages.stream(**request) as stream:
            text = "".join(stream.text_stream)
    else:
        text = pinned_anthropic_client.messages.create(**request).content[0].text
    consistency.record(text)
"""


@pytest.mark.parametrize("stream", [False, True])
def test_messages_api_steps_live_and_replayed(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    claude.script(AnthropicStep(text="alice  wrote it"), AnthropicStep(text="bob", stop_reason="max_tokens"))
    pytester.makepyfile(test_agent=MESSAGES_AGENT.format(model=MODEL, stream=stream))
    assert run_mode(pytester, "once").ret == 0
    recorded = report_calls(pytester)
    assert [(c["decision"]["text"], c["decision"]["stop_reason"]) for c in recorded] == [
        ("alice wrote it", "end_turn"),
        ("bob", "max_tokens"),
    ]
    assert [m["role"] for m in recorded[0]["asked"]] == ["system", "user"]
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    assert run_mode(pytester, "none").ret == 0
    assert claude.requests == [] and decisions(report_calls(pytester)) == decisions(recorded)
