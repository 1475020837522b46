"""Cassette matching a user can tune: a prompt with a timestamp replays once told what to ignore, and a mismatch
shows where the bodies first differ."""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAI, Step
from suites import load_report, run_recorded

AGENT = """
import os, pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency):
    prompt = f"at {os.environ['NOW']} find items under 20"
    reply = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": prompt}],
        metadata={"request_id": os.environ["REQUEST_ID"]})
    consistency.record(reply.choices[0].message.content)
"""


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("NOW", "2026-12-01T20:00:00Z")
    monkeypatch.setenv("REQUEST_ID", "r-1")
    fake.script(*[Step(text="apple, pear")] * 2)
    pytester.makepyfile(test_agent=AGENT)
    assert run_recorded(pytester, fake.base_url, "once").ret == 0
    fake.reset()
    monkeypatch.setenv("NOW", "2026-12-02T09:30:00Z")
    monkeypatch.setenv("REQUEST_ID", "r-2")
    return pytester


def test_a_changed_timestamp_is_a_mismatch_that_shows_where(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    result = run_recorded(recorded, fake.base_url, "none")
    assert result.ret == 1 and fake.requests == []
    result.stdout.fnmatch_lines(
        [
            "*body first differs at messages[[]0[]].content: "
            "recorded 'at 2026-12-01T20:00:00Z find items*sent 'at 2026-12-02*"
        ]
    )


@pytest.mark.parametrize("how", ["cli", "yaml", "hook"])
def test_rules_or_a_hook_make_it_replay(recorded: pytest.Pytester, fake: FakeOpenAI, how: str) -> None:
    args: list[str] = []
    if how == "cli":
        args = [r"--consistency-match-ignore=re:\d{4}-\d\d-\d\dT[0-9:]+Z", "--consistency-match-ignore=metadata"]
    elif how == "yaml":
        recorded.makefile(
            ".yaml",
            consistency="cassettes:\n  match_ignore:\n    - 're:\\d{4}-\\d\\d-\\d\\dT[0-9:]+Z'\n    - metadata\n",
        )
        args = ["--consistency-config=consistency.yaml"]
    else:
        recorded.makeconftest(
            """
import re

def pytest_consistency_normalize_request(body, url):
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k != "metadata"}
        body["messages"] = [{**m, "content": re.sub(r"at \\S+ ", "", m["content"])} for m in body["messages"]]
        return body
"""
        )
    result = run_recorded(recorded, fake.base_url, "none", *args)
    assert result.ret == 0, result.stdout.str()
    assert fake.requests == []
    assert load_report(recorded)["tasks"][0]["answers"] == ["apple, pear"] * 2


def test_a_rule_that_ignores_too_little_still_mismatches(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    result = run_recorded(recorded, fake.base_url, "none", r"--consistency-match-ignore=re:\d{4}-\d\d-\d\dT[0-9:]+Z")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*body first differs at metadata.request_id: recorded 'r-1', sent 'r-2'*"])


@pytest.mark.parametrize("bad", ["re:(", "messages..content"])
def test_a_bad_rule_is_a_usage_error_naming_the_option(pytester: pytest.Pytester, bad: str) -> None:
    pytester.makepyfile(test_agent=AGENT)
    result = pytester.runpytest(f"--consistency-match-ignore={bad}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--consistency-match-ignore" in result.stderr.str()
