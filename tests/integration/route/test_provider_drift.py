"""The gate never passes by accident: drift is judged per provider (a served model change on one route while the
other is steady, the agent's own Anthropic client off the pinned route or with another key).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_anthropic import GOOD_KEY, MODEL, FakeAnthropic, Step
from fake_openai import FakeOpenAI
from fake_openai import Step as OpenAIStep
from suites import BOTH_ROUTES_TASK as BOTH_TASK
from suites import OWN_AND_PINNED_TASK
from suites import anthropic_suite as suite
from suites import load_report as report
from suites import run_mode as run

#: Other Anthropic credentials an agent might use in its own clients (all accepted by the loopback server).
OTHER_KEY = "sk-ant-api03-otherkey-9876543210abcdefXYZ"


@pytest.fixture
def other_claude() -> Iterator[FakeAnthropic]:
    """A second Messages API on another port: another base URL for the same provider."""
    server = FakeAnthropic().start()
    server.keys = {GOOD_KEY, OTHER_KEY}
    yield server
    server.stop()


def test_anthropic_served_model_change_is_drift_while_openai_is_steady(
    pytester: pytest.Pytester, claude: FakeAnthropic, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both served names are dated snapshots of the requested model: only the change between repetitions tells.
    fake.script(OpenAIStep(text="x"), OpenAIStep(text="x"))
    claude.script(Step(text="y", served_model=MODEL + "-20250101"), Step(text="y", served_model=MODEL + "-20250601"))
    pytester.makepyfile(test_agent=suite(BOTH_TASK))
    args = (f"--consistency-base-url={fake.base_url}", "--route-drift-max=0")
    result = run(pytester, "once", *args)
    assert result.ret == 1, result.stdout.str()
    drift = report(pytester)["tasks"][0]["drift"]
    assert drift["kinds"] == ["model_served"], drift
    assert any("anthropic" in d for d in drift["details"]), drift
    # and the replay (what CI runs) fails the same way
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("OPENAI_API_KEY")
    fake.reset()
    claude.reset()
    replayed = run(pytester, "none", *args)
    assert replayed.ret == 1, replayed.stdout.str()
    assert report(pytester)["tasks"][0]["drift"]["kinds"] == ["model_served"]
    assert claude.requests == [] and fake.requests == []


OWN_ANTHROPIC_TASK = """
import os

import anthropic
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency):
    a = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    own = anthropic.Anthropic(base_url=os.environ["AGENT_ANTHROPIC_URL"], api_key=os.environ["AGENT_ANTHROPIC_KEY"])
    b = own.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    consistency.record([a.choices[0].message.content, b.content[0].text])
"""


@pytest.mark.parametrize("what", ["base_url", "key"])
def test_the_agents_own_anthropic_client_off_the_pinned_route_is_drift(
    pytester: pytest.Pytester,
    claude: FakeAnthropic,
    other_claude: FakeAnthropic,
    fake: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    what: str,
) -> None:
    """Consistently off route (every repetition the same): not a change across repetitions, but not the pin."""
    claude.keys = {GOOD_KEY, OTHER_KEY}
    server = other_claude if what == "base_url" else claude
    monkeypatch.setenv("AGENT_ANTHROPIC_URL", server.base_url)
    monkeypatch.setenv("AGENT_ANTHROPIC_KEY", GOOD_KEY if what == "base_url" else OTHER_KEY)
    pytester.makepyfile(test_agent=suite(OWN_ANTHROPIC_TASK))
    args = (f"--consistency-base-url={fake.base_url}", "--route-drift-max=0")
    result = run(pytester, "once", *args)
    assert len(server.requests) == 2
    assert report(pytester)["tasks"][0]["drift"]["kinds"] == [what], report(pytester)["tasks"][0]["drift"]
    assert result.ret == 1, result.stdout.str()
    # the replay CI runs must not pass the gate the recording failed
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("AGENT_ANTHROPIC_KEY", "replay-dummy-key")
    replayed = run(pytester, "none", *args)
    assert len(server.requests) == 2
    assert report(pytester)["tasks"][0]["drift"]["kinds"] == [what], report(pytester)["tasks"][0]["drift"]
    assert replayed.ret == 1, replayed.stdout.str()


def test_an_own_anthropic_client_with_another_key_is_key_drift_recorded_and_replayed(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude.keys = {GOOD_KEY, OTHER_KEY}
    monkeypatch.setenv("AGENT_ANTHROPIC_KEY", OTHER_KEY)
    pytester.makepyfile(test_agent=suite(OWN_AND_PINNED_TASK))
    result = run(pytester, "once", "--route-drift-max=0")
    assert result.ret == 1, result.stdout.str()
    drift = report(pytester)["tasks"][0]["drift"]
    assert drift["kinds"] == ["key"], drift
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("AGENT_ANTHROPIC_KEY", "replay-dummy-key")
    claude.reset()
    replayed = run(pytester, "none", "--route-drift-max=0")
    assert claude.requests == []
    assert report(pytester)["tasks"][0]["drift"]["kinds"] == ["key"]
    assert replayed.ret == 1, replayed.stdout.str()
