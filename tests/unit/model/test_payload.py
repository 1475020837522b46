"""A repetition's payload (``model.payload``): typed, and the same after its JSON trip across xdist's channel."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import Any

import pytest

from pytest_consistency.model.cause import Sent
from pytest_consistency.model.payload import RepetitionPayload
from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.serial import ReportFormatError
from pytest_consistency.model.trajectory import Decision, Message, ToolCall


def call(**fields: Any) -> CallRecord:
    return CallRecord("POST", "http://127.0.0.1:9/v1/chat/completions", "http://127.0.0.1:9/v1", "fp", "m", **fields)


def payload(**fields: Any) -> RepetitionPayload:
    base: dict[str, Any] = dict(
        task_id="test_a.py::test_task",
        repeat=2,
        n=5,
        k=3,
        min_pass=0.8,
        min_rate=None,
        order=7,
        answer_recorded=True,
        answer="yes",
        normalized="yes",
        calls=(),
        notes=(),
        cassette=None,
        unobserved=0,
        curtailed=False,
        added_cost_usd=0.0,
        score=None,
        score_min=None,
        infrastructure=None,
        message=None,
        attempts=1,
        first_attempt=None,
    )
    return RepetitionPayload(**{**base, **fields})


def test_a_call_with_a_decision_asked_messages_and_digests_comes_back_as_records() -> None:
    decision = Decision.of("", (ToolCall("search", '{"q": "invoices"}', "c1"),), "tool_calls")
    asked = (Message("user", "find the invoices"), Message("tool", "found 3", "c1"))
    sent = Sent("d0", (("system", "s1"),), "h", (("user", "u1"),), (("temperature", "0"),), "o", (("model", "m"),))
    calls = (
        call(
            status=200,
            latency_ms=12.5,
            gateway={"x-gw": "1"},
            decision=decision,
            asked=asked,
            sent=sent,
            texts={"u1": "find"},
        ),
        call(status=None, error="ConnectError", detail="could not connect", wait_ms=3.0, role="judge"),
    )
    sent_payload = payload(
        calls=calls,
        notes=("retried once",),
        cassette="cassettes/test_task/rep-2.yaml",
        unobserved=1,
        added_cost_usd=0.25,
        score=0.5,
        score_min=0.4,
        message="assert 'no' == 'yes'",
        equivalence_plugins=("conftest",),
        totals=(4, 20),
    )
    back = RepetitionPayload.from_json(sent_payload.to_json())
    assert back == sent_payload
    assert isinstance(back.calls[0].decision, Decision) and back.calls[0].decision.tool_calls[0].name == "search"
    assert all(isinstance(m, Message) for m in back.calls[0].asked)
    assert isinstance(back.calls[0].sent, Sent)
    assert back.totals == (4, 20) and isinstance(back.calls, tuple)


@pytest.mark.parametrize(
    "answer",
    [
        "café ✓ 日本語 🙂",
        "\ud800 a lone surrogate",  # not encodable as UTF-8: JSON escapes it, as the report does
        {"nested": [1, 2.5, None, True, {"deep": "x"}]},
        ["a", "b"],
    ],
)
def test_an_answer_crosses_as_json_would_carry_it(answer: Any) -> None:
    sent = payload(answer=answer, normalized=answer)
    text = sent.to_json()
    text.encode("utf-8")  # the channel's text: a lone surrogate travels escaped
    assert RepetitionPayload.from_json(text).answer == json.loads(json.dumps(answer))


def test_a_first_attempt_comes_back_a_tuple() -> None:
    """A retry plugin's first attempt (outcome, recorded, answer, normalised answer, message): a tuple again."""
    sent = payload(attempts=2, first_attempt=("failed", True, ["a"], ["a"], "assert False"))
    assert RepetitionPayload.from_json(sent.to_json()).first_attempt == ("failed", True, ["a"], ["a"], "assert False")


def test_a_payload_of_the_older_field_set_reads_as_carrying_no_plugins_or_totals() -> None:
    """Before ``totals`` and ``equivalence_plugins`` were added, a payload had neither: it still reads."""
    data = json.loads(payload().to_json())
    del data["totals"], data["equivalence_plugins"]
    back = RepetitionPayload.from_json(json.dumps(data))
    assert back.equivalence_plugins == () and back.totals is None


def test_a_payload_that_does_not_fit_names_the_field() -> None:
    data = json.loads(payload(calls=(call(),)).to_json())
    data["calls"][0]["status"] = "200"
    with pytest.raises(ReportFormatError, match=r"payload\.calls\[0\]\.status"):
        RepetitionPayload.from_json(json.dumps(data))
    with pytest.raises(ReportFormatError, match="unknown field"):
        RepetitionPayload.from_json(json.dumps({**json.loads(payload().to_json()), "later": 1}))


def test_the_payload_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        payload().answer = "no"  # type: ignore[misc]


def test_reading_a_payload_without_calls_loads_no_deferred_model() -> None:
    """A repetition that made no call is read without the cause, trajectory, resampling or statistics modules its
    calls' annotations would need (issue 30): the hints of a class resolve from its own module first."""
    probe = (
        "import sys, json\n"
        "from pytest_consistency.model.payload import RepetitionPayload\n"
        f"text = {payload().to_json()!r}\n"
        "RepetitionPayload.from_json(text)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('pytest_consistency'))))\n"
    )
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    )
    assert loaded == [
        "pytest_consistency",
        "pytest_consistency.model",
        "pytest_consistency.model.payload",
        "pytest_consistency.model.records",
        "pytest_consistency.model.serial",
    ]
