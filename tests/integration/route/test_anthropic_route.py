"""The Anthropic route end to end: the real anthropic SDK against a loopback Messages API, recorded and replayed.

Every test runs a real inner pytest session (pytester) whose tests use ``pinned_anthropic_client``; the server is
``tests/support/fake_anthropic.py`` (JSON, SSE with ``message_start``/``content_block_delta``/``message_delta``, 429 and
529 with ``retry-after``). Concurrency across xdist workers is checked by the server itself, in another process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator

import pytest
from fake_anthropic import GOOD_KEY, MODEL, FakeAnthropic, Step
from fake_openai import GOOD_KEY as OPENAI_KEY
from fake_openai import FakeOpenAI
from fake_openai import Step as OpenAIStep
from spacing import spacing_shortfalls
from suites import BOTH_ROUTES_TASK as BOTH_TASK
from suites import anthropic_suite as suite
from suites import load_report as report
from suites import report_calls as calls
from suites import run_mode as run

JSON_TASK = """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_anthropic_client, consistency):
    reply = pinned_anthropic_client.messages.create(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "name the sender"}])
    answer = reply.content[0].text
    consistency.record(answer)
    assert answer == "alice"
"""

STREAM_TASK = """
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_anthropic_client, consistency):
    with pinned_anthropic_client.messages.stream(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "name the sender please"}]
    ) as stream:
        text = "".join(stream.text_stream)
    consistency.record(text)
"""

OWN_CLIENT_TASK = """
import os

import anthropic
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(consistency):
    client = anthropic.Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], api_key=os.environ["ANTHROPIC_API_KEY"])
    reply = client.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    consistency.record(reply.content[0].text)
