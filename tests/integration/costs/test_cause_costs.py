"""What naming the cause does not pay for: structural guards of benchmarks/causes.py's findings (no timings here).

- ``sent_of`` writes each turn of the conversation as canonical JSON once, and joins the history's and the whole
  request's texts from those pieces (it dumped the conversation twice and the standing fields three times: about
  8 % of its instructions on a 20-step body); the joined text must stay the text of the whole dumped at once, or
  the digests of a session would no longer match a replay's or another shard's.
- The summary asks for a cause only where the repetitions part: a consistent task (two thirds of the benchmark's)
  builds no events and no prefix tree.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import pytest_consistency.analysis.cause.attribute as attribute_module
import pytest_consistency.analysis.summary as summary_module
from pytest_consistency.capture import canonical
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.trajectory import Decision, ToolCall
from pytest_consistency.route.providers import builtin

#: Their sessions' processes start cold, not forked from the warm server (tests/support/forkserver.py):
#: what a session imports by itself is what these tests measure.
pytestmark = pytest.mark.cold_start

URL = "http://127.0.0.1:8000/v1/chat/completions"


def chat_body(steps: int, clock: str = "") -> dict[str, Any]:
    """An OpenAI chat request at step ``steps`` of a tool conversation (ids as the SDK generates them)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You keep the books." + clock},
        {"role": "user", "content": "What did customer 7 pay in March?"},
    ]
    for index in range(steps):
        call_id = f"call_{index:04x}{'ab' * 10}"
        arguments = json.dumps({"id": index, "q": "march"})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": "read_invoice", "arguments": arguments}}
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps({"amount": 40 + index})})
    tool = {"type": "function", "function": {"name": "read_invoice", "parameters": {"type": "object"}}}
    return {"model": "fake-model", "messages": messages, "tools": [tool], "temperature": 0.2, "seed": 3}


def test_sent_of_writes_each_turn_once_and_its_digests_are_those_of_the_whole_dumped_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider = builtin("openai")
    assert provider is not None
    body = chat_body(19)
    written: list[Any] = []
    dump = canonical.canonical_text

    def counted(value: Any) -> str:
        written.append(value)
        return dump(value)

    monkeypatch.setattr(canonical, "canonical_text", counted)
    sent, _ = canonical.sent_of(provider, URL, body, None, URL)
    turns = len(body["messages"])
    standing = len(body) - 1  # every top-level field but the conversation
    sampling = 2  # temperature and seed, as sent
    assert len(written) <= turns + standing + sampling, f"{len(written)} dumps for {turns} turns"
    assert not any(isinstance(value, list) and len(value) > 1 for value in written), "a conversation dumped whole"

    # The same digests as the canonical request dumped at once (its ids numbered as sent_of numbers them).
    monkeypatch.setattr(canonical, "canonical_text", dump)
    conversation = provider.conversation(URL, body)
    assert conversation is not None
    turns_numbered = canonical._numbered(conversation.turns, {})
    whole = {**body, "messages": turns_numbered}
    assert sent.digest == canonical.digest(dump(whole))
    assert sent.history == canonical.digest(dump(turns_numbered[: conversation.new]))
    assert dict(sent.standing) == {key: canonical.digest(dump(body[key])) for key in body if key != "messages"}


def repetitions(task: int, n: int, parts: bool) -> list[RepetitionResult]:
    """``n`` repetitions of a three-step task; they part at the last step when ``parts``."""
    reps = []
    for r in range(1, n + 1):
        other = parts and r % 2 == 0
        calls = []
        for step in range(3):
            if step < 2:
                decision = Decision.of("", (ToolCall("read_invoice", json.dumps({"id": step})),), "tool_calls")
            else:
                decision = Decision.of(f"The total is {41 if other else 40} euros.", (), "stop")
            calls.append(
                CallRecord(
                    method="POST",
                    url=URL,
                    base_url=URL.removesuffix("/chat/completions"),
                    key_fingerprint="sha256:0f1e2d3c",
                    model_requested="fake-model",
                    model_served="fake-model",
                    status=200,
                    decision=decision,
                )
            )
        answer = "41" if other else "40"
        reps.append(
            RepetitionResult(
                task_id=f"tests/test_agent.py::test_task[{task}]",
                nodeid=f"tests/test_agent.py::test_task[{task}-rep{r}]",
                repeat=r,
                n=n,
                k=n,
                min_pass=0.0,
                order=task,
                outcome="failed" if other else "passed",
                answer_recorded=True,
                answer=answer,
                normalized=answer,
                calls=calls,
            )
        )
    return reps


