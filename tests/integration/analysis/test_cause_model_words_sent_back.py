"""What the model wrote and the agent sends back is the model's decision (issue 41): real SDKs on the loopback server.

A bookkeeper agent asks the model, which calls ``search`` with a sentence of its own, worded otherwise in every
repetition; the agent sends the model's turn back as the SDK gave it (``message.model_dump()`` on Chat Completions,
``response.output`` on the Responses API) with the tool's result, and repetition 2 is answered otherwise. The step-2
requests differ only in the model's sentence: read as the agent's, that was ``input at step 2``
(``--consistency-cause-max=input=0`` failed on an agent that varies nothing); it is ``sampling at step 1``, recorded
live, replayed, by ``-n 2`` and from merged shards.
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_openai import FakeOpenAI, Step
from suites import load_report, replays_everywhere, run_recorded

AGENT = """
import pytest

SYSTEM = "You are a bookkeeper."
CHAT_TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
TOOLS = [{"type": "function", "name": "search", "parameters": {"type": "object"}}]


@pytest.mark.repeat_consistency(n=3)
def test_chat(pinned_client, consistency):
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "total for march?"}]
    first = pinned_client.chat.completions.create(model="fake-model", messages=messages, tools=CHAT_TOOLS)
    turn = first.choices[0].message
    messages.append(turn.model_dump(exclude_none=True))  # the model's turn, sent back as it came
    for call in turn.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "42 invoices"})
    reply = pinned_client.chat.completions.create(model="fake-model", messages=messages, tools=CHAT_TOOLS)
    answer = reply.choices[0].message.content
    consistency.record(answer)
    assert answer == "total-42", answer


@pytest.mark.repeat_consistency(n=3)
def test_responses(pinned_client, consistency):
    items = [{"role": "user", "content": "total for march?"}]
    first = pinned_client.responses.create(model="fake-model", instructions=SYSTEM, input=items, tools=TOOLS)
    items += first.output  # the model's output items, sent back as the SDK serialises them
    for item in first.output:
        if item.type == "function_call":
            items.append({"type": "function_call_output", "call_id": item.call_id, "output": "42 invoices"})
    reply = pinned_client.responses.create(model="fake-model", instructions=SYSTEM, input=items, tools=TOOLS)
    answer = reply.output_text
    consistency.record(answer)
    assert answer == "total-42", answer
"""

WORDS = ["Let me look that up.", "I will search the invoices for that.", "Searching now."]


def script() -> list[Step]:
    """A serial session's answers: per task and repetition, the call in the repetition's words, then the answer."""
    steps = []
    for _task in ("chat", "responses"):
        for repeat, words in enumerate(WORDS, start=1):
            steps.append(Step(tool_calls=(("search", "{}"),), words=words))
            steps.append(Step(text="total-41" if repeat == 2 else "total-42"))
    return steps


def named(report: dict[str, Any]) -> dict[str, Any]:
    return {
        task["task_id"]: (task["cause"], (task.get("why") or {}).get("step"), (task.get("why") or {}).get("where"))
        for task in report["tasks"]
    }


EXPECTED = ("sampling", 1, "what the model wrote at step 1")


def test_the_models_words_sent_back_are_sampling_at_the_step_that_wrote_them(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    fake.script(*script())
    pytester.makepyfile(test_agent=AGENT)
    live = run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly", "--consistency-report=live.json")
    assert live.ret == 1, live.stdout.str()
    report = load_report(pytester, "live.json")
    # the model's sentence reached the step-2 request, as it wrote it, in every repetition
    sent = [r["body"] for r in fake.requests if r["path"].endswith(("/chat/completions", "/responses"))]
    assert all(words in str(sent[2 * i + 1]) for i, words in enumerate(WORDS * 2))
    found = named(report)
    assert set(found.values()) == {EXPECTED}, found
    chat = next(t for t in report["tasks"] if t["task_id"].endswith("test_chat"))
    assert "Let me look that up." in chat["why"]["detail"] and "I will search the invoices" in chat["why"]["detail"]
    assert report["summary"]["causes"]["input"]["tasks"] == 0
    fake.reset()

    replays = replays_everywhere(pytester, fake.base_url, ret=1)
    assert named(replays["serial"]) == named(replays["xdist"]) == named(replays["merged"]) == found

    # the cause gate at input=0 passes: the agent sent back what its model wrote, and varied nothing of its own
    gated = run_recorded(pytester, fake.base_url, "none", "--consistency-min-pass=0", "--consistency-cause-max=input=0")
    assert gated.ret == 0, gated.stdout.str()
    assert fake.requests == []
