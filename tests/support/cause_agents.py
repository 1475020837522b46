"""Agents whose repetitions part for a known reason, as inner test modules on the real SDKs (issue 28).

One module per API (OpenAI chat completions, the Responses API, the Anthropic Messages API), streamed or not. Its
tasks, each repeated three times, in the order a serial session runs them (``-p no:randomly``):

- ``sampling``: the same request every time, decided otherwise by repetition 2 (the script answers ``blue``);
- ``input``: the system prompt ends with the repetition's number (a clock at the end of a long prompt, beyond the
  240-character excerpt), and repetition 2 is answered otherwise;
- ``environment``: the same first request and decision (``check``), then a tool result that differs in repetition
  2 (the agent's "tool" reads its repetition), and the agent answers from it;
- chat completions only, ``route`` (repetition 2 served by another model), ``retried`` (repetition 2's call
  answered 429 once, then retried by the SDK: a route with errors) and ``outside`` (the same calls and answers, a
  check outside the model fails in repetition 2).

``script(api)`` gives the answers a serial session asks for, in order, as keyword arguments of the fake's ``Step``.
"""

from __future__ import annotations

from typing import Any

#: The long system prompt: what differs (the repetition, like a clock) comes after 300 characters of it.
PROMPT = "You are a careful assistant. " * 12

COMMON = """
import pytest

PROMPT = {prompt!r}
STREAM = {stream!r}


def system(task, consistency):
    return PROMPT + (f"now: 2026-01-0{{consistency.repeat}}T00:00:00" if task == "input" else "now: fixed")


def tool_result(consistency):
    return "rain" if consistency.repeat == 2 else "sun"


@pytest.mark.parametrize("task", {tasks!r})
@pytest.mark.repeat_consistency(n=3)
def test_agent(task, {fixture}, consistency):
    first = ask({fixture}, system(task, consistency), [("user", f"{{task}}: which colour?")])
    turns = [("user", f"{{task}}: which colour?")]
    answer = first
    if task == "environment":
        turns += [("assistant", first), ("user", "tool result: " + tool_result(consistency))]
        answer = ask({fixture}, system(task, consistency), turns)
    consistency.record(answer)
    if task == "outside":
        assert consistency.repeat != 2, "a check outside the model"
    assert answer == "red", answer
"""

CHAT = """

def ask(client, system, turns):
    messages = [{"role": "system", "content": system}] + [{"role": r, "content": c} for r, c in turns]
    if not STREAM:
        return client.chat.completions.create(model="fake-model", messages=messages).choices[0].message.content
    chunks = client.chat.completions.create(model="fake-model", messages=messages, stream=True)
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
"""

RESPONSES = """

def ask(client, system, turns):
    items = [{"role": r, "content": c} for r, c in turns]
    if not STREAM:
        return client.responses.create(model="fake-model", instructions=system, input=items).output_text
    events = client.responses.create(model="fake-model", instructions=system, input=items, stream=True)
    return "".join(e.delta for e in events if e.type == "response.output_text.delta")
"""

ANTHROPIC = """

def ask(client, system, turns):
    messages = [{"role": r, "content": c} for r, c in turns]
    if not STREAM:
        reply = client.messages.create(model=MODEL, max_tokens=32, system=system, messages=messages)
        return reply.content[0].text
    events = client.messages.create(model=MODEL, max_tokens=32, system=system, messages=messages, stream=True)
    return "".join(e.delta.text for e in events if e.type == "content_block_delta")
"""

TASKS = {"chat": ["sampling", "input", "environment", "route", "retried", "outside"]}
EXPECTED = {
    "sampling": ("sampling", 1),
    "input": ("input", 1),
    "environment": ("environment", 2),
    "route": ("route", 1),
    "retried": ("route", 1),
    "outside": ("outside the model", None),
}


def tasks(api: str) -> list[str]:
    return TASKS.get(api, ["sampling", "input", "environment"])


def module(api: str, stream: bool) -> str:
    """The inner test module for ``api`` (chat, responses, anthropic)."""
    fixture = "pinned_anthropic_client" if api == "anthropic" else "pinned_client"
    body = {"chat": CHAT, "responses": RESPONSES, "anthropic": ANTHROPIC}[api]
    head = ""
    if api == "anthropic":
        from fake_anthropic import MODEL

        head = f"MODEL = {MODEL!r}\n"
    return head + COMMON.format(prompt=PROMPT, stream=stream, tasks=tasks(api), fixture=fixture) + body


def script(api: str) -> list[dict[str, Any]]:
    """The answers of a serial session, in order, as keyword arguments of the fake server's ``Step``."""
    answers: list[dict[str, Any]] = []
    for task in tasks(api):
        for repeat in (1, 2, 3):
            if task == "environment":
                answers.append({"text": "check"})
            if task == "retried" and repeat == 2:
                answers.append({"status": 429})
            wrong = repeat == 2 and task != "outside"
            served = "other-model" if task == "route" and repeat == 2 else None
            answers.append({"text": "blue" if wrong else "red", "served_model": served})
    return answers
