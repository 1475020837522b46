"""Adversarial: an API key inside a tool call's arguments and inside a tool result the agent sends back never
reaches the trajectory tree, the attribution line, the JSON report, the HTML page, the Markdown or the terminal.

The key is the session's own live key (the redaction knows it), echoed by the model into a tool argument whose
branch the tree must show with its arguments (two repetitions call the same tool with different arguments).
"""

from __future__ import annotations

import json

import pytest
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from suites import load_report, run_recorded

from pytest_consistency.secrets.literals import find_secret

AGENT = """
import os, pytest

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]

@pytest.mark.repeat_consistency(n=2)
def test_agent(pinned_client, consistency):
    messages = [{"role": "user", "content": "look it up"}]
    for step in range(3):
        reply = pinned_client.chat.completions.create(model="fake-model", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            consistency.record(message.content)
            assert "march" in str(messages), "searched for the wrong thing"
            return
        call = message.tool_calls[0]
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": "search", "arguments": call.function.arguments}}]})
        used = " using " + os.environ["OPENAI_API_KEY"]
        result = "results for " + call.function.arguments + used
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    raise AssertionError("no answer")
"""


@pytest.mark.parametrize("mode", ["off", "once"])
def test_a_key_in_tool_arguments_and_tool_results_is_redacted_everywhere(
    pytester: pytest.Pytester, fake: FakeOpenAI, mode: str
) -> None:
    """Live without cassettes (the tap reads the key as the server sent it) and recording into cassettes."""
    fake.script(
        Step(tool_calls=(("search", json.dumps({"q": GOOD_KEY})),)),
        Step(text="done"),
        Step(tool_calls=(("search", json.dumps({"q": "march"})),)),
        Step(text="done"),
    )
    pytester.makepyfile(test_agent=AGENT)
    result = run_recorded(
        pytester, fake.base_url, mode, "-p", "no:randomly", "-v", "--consistency-html=r.html", "--consistency-md=r.md"
    )
    assert result.ret == 1, result.stdout.str()
    report = load_report(pytester)
    mapped = report["tasks"][0]["trajectory"]
    assert mapped["divergent_step"] == 1
    # The branch with the key is shown with its arguments, and the key in them was there to redact.
    labels = [node["detail"] for node in mapped["tree"]]
    assert any("<redacted>" in label for label in labels), labels
    assert any(
        "<redacted>" in json.dumps(call["asked"]) for r in report["tasks"][0]["repetitions"] for call in r["calls"]
    )
    outputs = {
        "terminal": result.stdout.str(),
        "report": (pytester.path / "report.json").read_text(),
        "html": (pytester.path / "r.html").read_text(),
        "markdown": (pytester.path / "r.md").read_text(),
    }
    assert "repetitions part at step 1" in outputs["terminal"] and "repetitions part at step 1" in outputs["markdown"]
    assert "Where repetitions part" in outputs["html"]
    for name, text in outputs.items():
        assert find_secret(text, [GOOD_KEY]) is None, name
    for cassette in (pytester.path / "cassettes").rglob("*.yaml"):
        assert find_secret(cassette.read_text(), [GOOD_KEY]) is None, cassette
