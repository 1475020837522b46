"""The stand-in key never leaves the replay (issue 41).

A keyless replay gives the clients the agent builds itself a stand-in key (``keys.REPLAY_KEY``) so that the SDK can
be built; nothing is sent with it, as the replay answers every request. These sessions try the ways it could get out
anyway, against the loopback servers with the real SDKs and real cassettes, in subprocess sessions (what is under
test is the environment the agent's clients and children read; the recordings before them, with the key exported,
run in the test's process):

- a session-scoped client built while a repetition replays, then used by a repetition that records live (``once``);
- the same client used by a test that is not a repetition at all;
- a child process the agent starts during a keyless replay, through every way a child gets an environment.

Each must end with no request carrying the stand-in key at the server, no cassette holding a response to one, and
the session failing with an infrastructure error that names the client (never a pass, never the agent's failure).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import MODEL as CLAUDE_MODEL
from fake_anthropic import FakeAnthropic
from fake_anthropic import Step as ClaudeStep
from fake_openai import FakeOpenAI, Step
from suites import inprocess_session, subprocess_session
from suites import load_report as report

from pytest_consistency.secrets.keys import REPLAY_KEY

#: The client every test shares, built the first time a test asks for it: in a repetition that replays, without a key.
#: One conftest per SDK: importing anthropic costs each session, and each of its xdist workers, about 1.5 s.
SESSION_CLIENT = """
import openai, pytest

@pytest.fixture(scope="session")
def client():
    return openai.OpenAI(max_retries=0)
"""
CLAUDE_SESSION_CLIENT = """
import anthropic, pytest

@pytest.fixture(scope="session")
def claude():
    return anthropic.Anthropic(max_retries=0)
"""

#: Two tasks in one module (one xdist worker with --dist loadfile): ``a`` recorded first, ``b`` never. The agent
#: catches the SDK's errors and answers anyway, as a robust agent does; min_pass=0 tolerates any failure.
TWO_TASKS = """
import openai, pytest

def ask(client, text):
    try:
        reply = client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": text}])
        return reply.choices[0].message.content
    except openai.APIError as exc:
        return f"error: {type(exc).__name__}"

@pytest.mark.repeat_consistency(n=2, min_pass=0)
def test_a(client, consistency):
    consistency.record(ask(client, "task a"))

@pytest.mark.repeat_consistency(n=2, min_pass=0)
def test_b(client, consistency):
    consistency.record(ask(client, "task b"))
"""

CLAUDE_TASKS = f"""
import anthropic, pytest

def ask(claude, text):
    try:
        reply = claude.messages.create(
            model="{CLAUDE_MODEL}", max_tokens=64, messages=[{{"role": "user", "content": text}}])
        return reply.content[0].text
    except anthropic.APIError as exc:
        return f"error: {{type(exc).__name__}}"

@pytest.mark.repeat_consistency(n=2, min_pass=0)
def test_a(claude, consistency):
    consistency.record(ask(claude, "task a"))

@pytest.mark.repeat_consistency(n=2, min_pass=0)
def test_b(claude, consistency):
    consistency.record(ask(claude, "task b"))
"""

#: A plain test after the replayed task, sharing its client (the module's order keeps it last).
UNMARKED = """

def test_plain(client):
    try:
        client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "plain"}])
    except openai.APIError:
        pass  # the test does not care; the plugin must
"""


def session(pytester: pytest.Pytester, mode: str, *args: str) -> pytest.RunResult:
    """The keyless run under test: a subprocess, whose environment is the CI job's and is all its children see."""
    return subprocess_session(pytester, mode, "-p", "no:randomly", *args)


def record(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """The recording before it, with the key exported: in the test's process (it is the user's environment), where
    the SDKs are imported already."""
    return inprocess_session(pytester, "once", "-p", "no:randomly", *args)


def stand_in_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in requests if REPLAY_KEY in repr(r["headers"])]


def cassettes_of(pytester: pytest.Pytester, task: str) -> list[Path]:
    return sorted((pytester.path / "cassettes").rglob(f"*{task}*/rep-*"))


def tasks_of(pytester: pytest.Pytester) -> dict[str, dict[str, Any]]:
    return {t["task_id"].split("::")[-1]: t for t in report(pytester)["tasks"]}


WORKERS = pytest.mark.parametrize("workers", [(), ("-n", "2", "--dist", "loadfile")], ids=["serial", "xdist"])


