"""The first hour with the agent's own client: an agent that builds its own ``openai.OpenAI()`` (what frameworks do).

Recorded live from the loopback server with the key and the base URL exported, as a user does; then replayed as a CI
job would: another process, no key, no server. Each replay is a subprocess, because what is under test is the
environment the agent's own client reads there; the recordings before them run in the test's process (a user's run
with the key exported, which the test's environment is), where the SDKs are imported already.
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_anthropic import MODEL as CLAUDE_MODEL
from fake_anthropic import FakeAnthropic
from fake_anthropic import Step as ClaudeStep
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from suites import consistency_section, inprocess_session, subprocess_session
from suites import load_report as report

from pytest_consistency.secrets.keys import REPLAY_KEY, fingerprint

#: The agent builds its own client from the environment; repetitions 1 and 3 pass, 2 fails: a gap of 66.7 pp.
AGENT = """
import openai, pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_task(consistency):
    client = openai.OpenAI()
    reply = client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "what is at risk?"}])
    answer = reply.choices[0].message.content
    consistency.record(answer)
    assert "risk" in answer
"""

ASYNC_AGENT = """
import openai, pytest

@pytest.mark.asyncio
@pytest.mark.repeat_consistency(n=3, min_pass=0)
async def test_task(consistency):
    client = openai.AsyncOpenAI()
    reply = await client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "what is at risk?"}])
    answer = reply.choices[0].message.content
    consistency.record(answer)
    assert "risk" in answer
"""

CLAUDE_AGENT = f"""
import anthropic, pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_task(consistency):
    client = anthropic.Anthropic()
    reply = client.messages.create(
        model="{CLAUDE_MODEL}", max_tokens=64, messages=[{{"role": "user", "content": "what is at risk?"}}])
    answer = reply.content[0].text
    consistency.record(answer)
    assert "risk" in answer
"""

#: The agent reads its key from a variable of its own, which the replay job does not set (a settings object whose key
#: defaults to "" does the same): the SDK then ignores $OPENAI_API_KEY.
OWN_VARIABLE_AGENT = AGENT.replace(
    "openai.OpenAI()", 'openai.OpenAI(api_key=os.environ.get("AGENT_LLM_KEY", ""))'
).replace("import openai, pytest", "import os, openai, pytest")

#: After every test: the key variables as the next test finds them (a stand-in key must not outlive its repetition).
ENV_LOG = """
import os