"""


def test_records_replays_offline_and_reports_model_tokens_and_fingerprint(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude.script(
        Step(text="alice", cache_read_input_tokens=7, cache_creation_input_tokens=3),
        Step(text="alice"),
        Step(text="bob"),
    )
    pytester.makepyfile(test_agent=suite(JSON_TASK))
    recorded = run(pytester, "once")
    assert recorded.ret == 1  # repetition 3 answered "bob"
    assert len(claude.requests) == 3
    live = calls(pytester)
    assert [c["provider"] for c in live] == ["anthropic"] * 3
    first = live[0]
    assert first["model_requested"] == first["model_served"] == MODEL
    assert first["base_url"] == claude.base_url
    assert (first["prompt_tokens"], first["completion_tokens"]) == (3, 1)  # "name the sender" / "alice"
    assert (first["cache_read_tokens"], first["cache_creation_tokens"]) == (7, 3)
    assert first["total_tokens"] == 3 + 1 + 7 + 3
    assert first["key_fingerprint"] and GOOD_KEY not in json.dumps(report(pytester))
    assert "anthropic-ratelimit-requests-limit" in first["rate_limit"]
    assert not any(GOOD_KEY in p.read_text() for p in (pytester.path / "cassettes").rglob("*.yaml"))

    # Replay: no key, no server traffic, the same answers, models and tokens.
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    replayed = run(pytester, "none")
    assert replayed.ret == 1
    assert claude.requests == []
    again = calls(pytester)
    assert all(c["replayed"] for c in again)
    keep = ("model_served", "prompt_tokens", "completion_tokens", "cache_read_tokens", "total_tokens")
    keep += ("key_fingerprint",)
    assert [{k: c[k] for k in keep} for c in again] == [{k: c[k] for k in keep} for c in live]
    task = report(pytester)["tasks"][0]
    assert task["answers"] == ["alice", "alice", "bob"]
    assert task["drift"]["kinds"] == []


def test_a_stream_keeps_model_and_input_tokens_of_message_start(
    pytester: pytest.Pytester, claude: FakeAnthropic
) -> None:
    claude.script(Step(text="alice liddell"), Step(text="alice liddell"))
    pytester.makepyfile(test_agent=suite(STREAM_TASK))
    assert run(pytester, "off").ret == 0
    for call in calls(pytester):
        assert call["stream"] and call["provider"] == "anthropic"
        assert call["model_served"] == MODEL
        assert call["prompt_tokens"] == 4  # from message_start, not reset by message_delta's usage
        assert call["completion_tokens"] == 2  # from message_delta
        assert not call["tokens_estimated"]


def test_served_model_drift_and_overloaded_retries_are_route_drift(
    pytester: pytest.Pytester, claude: FakeAnthropic
) -> None:
    claude.script(
        Step(text="alice"),
        Step(status=529, retry_after="0"),
        Step(text="alice"),
        Step(text="alice", served_model="claude-other-model"),
    )
    pytester.makepyfile(test_agent=suite(JSON_TASK))
    result = run(pytester, "off", "--consistency-max-retries=1", "--consistency-retries-max=0", "--route-drift-max=0")
    assert result.ret == 1
    task = report(pytester)["tasks"][0]
    assert task["drift"]["kinds"] == ["model_served", "retries", "errors"]
    assert task["drift"]["errors"] == {"5xx": 1}
    overloaded = [c for c in calls(pytester) if c["status"] == 529]
    assert overloaded and overloaded[0]["rate_limit"].get("retry-after") == "0"
    result.stdout.fnmatch_lines(["*route (anthropic): *", "*route drift 100.0 pp*"])


def test_a_session_with_both_routes_reports_each_and_checks_each_against_its_own(
    pytester: pytest.Pytester, claude: FakeAnthropic, fake: FakeOpenAI
) -> None:
    fake.script(OpenAIStep(text="x"), OpenAIStep(text="x"))
    pytester.makepyfile(test_agent=suite(BOTH_TASK))
    result = run(pytester, "off", f"--consistency-base-url={fake.base_url}")
    assert result.ret == 0, result.stdout.str()
    data = report(pytester)
    route = data["summary"]["route"]
    assert route["calls_by_provider"] == {"anthropic": 2, "openai": 2}
    assert [r["provider"] for r in route["other_routes"]] == ["anthropic"]
    assert route["other_routes"][0]["base_url"] == claude.base_url
    assert data["tasks"][0]["drift"]["kinds"] == []  # two base URLs, each its route's: no drift
    result.stdout.fnmatch_lines([f"route: {fake.base_url}*", f"route (anthropic): {claude.base_url}*"])


def test_the_agents_own_anthropic_client_is_observed(pytester: pytest.Pytester, claude: FakeAnthropic) -> None:
    pytester.makepyfile(test_agent=suite(OWN_CLIENT_TASK))
    assert run(pytester, "off").ret == 0
    seen = calls(pytester)
    assert len(seen) == 2 and not any(c["pinned"] for c in seen)
    assert {c["provider"] for c in seen} == {"anthropic"} and all(c["model_served"] == MODEL for c in seen)


@pytest.mark.parametrize(
    ("env", "args", "expected"),
    [
        (
            {"ANTHROPIC_BASE_URL": "{url}/v1"},
            [],
            "*ends in /v1, but the anthropic SDK appends /v1/messages itself*use {url}*",
        ),
        ({"ANTHROPIC_API_KEY": "your-api-key-here"}, [], "*$ANTHROPIC_API_KEY holds a placeholder*"),
        (
            {"ANTHROPIC_BASE_URL": "{url}?utm_source=docs"},
            [],
            "*has a query string or fragment*",
        ),
        (
            {},
            ["--consistency-same-gateway", "--consistency-base-url=http://127.0.0.1:9/v1"],
            "*--consistency-same-gateway: the OpenAI route goes to http://127.0.0.1:9*",
        ),
    ],
)
def test_the_doctor_refuses_mixed_up_anthropic_routes_before_any_call(
    pytester: pytest.Pytester,
    claude: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    args: list[str],
    expected: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(url=claude.base_url))
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    pytester.makepyfile(test_agent=suite(JSON_TASK))
    result = run(pytester, "off", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected.format(url=claude.base_url)])
    assert claude.requests == []


def test_an_anthropic_key_in_the_openai_variable_is_refused(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ant-api03-" + "a1b2" * 10)
    pytester.makepyfile(
        test_agent="def test_a(pinned_client):\n    pinned_client.models.list()\n",
    )
    result = pytester.runpytest(f"--consistency-base-url={fake.base_url}", "--consistency-record=off")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*$OPENAI_API_KEY holds an Anthropic key (sk-ant-...)*"])
    assert fake.requests == []


# --- concurrency and rate across xdist workers ---------------------------------------------------------------


@pytest.fixture
def slow_server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A Messages API in its own process answering after 50 ms, so that two workers' requests would overlap; an
    indirect parameter adds server options (``--body-delay``, ``--await-overlap``)."""
    script = str(sys.modules[FakeAnthropic.__module__].__file__)  # tests/support/fake_anthropic.py
    process = subprocess.Popen(
        [sys.executable, script, "--port", "0", "--delay", "0.05", *getattr(request, "param", ())],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().split()
        assert line[:1] == ["READY"], line
        url = line[1]
        for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("ANTHROPIC_API_KEY", GOOD_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def stats(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/_stats", timeout=10) as response:
        return json.loads(response.read())


CONCURRENT_TASK = """
import pytest

@pytest.mark.parametrize("task", range(4))
@pytest.mark.repeat_consistency(n=3)
def test_task(task, pinned_anthropic_client, consistency):
    reply = pinned_anthropic_client.messages.create(
        model=MODEL, max_tokens=16, messages=[{"role": "user", "content": f"task {task}"}])
    consistency.record(reply.content[0].text)
"""


@pytest.mark.parametrize(
    ("limit", "most", "slow_server"),
    [
        # Each request waits (up to 30 s) until two are in flight: an uncapped session overlaps for certain, which
        # is what makes the capped case mean something.
        (None, 2, ["--await-overlap", "30"]),
        # The body's last byte comes 50 ms after the headers: a slot given back at the headers lets the other
        # worker's request in while this one is still being answered.
        (1, 1, ["--body-delay", "0.05"]),
    ],
    ids=["uncapped", "capped"],
    indirect=["slow_server"],
)
def test_concurrency_is_capped_across_xdist_workers(
    pytester: pytest.Pytester, slow_server: str, limit: int | None, most: int
) -> None:
    """``--consistency-concurrency=1`` covers a request until its last body byte, across workers.

    Load-independent: the server stops counting a request just before its last byte leaves, and a client that
    keeps its slot until it has read that byte cannot start the next request earlier, however the machine
    schedules the processes.
    """
    pytester.makepyfile(test_agent=suite(CONCURRENT_TASK))
    args = ["-n", "2"] + ([f"--consistency-concurrency={limit}"] if limit else [])
    result = run(pytester, "off", *args)
    assert result.ret == 0, result.stdout.str()
    seen = stats(slow_server)
    assert seen["requests"] == 12
    assert seen["max_in_flight"] == most
    waits = [c["wait_ms"] for c in calls(pytester)]
    route = report(pytester)["summary"]["route"]
    assert route["wait_ms"] == pytest.approx(sum(waits), abs=0.01)
    assert ("waited for slots" in result.stdout.str()) == bool(limit)
    if limit:
        assert any(w > 0 for w in waits)
        # The wait and the latency are apart: both lie inside the repetition, one after the other.
        for task in report(pytester)["tasks"]:
            for rep in task["repetitions"]:
                (call,) = rep["calls"]
                # (each figure is rounded to a microsecond)
                assert call["wait_ms"] + call["latency_ms"] <= rep["duration"] * 1000 + 0.002, (call, rep)


PACED_TASK = """
import os
import time

import pytest

@pytest.mark.parametrize("task", range(2))
@pytest.mark.repeat_consistency(n=2)
def test_task(task, pinned_anthropic_client, consistency):
    with open(os.environ["ASKED_AT"], "a") as asked:  # before the call asks for its turn
        asked.write(f"{time.time()!r}\\n")
    reply = pinned_anthropic_client.messages.create(
        model=MODEL, max_tokens=16, messages=[{"role": "user", "content": f"task {task}"}])
    consistency.record(reply.content[0].text)
"""


def test_rpm_spaces_request_starts_and_replays_are_never_throttled(
    pytester: pytest.Pytester, slow_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--consistency-rpm=300``: starts 0.2 s apart across both workers, judged from lower bounds only (when each
    call asked, when the server saw it: tests/support/spacing.py), which a loaded machine only makes later."""
    asked_at = pytester.path / "asked-at"
    monkeypatch.setenv("ASKED_AT", str(asked_at))
    pytester.makepyfile(test_agent=suite(PACED_TASK))
    assert run(pytester, "once", "-n", "2", "--consistency-rpm=300").ret == 0
    befores = [float(line) for line in asked_at.read_text().splitlines()]
    starts = stats(slow_server)["starts"]
    assert len(starts) == len(befores) == 4
    assert not spacing_shortfalls(befores, starts, 60 / 300)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    # at 1 per minute a throttled replay would wait (wait_ms) a minute per call
    assert run(pytester, "none", "-n", "2", "--consistency-rpm=1").ret == 0
    assert all(c["replayed"] and c["wait_ms"] == 0 for c in calls(pytester))


CUSTOM_PROVIDER = """
from pytest_consistency.route.providers import builtin


def pytest_consistency_provider(name, config):
    if name != "anthropic":
        return None
    base = builtin("anthropic")

    class Tagged(type(base)):
        def client(self, route, transport, is_async):
            return super().client(route, transport, is_async).with_options(default_headers={"x-team": "evals"})

    return Tagged()
"""


def test_a_conftest_provider_replaces_the_builtin_one(pytester: pytest.Pytester, claude: FakeAnthropic) -> None:
    pytester.makeconftest(CUSTOM_PROVIDER)
    claude.script(Step(text="alice"), Step(text="alice"), Step(text="alice"))
    pytester.makepyfile(test_agent=suite(JSON_TASK))
    assert run(pytester, "off").ret == 0
    assert [r["headers"].get("x-team") for r in claude.requests] == ["evals"] * 3
    assert all(c["provider"] == "anthropic" for c in calls(pytester))


def test_the_anthropic_route_comes_from_the_yaml_routes_section(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    monkeypatch.setenv("TEAM_GATEWAY_TOKEN", GOOD_KEY)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    pytester.makefile(
        ".yaml",
        consistency=(
            f"routes:\n  anthropic:\n    base_url: {claude.base_url}\n    model: {MODEL}\n"
            "    api_key_env: TEAM_GATEWAY_TOKEN\n"
        ),
    )
    claude.script(Step(text="alice"), Step(text="alice"), Step(text="alice"))
    pytester.makepyfile(test_agent=suite(JSON_TASK))
    assert run(pytester, "off", "--consistency-config=consistency.yaml").ret == 0
    (route,) = report(pytester)["summary"]["route"]["other_routes"]
    assert (route["base_url"], route["model"], route["key_env"]) == (claude.base_url, MODEL, "TEAM_GATEWAY_TOKEN")
    assert [r["auth"] for r in claude.requests] == ["authorization"] * 3
