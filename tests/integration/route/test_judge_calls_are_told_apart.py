"""A judge's calls are the judge's: ``judge_client`` on a route of its own (YAML ``judge:``), ``consistency.judging()``
and ``consistency.role("user")`` around any client, in threads and tasks started inside; recorded with their role,
replayed from the repetition's cassette, and no part of the agent's route drift."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml
from fake_openai import FakeOpenAI, Step
from suites import consistency_section
from suites import load_report as report
from suites import run_mode as run

JUDGE_KEY = "sk-judge-key-0123456789abcdef"

SUITE = """
import asyncio
import threading

import openai
import pytest

def ask(client, text, model=None):  # None: the route's model
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content

async def ask_async(route, text):
    client = openai.AsyncOpenAI(base_url=route.base_url, api_key=route.api_key, max_retries=0)
    reply = await client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": text}])
    await client.close()
    return reply.choices[0].message.content

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, pinned_route, judge_client, consistency):
    answer = ask(pinned_client, "agent", "fake-model")
    own = openai.OpenAI(base_url=pinned_route.base_url, api_key=pinned_route.api_key, max_retries=0)
    with consistency.role("user"):
        own.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "user turn"}])
    verdict = ask(judge_client, "judge: " + answer)
    with consistency.judging():
        thread = threading.Thread(target=lambda: own.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "judge in a thread"}]))
        thread.start()
        thread.join()
        asyncio.run(ask_async(pinned_route, "judge in a task"))
    own.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "agent again"}])
    consistency.record(verdict)
"""
#: A repetition's calls: the agent's, the simulated user's, the judge client's, the judge's in a thread and in a task,
#: the agent's again once the judging block is closed.
ROLES = ["agent", "user", "judge", "judge", "judge", "agent"]


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """The judge's own OpenAI-compatible endpoint, with its own key."""
    server = FakeOpenAI().start()
    server.keys = {JUDGE_KEY}
    monkeypatch.setenv("JUDGE_KEY", JUDGE_KEY)
    yield server
    server.stop()


def options(agent: FakeOpenAI, judge: FakeOpenAI) -> tuple[str, ...]:
    return (
        f"--consistency-base-url={agent.base_url}",
        "--consistency-temperature=0.7",
        f"--consistency-judge=base_url={judge.base_url}",
        "--consistency-judge=model=judge-model",
        "--consistency-judge=api_key_env=JUDGE_KEY",
        "--consistency-judge=temperature=0",
        "--route-drift-max=0",
    )


def test_judge_calls_carry_their_role_travel_their_route_and_are_no_drift(
    pytester: pytest.Pytester, fake: FakeOpenAI, judge_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the judge's first call is refused (429) and retried: an error and a retry that would be the agent's drift
    judge_server.script(Step(status=429), Step(text="PASS"), Step(text="PASS"))
    pytester.makepyfile(test_agent=SUITE)
    result = run(pytester, "once", *options(fake, judge_server))
    assert result.ret == 0, result.stdout.str()
    task = report(pytester)["tasks"][0]
    for repetition in task["repetitions"]:
        retried = ["judge"] if repetition["repeat"] == 1 else []  # the judge's 429, then its retry
        assert [c["role"] for c in repetition["calls"]] == ROLES[:2] + retried + ROLES[2:]
    assert task["drift"]["kinds"] == [], task["drift"]
    # the judge's route: its base URL, key, model and temperature; the agent's its own
    assert [r["body"]["model"] for r in judge_server.requests] == ["judge-model"] * 3
    assert {r["body"]["temperature"] for r in judge_server.requests} == {0}
    assert [r["body"]["temperature"] for r in fake.requests if r["body"]["messages"][0]["content"] == "agent"] == [
        0.7,
        0.7,
    ]
    assert any("route (openai judge): " + judge_server.base_url in line for line in consistency_section(result))
    # the repetition's cassette marks whose each exchange was, the agent's left unmarked
    (cassette,) = pytester.path.glob("cassettes/**/rep-1.yaml")
    exchanges = yaml.safe_load(cassette.read_text())["interactions"]
    marked = [(i["request"]["headers"].get("x-consistency-role") or [None])[0] for i in exchanges]
    assert marked == [None if role == "agent" else role for role in [*ROLES[:2], "judge", *ROLES[2:]]]
    # the judge's key is a secret like the agent's: in no cassette, report or line of output
    written = [cassette.read_text() for cassette in pytester.path.glob("cassettes/**/*.yaml")]
    assert JUDGE_KEY not in "".join([*written, (pytester.path / "report.json").read_text(), result.stdout.str()])
    # replayed from the repetitions' cassettes, judge calls included: nothing goes out, the roles are the same
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("JUDGE_KEY")
    fake.reset()
    judge_server.reset()
    replayed = run(pytester, "none", *options(fake, judge_server))
    assert replayed.ret == 0, replayed.stdout.str()
    assert fake.requests == [] and judge_server.requests == []
    replayed_task = report(pytester)["tasks"][0]
    assert [[c["role"] for c in r["calls"]] for r in replayed_task["repetitions"]] == [
        [c["role"] for c in r["calls"]] for r in task["repetitions"]
    ]
    assert replayed_task["drift"]["kinds"] == []


def test_a_judge_route_without_its_key_stops_the_session_before_any_call(
    pytester: pytest.Pytester, fake: FakeOpenAI, judge_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JUDGE_KEY")
    pytester.makepyfile(test_agent=SUITE)
    result = run(pytester, "once", *options(fake, judge_server))
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines(["*the pinned route of the judge cannot be used*", "*$JUDGE_KEY is not set*"])
    assert fake.requests == [] and judge_server.requests == []


def test_a_role_that_is_not_one_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
import pytest

def test_task(consistency):
    with pytest.raises(ValueError, match="agent, judge, user"):
        with consistency.role("critic"):
            pass
"""
    )
    assert run(pytester, "none").ret == 0