def pytest_runtest_logfinish(nodeid):
    with open(os.path.join(os.environ["ENV_LOG_DIR"], "env.log"), "a") as log:
        seen = {name: os.environ.get(name) for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
        log.write(nodeid + " " + repr(seen) + "\\n")
"""

REPLIES = ["the risk is low", "nothing", "risk: the deadline"]
CLAUDE_REPLIES = ["risk one", "none", "risk two"]


# The gap gate decided on the estimate: 2 of 3 passed is a gap of 66.7 pp, over 10 outright; on the one-sided bounds
# three repetitions leave it undecided, and these tests are about a replay giving the recorded verdict, not about n.
GAP_GATE = ("--consistency-gap-max=10", "--consistency-gate-on=point")


session = subprocess_session
record = inprocess_session


def outcomes(pytester: pytest.Pytester) -> dict[str, Any]:
    """What a replay must reproduce: per task, its outcomes, answers, verdict, and the keys its calls carried."""
    data = report(pytester)
    return {
        t["task_id"]: (
            t["outcomes"],
            t["answers"],
            t["verdict"],
            [c["key_fingerprint"] for r in t["repetitions"] for c in r["calls"]],
        )
        for t in data["tasks"]
    }


def env_log(pytester: pytest.Pytester) -> list[str]:
    return (pytester.path / "env.log").read_text().splitlines()


@pytest.fixture
def logged(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makeconftest(ENV_LOG)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    monkeypatch.setenv("ENV_LOG_DIR", str(pytester.path))
    return pytester


def record_then_forget(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, source: str, *args: str
) -> pytest.RunResult:
    """Record ``source`` live with the key and the base URL exported, then leave the environment of a CI replay
    job: no key; the base URL kept (a replay job must keep it, see docs/cassettes.md); no server answers."""
    fake.script(*[Step(text=text) for text in REPLIES])
    pytester.makepyfile(test_agent=source)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    recorded = record(pytester, "once", *GAP_GATE, *args)
    assert len(fake.requests) == 3, recorded.stdout.str()
    monkeypatch.delenv("OPENAI_API_KEY")
    fake.reset()
    return recorded


#: Both clients serially; under xdist the sync one (what crosses workers is the same for both).
@pytest.mark.parametrize(
    ("workers", "source"),
    [
        pytest.param((), AGENT, id="serial-sync"),
        pytest.param(("-n", "2"), AGENT, id="xdist-sync"),
        pytest.param((), ASYNC_AGENT, id="serial-async"),
    ],
)
def test_a_keyless_replay_gives_the_recorded_outcomes(
    logged: pytest.Pytester,
    fake: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    source: str,
    workers: tuple[str, ...],
) -> None:
    recorded = record_then_forget(logged, fake, monkeypatch, source)
    assert recorded.ret == 1  # the recorded run fails its gap gate: 2 of 3 passed
    expected = outcomes(logged)
    assert next(iter(expected.values()))[0] == ["passed", "failed", "passed"]
    (logged.path / "env.log").unlink()

    replayed = session(logged, "none", *GAP_GATE, "--route-drift-max=0", *workers)
    out = replayed.stdout.str()
    assert replayed.ret == 1, out  # the same gap, the same failed gate: never a green run on figures never produced
    assert outcomes(logged) == expected, out
    assert "consistency gap 66.7 pp" in out and "Missing credentials" not in out
    assert report(logged)["summary"]["route"]["drift_pp"] == 0.0
    assert fake.requests == []
    # The stand-in key lives only during its repetition, in every worker.
    assert env_log(logged) and all("'OPENAI_API_KEY': None" in line for line in env_log(logged))


def test_a_keyless_replay_of_an_anthropic_client_gives_the_recorded_outcomes(
    logged: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude.script(*[ClaudeStep(text=text) for text in CLAUDE_REPLIES])
    logged.makepyfile(test_agent=CLAUDE_AGENT)
    assert record(logged, "once").ret == 0
    expected = outcomes(logged)
    assert next(iter(expected.values()))[0] == ["passed", "failed", "passed"]
    (logged.path / "env.log").unlink()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    for workers in ((), ("-n", "2")):
        replayed = session(logged, "none", *GAP_GATE, "--route-drift-max=0", *workers)
        assert replayed.ret == 1 and outcomes(logged) == expected, replayed.stdout.str()
        assert claude.requests == []
    assert all("'ANTHROPIC_API_KEY': None" in line for line in env_log(logged))


def test_a_keyless_replay_in_once_mode_matches_the_recorded_key(
    logged: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``once`` compares key fingerprints; the stand-in key is no key, so it never reads as another one."""
    record_then_forget(logged, fake, monkeypatch, AGENT)
    expected = outcomes(logged)
    replayed = session(logged, "once", "--route-drift-max=0")
    assert replayed.ret == 0, replayed.stdout.str()  # min_pass=0 tolerates rep2, as when recording (no gap gate)
    assert outcomes(logged) == expected and fake.requests == []
    stored = "\n".join(p.read_text() for p in (logged.path / "cassettes").rglob("*.yaml"))
    assert REPLAY_KEY not in stored and str(fingerprint(REPLAY_KEY)) not in stored


def test_a_client_that_reads_no_key_in_a_replay_is_an_error_that_says_why(
    logged: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent reads its key from a variable of its own, which the replay job does not set: the stand-in key in
    $OPENAI_API_KEY cannot help it. That is the setup's failure, never the agent's, whatever min_pass says."""
    monkeypatch.setenv("AGENT_LLM_KEY", GOOD_KEY)
    record_then_forget(logged, fake, monkeypatch, OWN_VARIABLE_AGENT)
    monkeypatch.delenv("AGENT_LLM_KEY")
    for workers in ((), ("-n", "2")):
        replayed = session(logged, "none", *GAP_GATE, "--route-drift-max=0", *workers)
        out = replayed.stdout.str()
        assert replayed.ret == 1, out
        task = report(logged)["tasks"][0]
        assert task["verdict"] == "error", out
        reasons = [r["infrastructure"] for r in task["repetitions"]]
        assert all(reason.startswith("missing credentials: ") for reason in reasons), reasons
        assert "replays its cassette, which needs no key: $OPENAI_API_KEY held a stand-in key" in reasons[0]
        section = "\n".join(consistency_section(replayed))
        assert (
            "route drift: not measurable in this session: no call was recorded: 3 of 3 repetitions failed before "
            "their first call (missing credentials)" in section
        ), section
        assert "tolerated" not in section
    assert fake.requests == []


def test_a_live_recording_without_a_key_fails_loudly_naming_the_variable(
    logged: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recording never gets a stand-in key: it would reach the provider as a wrong key, or record nothing useful."""
    logged.makepyfile(test_agent=AGENT)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.delenv("OPENAI_API_KEY")
    for mode in ("once", "all", "new_episodes"):
        result = session(logged, mode)
        out = result.stdout.str()
        assert result.ret == 1, out
        task = report(logged)["tasks"][0]
        assert task["verdict"] == "error", out
        reason = task["repetitions"][0]["infrastructure"]
        assert reason.startswith("missing credentials") and "export OPENAI_API_KEY" in reason, reason
        assert REPLAY_KEY not in out
    assert fake.requests == [] and not (logged.path / "cassettes").exists()
    assert all("'OPENAI_API_KEY': None" in line for line in env_log(logged))


def test_a_replay_on_another_base_url_shows_both_and_names_the_fix(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded through a gateway (OPENAI_BASE_URL), replayed by a job that does not set it: the SDK's default URL.
    The message shows the recorded URL beside the sent one (no key in a query string) and names the base URL."""
    source = AGENT.replace(
        "openai.OpenAI()", 'openai.OpenAI(default_query={"api_key": os.environ["OPENAI_API_KEY"]})'
    ).replace("import openai, pytest", "import os, openai, pytest")
    fake.script(*[Step(text=text) for text in REPLIES])
    pytester.makepyfile(test_agent=source)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    assert record(pytester, "once").ret == 0
    fake.reset()
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", GOOD_KEY + "-ci")  # a CI job's own key: never shown, never sent
    for workers in ((), ("-n", "2")):
        result = session(pytester, "none", "--route-drift-max=0", *workers)
        out = result.stdout.str()
        assert result.ret == 1, out
        recorded = f"{fake.base_url}/chat/completions?api_key="
        assert f"recorded {recorded}" in out and "sent https://api.openai.com/v1/chat/completions?api_key=" in out, out
        assert "the base URL differs from the recording's" in out, out
        assert f"export OPENAI_BASE_URL={fake.base_url}" in out and "base_url:" in out, out
        assert "To re-record this repetition" not in out
        for text in (out, result.stderr.str(), (pytester.path / "report.json").read_text()):
            assert GOOD_KEY not in text and GOOD_KEY[8:24] not in text
    assert fake.requests == []


PINNED_AND_OWN = """
import openai, pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency):
    ask = [{"role": "user", "content": "reply OK"}]
    first = pinned_client.chat.completions.create(model="fake-model", messages=ask)
    second = openai.OpenAI().chat.completions.create(model="fake-model", messages=ask)
    consistency.record([first.choices[0].message.content, second.choices[0].message.content])
"""


def route_line(result: pytest.RunResult) -> str:
    return next(line for line in consistency_section(result) if line.startswith("route: "))


def test_the_route_line_says_which_client_timeout_and_retries_are_about(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The route's timeout and retries are the pinned clients'; a client the agent built keeps the SDK's."""
    pytester.makepyfile(test_agent=PINNED_AND_OWN)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    result = record(pytester, "off", "--consistency-html=report.html")
    assert result.ret == 0, result.stdout.str()
    line = route_line(result)
    assert line.endswith("pinned clients: timeout 60s, retries 1; the agent's own clients: the SDK's unless set"), line
    html = (pytester.path / "report.html").read_text()
    assert "timeout / retries (pinned clients)" in html and "the agent&#x27;s own clients: the SDK&#x27;s" in html


def test_two_recorded_keys_are_explained_in_the_route_line(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tasks recorded with two keys (an old recording and a newer one): two fingerprints and no key drift, as each
    task kept its key. The line says whose keys they are."""
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.parametrize("task", ["alpha", "beta", "gamma"])
@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency, task):
    reply = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": task}])
    consistency.record(reply.choices[0].message.content)
"""
    )
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    assert record(pytester, "once", "-k", "alpha or beta").ret == 0
    monkeypatch.setenv("OPENAI_API_KEY", GOOD_KEY + "-second")
    assert record(pytester, "once", "-k", "gamma").ret == 0
    monkeypatch.delenv("OPENAI_API_KEY")
    result = session(pytester, "none", "--route-drift-max=0", "--consistency-html=report.html")
    assert result.ret == 0, result.stdout.str()
    counts = {str(fingerprint(GOOD_KEY)): "2 tasks", str(fingerprint(GOOD_KEY + "-second")): "1 task"}
    first, second = sorted(counts)
    expected = f"keys {first} ({counts[first]}), {second} ({counts[second]}) as recorded, one per task"
    assert expected in route_line(result), route_line(result)
    html = (pytester.path / "report.html").read_text()
    assert f"<dt>key fingerprints</dt><dd>{expected.removeprefix('keys ')}</dd>" in html
