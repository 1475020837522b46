"""The divergence map of a multi-step agent, end to end: report, -n 2, merged shards, every output, no secret.

The agent (the openai SDK on the pinned client) calls a tool, reads its result and answers; the loopback server
decides which tool each repetition calls, so the repetitions part at step 1. It is recorded once into cassettes;
every run after that replays them, so serial, ``-n 2`` and shards see the same decisions and must give the same map.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Step
from suites import cli, load_report, run_recorded

AGENT = """
import json, pytest

TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
         for name in ("search_invoices", "list_emails")]

@pytest.mark.parametrize("task", ["invoices", "steady"])
@pytest.mark.repeat_consistency(n=4)
def test_agent(task, pinned_client, consistency):
    messages = [{"role": "user", "content": f"total for march ({task})?"}]
    used = []
    for step in range(4):
        reply = pinned_client.chat.completions.create(model="fake-model", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            consistency.record(message.content)
            assert used == ["search_invoices"], used
            return
        call = message.tool_calls[0]
        used.append(call.function.name)
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.function.name,
                                                             "arguments": call.function.arguments}}]})
        messages.append({"role": "tool", "tool_call_id": call.id, "content": f"result of {call.function.arguments}"})
    raise AssertionError("no answer")
"""


def search(**arguments: Any) -> Step:
    return Step(tool_calls=(("search_invoices", json.dumps({"month": "march", **arguments})),))


EMAILS = Step(tool_calls=(("list_emails", "{}"),))
ANSWER = Step(text="total-42")
#: In the order a serial session asks: task invoices parts at step 1 (repetition 3 reads emails), steady never.
SCRIPT = [search(), ANSWER, search(), ANSWER, EMAILS, ANSWER, search(), ANSWER] + [search(), ANSWER] * 4


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake: FakeOpenAI) -> pytest.Pytester:
    fake.script(*SCRIPT)
    pytester.makepyfile(test_agent=AGENT)
    result = run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly", "--consistency-report=live.json")
    assert result.ret == 1, result.stdout.str()  # task invoices failed once
    fake.reset()
    return pytester


def maps(report: dict[str, Any]) -> dict[str, Any]:
    return {t["task_id"]: t["trajectory"] for t in report["tasks"]}


def test_the_map_names_the_step_and_the_branches(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    result = run_recorded(recorded, fake.base_url, "none", "-p", "no:randomly", "-v")
    assert fake.requests == []
    invoices, steady = (maps(load_report(recorded))[f"test_agent.py::test_agent[{t}]"] for t in ("invoices", "steady"))
    assert (invoices["divergent_step"], invoices["distinct"], invoices["steps"]) == (1, [2, 1], 2)
    assert invoices["tool_distance"] == 0.5  # 3 of 6 pairs differ in their one tool
    assert invoices["parts"] == [
        "repetitions part at step 1 (tool `search_invoices` vs `list_emails`)",
        "the branch through `search_invoices` passes 3/3, the other 0/1",
    ]
    tree = [(n["step"], n["label"], n["count"], n["passed"]) for n in invoices["tree"]]
    assert tree == [
        (0, "start", 4, 3),
        (1, "tool search_invoices(...)", 3, 3),
        (2, "text: total-42", 3, 3),
        (1, "tool list_emails()", 1, 0),
        (2, "text: total-42", 1, 0),
    ]
    assert steady["divergent_step"] is None and steady["parts"] == [] and steady["tool_distance"] == 0.0
    result.stdout.fnmatch_lines(
        [
            "test_agent.py::test_agent[[]invoices[]]: repetitions part at step 1 (tool `search_invoices` vs "
            "`list_emails`); the branch through `search_invoices` passes 3/3, the other 0/1",
            "  4 repetitions, up to 2 steps, distinct decisions per step 2 1, tool-sequence distance 0.50",
            "  steps 1-2: tool search_invoices(...) → text: total-42  [[]3/3 passed[]]",
            "  steps 1-2: tool list_emails() → text: total-42  [[]0/1 passed[]]",
        ]
    )
    assert "test_agent[steady]:" not in result.stdout.str()


def test_xdist_and_merged_shards_give_the_same_map(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    assert (
        run_recorded(recorded, fake.base_url, "none", "-p", "no:randomly", "--consistency-report=serial.json").ret == 1
    )
    serial = maps(load_report(recorded, "serial.json"))
    assert serial == maps(load_report(recorded, "live.json"))  # live and replayed alike
    assert run_recorded(recorded, fake.base_url, "none", "-n", "2", "--consistency-report=xdist.json").ret == 1
    assert maps(load_report(recorded, "xdist.json")) == serial
    for i in (1, 2):
        shard = run_recorded(
            recorded, fake.base_url, "none", f"--consistency-shard={i}/2", f"--consistency-report=shard{i}.json"
        )
        assert shard.ret == 0, shard.stdout.str()
    merged = cli("merge", "shard1.json", "shard2.json", "-o", "merged.json", cwd=recorded.path)
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert maps(load_report(recorded, "merged.json")) == serial
    assert fake.requests == []
