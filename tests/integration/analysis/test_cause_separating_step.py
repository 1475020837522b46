"""The cause that explains the failures, from the wire (issue 40): a real openai SDK agent on the loopback server.

Five repetitions of a three-step bookkeeping agent, outcomes PPPFF. Repetition 2 (it passes) gets another tool
result back from its search ("(cached)"), so its step-2 request differs from the others'; repetitions 4 and 5 (they
fail) take another decision at step 3 (a tool call where 1, 2 and 3 answer), on the same tool results as 1 and 3.
The first difference, repetition 2's tool result, changes no outcome; the step-3 decision separates the passes from
the failures. The terminal and the JSON report name ``sampling at step 3`` with the tool result kept as "also",
recorded live and replayed from the cassettes by ``-n 2``; the gap by cause carries its interval.
"""

from __future__ import annotations

import re

import pytest
from fake_openai import FakeOpenAI, Step
from suites import load_report, run_recorded

AGENT = """
import pytest

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in ("search", "sum")
]


def run_tool(name, consistency):
    if name == "search":
        return "42 invoices" + (" (cached)" if consistency.repeat == 2 else "")
    return "march total: 42"


@pytest.mark.repeat_consistency(n=5)
def test_books(pinned_client, consistency):
    messages = [
        {"role": "system", "content": "You are a bookkeeper."},
        {"role": "user", "content": "total for march?"},
    ]
    for _ in range(3):
        reply = pinned_client.chat.completions.create(model="fake-model", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            break
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in message.tool_calls
        ]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for c in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": c.id, "content": run_tool(c.function.name, consistency)})
    consistency.record(message.content)
    assert message.content == "total-42", message.content
"""


def script() -> list[Step]:
    """The answers of a serial session, repetition by repetition: search, sum, then the answer (1 to 3) or another
    search (4 and 5)."""
    steps = []
    for repeat in range(1, 6):
        steps += [Step(tool_calls=(("search", "{}"),)), Step(tool_calls=(("sum", "{}"),))]
        steps.append(Step(tool_calls=(("search", '{"month": "april"}'),)) if repeat >= 4 else Step(text="total-42"))
    return steps


def named(report: dict) -> tuple:
    (task,) = report["tasks"]
    why = task["why"]
    return task["outcomes"], task["cause"], why["step"], why["others"]


def test_the_step_that_separates_passes_from_failures_is_named(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """Serially; a replay by two workers names each task's cause and step the same way
    (tests/integration/report/test_cause_in_every_output.py::test_one_story_of_the_cause_in_every_output[xdist])."""
    fake.script(*script())
    pytester.makepyfile(test_agent=AGENT)
    result = run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly")
    assert result.ret == 1, result.stdout.str()
    report = load_report(pytester)
    outcomes = ["passed"] * 3 + ["failed"] * 2
    assert named(report) == (outcomes, "sampling", 3, ["environment at step 2"])
    share = report["summary"]["causes"]["sampling"]
    assert (share["tasks"], share["gap_pp"]) == (1, pytest.approx(60.0))
    assert share["interval"]["low"] <= share["gap_pp"] <= share["interval"]["high"]
    terminal = re.sub(r"\s+", " ", result.stdout.str())
    assert "cause sampling at step 3: the same request got different decisions" in terminal
    assert "(also: environment at step 2)" in terminal
    low, high = share["interval"]["low"], share["interval"]["high"]
    assert f"gap by cause: sampling 60.0 pp [{low:.1f}, {high:.1f}] (1 task)" in terminal
    assert "intervals conditional on the causes named" in terminal