@WORKERS
def test_a_session_client_built_in_a_replay_never_records_with_the_stand_in_key(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    """``once``: task a replays (no key: its client gets the stand-in key), task b records live with the same
    session-scoped client. Before issue 41 the server saw the stand-in key, 401s were written as task b's cassettes
    and the session passed."""
    pytester.makeconftest(SESSION_CLIENT)
    pytester.makepyfile(test_agent=TWO_TASKS)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    fake.script(Step(text="a one"), Step(text="a two"))
    recorded = record(pytester, "test_agent.py::test_a")
    assert recorded.ret == 0, recorded.stdout.str()
    assert len(cassettes_of(pytester, "test_a")) == 2
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")

    result = session(pytester, "once", *workers)
    out = result.stdout.str()
    assert stand_in_requests(fake.requests) == [], out  # nothing with the stand-in key reached the server
    assert fake.requests == [], out
    assert cassettes_of(pytester, "test_b") == [], out  # no response to it recorded
    assert result.ret == 1, out
    tasks = tasks_of(pytester)
    assert tasks["test_a"]["verdict"] != "error", tasks["test_a"]
    b = tasks["test_b"]
    assert b["verdict"] == "error", b
    reasons = [rep["infrastructure"] or "" for rep in b["repetitions"]]
    for reason in reasons:
        assert "stand-in key" in reason, reasons
        assert f"{fake.base_url}/chat/completions" in reason and "OpenAI/Python" in reason, reason
    for text in (out, result.stderr.str()):
        assert REPLAY_KEY not in text


def test_an_anthropic_session_client_built_in_a_replay_never_records_with_the_stand_in_key(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same with Anthropic's SDK, whose key travels in ``x-api-key``."""
    pytester.makeconftest(CLAUDE_SESSION_CLIENT)
    pytester.makepyfile(test_agent=CLAUDE_TASKS)
    claude.script(ClaudeStep(text="a one"), ClaudeStep(text="a two"))
    assert record(pytester, "test_agent.py::test_a").ret == 0
    claude.reset()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = session(pytester, "once")
    out = result.stdout.str()
    assert stand_in_requests(claude.requests) == [] and claude.requests == [], out
    assert cassettes_of(pytester, "test_b") == [], out
    assert result.ret == 1, out
    b = tasks_of(pytester)["test_b"]
    assert b["verdict"] == "error", b
    reason = b["repetitions"][0]["infrastructure"] or ""
    assert "stand-in key" in reason and "Anthropic/Python" in reason and "/v1/messages" in reason, reason


@WORKERS
def test_a_session_client_built_in_a_replay_cannot_call_from_an_unmarked_test(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    """A keyless replay (``none``), then a plain test with the same client: outside every repetition nothing blocks
    the network, so the stand-in key itself is refused, and the test errs even though it swallowed the SDK's error."""
    pytester.makeconftest(SESSION_CLIENT)
    pytester.makepyfile(test_agent=TWO_TASKS + UNMARKED)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    fake.script(Step(text="a one"), Step(text="a two"))
    assert record(pytester, "test_agent.py::test_a").ret == 0
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")
    result = session(pytester, "none", "test_agent.py::test_a", "test_agent.py::test_plain", *workers)
    out = result.stdout.str()
    assert fake.requests == [], out
    assert result.ret == 1, out
    assert "test_plain" in out and "stand-in key" in out and f"POST {fake.base_url}/chat/completions" in out, out
    assert REPLAY_KEY not in out


#: The agent makes its call (replayed), then starts a child the way ``how`` says; the child writes the key it sees
#: and, holding one, calls the server itself (as a tool written in Python, or a framework's worker, would).
CHILD = """
import json, os, sys, urllib.request
key = os.environ.get("OPENAI_API_KEY")
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(key) + "\\n")
if key:
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=b"{}",
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(request, timeout=10).read()
    except Exception:
        pass
"""

CHILD_AGENT = """
import os, shlex, subprocess, sys
import openai, pytest

CHILD = {child!r}
LOG = {log!r}

def start_child(how):
    run = [sys.executable, "-c", CHILD, LOG]
    if how == "inherit":
        subprocess.run(run, check=True)
    elif how == "copy":
        subprocess.run(run, env={{**os.environ, "TOOL": "1"}}, check=True)
    elif how == "environ-copy":
        subprocess.run(run, env=os.environ.copy(), check=True)
    elif how == "by-name":
        names = ("PATH", "OPENAI_BASE_URL", "OPENAI_API_KEY")
        subprocess.run(run, env={{name: os.environ[name] for name in names}}, check=True)
    elif how == "renamed":
        key = os.environ["OPENAI_API_KEY"]
        env = {{"PATH": os.environ["PATH"], "OPENAI_BASE_URL": os.environ["OPENAI_BASE_URL"], "AGENT_KEY": key}}
        renamed = CHILD.replace('"OPENAI_API_KEY"', '"AGENT_KEY"')
        subprocess.run([sys.executable, "-c", renamed, LOG], env=env, check=True)
    elif how == "system":
        assert os.system(" ".join(map(shlex.quote, run))) == 0

@pytest.mark.parametrize("how", {ways!r})
@pytest.mark.repeat_consistency(n=2, min_pass=0)
def test_task(consistency, how):
    reply = openai.OpenAI().chat.completions.create(
        model="fake-model", messages=[{{"role": "user", "content": "plan"}}])
    start_child(how)
    consistency.record(reply.choices[0].message.content)
"""

#: Every way a child gets an environment that is a copy of the agent's, whole or in part, the key's variable among
#: it or renamed: the child gets it without the stand-in key.
INHERITING = ["inherit", "copy", "environ-copy", "by-name", "renamed", "system"]


@WORKERS
def test_a_child_process_of_a_keyless_replay_never_inherits_the_stand_in_key(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    log = pytester.path / "children.log"
    pytester.makepyfile(test_agent=CHILD_AGENT.format(child=CHILD, log=str(log), ways=INHERITING))
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    fake.script(*[Step(text=f"plan {i}") for i in range(2 * len(INHERITING))])
    recorded = record(pytester)
    assert recorded.ret == 0, recorded.stdout.str()
    log.unlink()
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")

    result = session(pytester, "none", *workers)
    out = result.stdout.str()
    assert stand_in_requests(fake.requests) == [] and fake.requests == [], out
    seen = log.read_text().splitlines()
    assert len(seen) == 2 * len(INHERITING), seen  # every child ran
    assert set(seen) == {"null"}, seen  # and none saw a key
    assert result.ret == 0, out  # the replay itself is untouched: the recorded outcomes


#: The agent hands the child its environment itself (which holds the stand-in key while it replays), or the key
#: inside another value, or on the command line: the stand-in key cannot be left out, so the child is not started.
HANDING = """
import os, subprocess, sys
import openai, pytest

@pytest.mark.parametrize("how", ["environ", "posix-spawn", "embedded", "argv", "shell"])
@pytest.mark.repeat_consistency(n=2, min_pass=0)
def test_task(consistency, how):
    client = openai.OpenAI()
    reply = client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "plan"}])
    run = [sys.executable, "-c", "import sys; open(sys.argv[1], 'a').write('started\\\\n')", "started.log"]
    try:
        if how == "environ":
            subprocess.run(run, env=os.environ, check=True)
        elif how == "posix-spawn":  # subprocess hands os.environ to os.posix_spawn itself
            subprocess.run(run, close_fds=False, check=True)
        elif how == "embedded":
            subprocess.run(run, env={"PATH": os.environ["PATH"], "AUTH": "Bearer " + client.api_key}, check=True)
        elif how == "argv":
            subprocess.run([*run, "--key", client.api_key], check=True)
        else:
            os.system(" ".join(run[:1] + ["-c", repr(run[2]), run[3], "--key", client.api_key]))
    except Exception as exc:
        print("child failed:", type(exc).__name__)
    consistency.record(reply.choices[0].message.content)
"""


@WORKERS
def test_a_child_handed_the_stand_in_key_is_never_started(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    """A child handed ``os.environ`` itself (also by subprocess, with ``close_fds=False``), or the key inside another
    value or on its command line, would get the stand-in key, which cannot be left out there: the child is not
    started, and the repetition is an infrastructure error naming the child."""
    pytester.makepyfile(test_agent=HANDING)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    fake.script(*[Step(text=f"plan {i}") for i in range(10)])
    assert record(pytester).ret == 0
    (pytester.path / "started.log").unlink()
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")

    result = session(pytester, "none", *workers)
    out = result.stdout.str()
    assert fake.requests == [], out
    assert not (pytester.path / "started.log").exists(), out
    assert result.ret == 1, out
    for task in report(pytester)["tasks"]:
        assert task["verdict"] == "error", task
        for rep in task["repetitions"]:
            reason = rep["infrastructure"] or ""
            assert "stand-in key" in reason and "child process" in reason, reason
    assert REPLAY_KEY not in out
