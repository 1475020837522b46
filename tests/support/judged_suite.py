"""A task whose outcome a judge decides, on the loopback fake: the agent summarises, ``judge_client`` is asked
``Judge: <summary>`` and the repetition passes when it answers ``PASS``. For the rejudge and votes tests."""

from __future__ import annotations

from typing import Any

from fake_openai import FakeOpenAI

SUITE = """
import pytest


@pytest.mark.repeat_consistency(n=N, min_pass=MIN)
def test_summary(pinned_client, judge_client, consistency):
    summary = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "summarise the invoice"}]
    ).choices[0].message.content
    verdict = judge_client.chat.completions.create(
        model=None, messages=[{"role": "user", "content": "Judge: " + summary}]
    ).choices[0].message.content
    consistency.record(summary)
    assert verdict == "PASS"
"""
TASK = "test_summary.py::test_summary"


def suite(n: int, min_pass: float = 0) -> str:
    """The suite's file with ``n`` repetitions and the marker's ``min_pass``."""
    return SUITE.replace("N,", f"{n},").replace("MIN)", f"{min_pass:g})")


def is_judge(body: dict[str, Any]) -> bool:
    return str(body["messages"][0]["content"]).startswith("Judge: ")


def agent_requests(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r for r in fake.requests if not is_judge(r["body"])]


def judge_requests(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r for r in fake.requests if is_judge(r["body"])]
