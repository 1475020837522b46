"""A recording replays against another base URL (a local server on a random port, a dev gateway) once told to leave
the host out of matching, and each call's record keeps the URL it was recorded at."""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAI
from suites import load_report, run_recorded

#: Where the replay's route points now: nothing listens there, and a replay sends nothing.
ELSEWHERE = "http://localhost:9/v1"

AGENT = """
import openai, os, pytest

@pytest.mark.repeat_consistency(n=2)
def test_pinned(pinned_client, consistency):
    reply = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "list the widgets"}])
    consistency.record(reply.choices[0].message.content)

@pytest.mark.repeat_consistency(n=2)
def test_own_client(consistency):
    client = openai.OpenAI(base_url=os.environ["AGENT_BASE_URL"], max_retries=0)
    reply = client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "count the widgets"}])
    consistency.record(reply.choices[0].message.content)
"""


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makepyfile(test_agent=AGENT)
    monkeypatch.setenv("AGENT_BASE_URL", fake.base_url)
    result = run_recorded(pytester, fake.base_url, "once", "--no-consistency-preflight")
    assert result.ret == 0, result.stdout.str()
    fake.reset()
    monkeypatch.setenv("AGENT_BASE_URL", ELSEWHERE)
    return pytester


def test_another_base_url_is_a_mismatch_that_names_the_option(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    result = run_recorded(recorded, ELSEWHERE, "none")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*the base URL differs from the recording's*", "*or replay at any host with --consistency-replay-any-host*"]
    )


@pytest.mark.parametrize("how", ["cli", "yaml"])
def test_any_host_replays_and_the_records_keep_the_recorded_url(
    recorded: pytest.Pytester, fake: FakeOpenAI, how: str
) -> None:
    args = ["--consistency-replay-any-host"]
    if how == "yaml":
        recorded.path.joinpath("consistency.yaml").write_text("cassettes:\n  replay_any_host: true\n")
        args = ["--consistency-config=consistency.yaml"]
    result = run_recorded(recorded, ELSEWHERE, "none", "--route-drift-max=0", *args)
    assert result.ret == 0, result.stdout.str()
    assert fake.requests == []
    calls = [call for task in load_report(recorded)["tasks"] for rep in task["repetitions"] for call in rep["calls"]]
    assert len(calls) == 4
    assert [(call["replayed"], call["url"], call["pinned"]) for call in calls] == [
        (True, f"{fake.base_url}/chat/completions", pinned) for pinned in (True, True, False, False)
    ]