def test_the_summary_asks_for_a_cause_only_where_repetitions_part(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    find = attribute_module.task_finding  # where the summary imports it from, with the first inconsistent task

    def counted(task_id: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(task_id)
        return find(task_id, *args, **kwargs)

    monkeypatch.setattr(attribute_module, "task_finding", counted)
    reps = [rep for task in range(12) for rep in repetitions(task, 4, parts=task % 3 == 0)]
    summary = summary_module.build_summary(reps)
    parting = {task.task_id for task in summary.tasks if task.cause is not None}
    assert len(parting) == 4
    assert sorted(asked) == sorted(parting), "a cause was looked for in a consistent task"


#: What a session whose tasks made no model call and agree never needs: the cause analysis, the trajectory model and
#: its analysis, the resampling model and the baseline comparison's statistics (issue 30: the cause attribution costs
#: nothing when not used). Their dataclasses were 90 of the 277 methods Python 3.11 compiled for the plugin's imports.
UNUSED = (
    "pytest_consistency.analysis.cause.events",
    "pytest_consistency.analysis.cause.find",
    "pytest_consistency.analysis.cause.spans",
    "pytest_consistency.analysis.trajectory",
    "pytest_consistency.model.trajectory",
    "pytest_consistency.model.resample",
    "pytest_consistency.stats.stratified",
    "pytest_consistency.stats.significance",
)
#: What looking for the cause of an inconsistent task loads, calls or none (with every module of analysis.cause).
CAUSE_ANALYSIS = (
    "pytest_consistency.analysis.trajectory",
    "pytest_consistency.analysis.trajectory.align",
    "pytest_consistency.analysis.trajectory.steps",
    "pytest_consistency.model.trajectory",
)
LOADED_PROBE = """
import json
import os
import sys


def pytest_unconfigure(config):
    worker = getattr(config, "workerinput", {}).get("workerid", "controller")
    names = sorted(m for m in sys.modules if m.startswith("pytest_consistency"))
    with open(f"loaded-{worker}.json", "w") as handle:
        json.dump(names, handle)
"""


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("answer", ["same", "differs"])
def test_a_session_without_model_calls_loads_no_cause_trajectory_or_comparison_machinery(
    pytester: pytest.Pytester, workers: int, answer: str
) -> None:
    """Consistent tasks, or tasks whose answers differ (a cause outside the model, found without a call): in the
    controller and in every xdist worker, the summary, report and terminal are built without the modules above."""
    pytester.makeconftest(LOADED_PROBE)
    record = "request.node.callspec.params['_consistency_repetition']" if answer == "differs" else "'x'"
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.repeat_consistency(n=3)
        @pytest.mark.parametrize("task", range(4))
        def test_task(task, request, consistency):
            consistency.record({record})
        """
    )
    args = ["-p", "no:cacheprovider", "--consistency-report=report.json", *(["-n", str(workers)] if workers else [])]
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=12)
    report = json.loads((pytester.path / "report.json").read_text())
    why = {t["task_id"]: (t["why"] or {}).get("cause") for t in report["tasks"]}
    assert set(why.values()) == ({"outside the model"} if answer == "differs" else {None}), why
    files = sorted(pytester.path.glob("loaded-*.json"))
    assert len(files) == 1 + workers, files
    for path in files:
        loaded = json.loads(path.read_text())
        assert "pytest_consistency.model.records" in loaded, path.name  # the probe saw the repetitions' records
        unused = [name for name in loaded if name.startswith(UNUSED)]
        if answer == "differs" and path.name == "loaded-controller.json":  # the cause is looked for, and named,
            # with what it reads the repetitions' decisions by; the divergence map (no call to map) stays unloaded
            assert "pytest_consistency.analysis.cause.find" in loaded
            cause = "pytest_consistency.analysis.cause."
            unused = [n for n in unused if n not in CAUSE_ANALYSIS and not n.startswith(cause)]
        assert not unused, (path.name, unused)
