"""The token budget counts what was refused and what was not read: nothing is free by accident."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Step


def run(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        f"--consistency-base-url={fake.base_url}",
        "--consistency-record=off",
        "--consistency-report=report.json",
        "--consistency-max-retries=0",
        *args,
    )


def calls(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    data = json.loads((pytester.path / "report.json").read_text())
    return [c for t in data["tasks"] for r in t["repetitions"] for c in r["calls"]]


def test_calls_refused_by_the_budget_are_recorded_as_such(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.repeat_consistency(n=4, min_pass=0)
def test_spend(pinned_client, consistency):
    pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "x"}])
"""
    )
    result = run(pytester, fake, "--consistency-token-budget=15")
    assert result.ret == 1 and len(fake.requests) == 2
    errors = [c["error"] for c in calls(pytester)]
    assert errors == [None, None, "token_budget", "token_budget"]
    data = json.loads((pytester.path / "report.json").read_text())
    assert data["tasks"][0]["drift"]["errors"] == {"token_budget": 2}


def test_a_stream_closed_early_is_charged_an_estimate(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(*[Step(text="one two three four five six seven eight")] * 3)
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_peek(pinned_client, consistency):
    stream = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "count"}], stream=True,
        stream_options={"include_usage": True})
    for chunk in stream:
        break  # the agent read one chunk and walked away: the server still generated (and bills) the rest
"""
    )
    result = run(pytester, fake, "--consistency-token-budget=1")
    seen = calls(pytester)
    first = seen[0]
    assert first["tokens_estimated"] and first["total_tokens"] > 0
    assert "closed before it was read to the end" in first["detail"]
    assert [c["error"] for c in seen[1:]] == ["token_budget"] * (len(seen) - 1)
    assert result.ret == 1
