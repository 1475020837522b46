"""Adversarial tests of the provider seam, the Anthropic route, the route doctor, the throttle and the cached
vcrpy patches: each test tries to break one promise with real parts only (pytester inner sessions, the real
openai and anthropic SDKs, the loopback servers ``fake_openai`` and ``fake_anthropic``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import GOOD_KEY, MODEL, FakeAnthropic, Step
from fake_openai import FakeOpenAI
from fake_openai import Step as OpenAIStep
from gateways import free_port
from suites import BOTH_ROUTES_TASK as BOTH_TASK
from suites import anthropic_suite as suite
from suites import load_report as report
from suites import report_calls as calls
from suites import run_mode as run
from suites import without_timings

from pytest_consistency.secrets.keys import fingerprint

#: Other Anthropic credentials an agent might use in its own clients (all accepted by the loopback server).
OTHER_KEY = "sk-ant-api03-otherkey-9876543210abcdefXYZ"
HEADER_KEY = "sk-ant-api03-headerkey-1122334455aabbccDD"
GATEWAY_TOKEN = "gw-bearer-token-qwertyuiopasdf"  # no key shape at all: only literal redaction can catch it


@pytest.fixture
def other_claude() -> Iterator[FakeAnthropic]:
    """A second Messages API on another port: another base URL for the same provider."""
    server = FakeAnthropic().start()
    server.keys = {GOOD_KEY, OTHER_KEY}
    yield server
    server.stop()


def run_sub(pytester: pytest.Pytester, mode: str, *args: str, timeout: float = 90) -> pytest.RunResult:
    """The same in a fresh interpreter (respx, which imports httpx at startup, left out)."""
    return pytester.runpytest_subprocess(
        f"--consistency-record={mode}",
        "--consistency-report=report.json",
        "-p",
        "no:randomly",
        "-p",
        "no:respx",
        "-p",
        "no:cacheprovider",
        *args,
        timeout=timeout,
    )


def task(pytester: pytest.Pytester, name: str) -> dict:
    (found,) = [t for t in report(pytester)["tasks"] if t["task_id"].endswith(name)]
    return found


# --- 1. no secret on disk or in output ---------------------------------------------------------------------

SECRET_TASK = """
import os

import anthropic
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_anthropic_client, consistency):
    url = os.environ["ANTHROPIC_BASE_URL"]
    ask = dict(model=MODEL, max_tokens=16)
    # the agent's own clients: a key as the SDK's api_key, a key in default_headers, a bearer token
    by_key = anthropic.Anthropic(base_url=url, api_key=os.environ["AGENT_OTHER_KEY"], max_retries=0)
    exported = os.environ.pop("ANTHROPIC_API_KEY", None)  # only the header's key: no api_key from the environment
    try:
        by_header = anthropic.Anthropic(
            base_url=url, api_key=None, default_headers={"x-api-key": os.environ["AGENT_HEADER_KEY"]}, max_retries=0)
    finally:
        if exported is not None:
            os.environ["ANTHROPIC_API_KEY"] = exported
    by_bearer = anthropic.Anthropic(base_url=url, auth_token=os.environ["AGENT_GATEWAY_TOKEN"], max_retries=0)
    texts = []
    for client in (pinned_anthropic_client, by_key, by_header, by_bearer):
        prompt = "my key is " + os.environ["AGENT_OTHER_KEY"] + ", remember it"
        reply = client.messages.create(**ask, messages=[{"role": "user", "content": prompt}])
        texts.append(reply.content[0].text)
    with by_key.messages.stream(**ask, messages=[{"role": "user", "content": "stream"}]) as stream:
        texts.append("".join(stream.text_stream))
    consistency.record(texts)
    assert consistency.repeat == 1, "repetition 2 fails on purpose, so its report shows a failure"
"""


def everything(pytester: pytest.Pytester, result: pytest.RunResult, extra: list[Path]) -> str:
    texts = [result.stdout.str(), result.stderr.str()]
    for path in [*pytester.path.rglob("*"), *extra]:
        if path.is_file() and path.suffix in (".yaml", ".json", ".xml", ".md", ".html", ".txt", ".log"):
            texts.append(path.read_text(errors="replace"))
    return "\n".join(texts)


@pytest.mark.parametrize("mode", ["once", "all"])
def test_no_anthropic_credential_reaches_cassettes_reports_or_terminal(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str
) -> None:
    claude.keys = {GOOD_KEY, OTHER_KEY, HEADER_KEY, GATEWAY_TOKEN}
    monkeypatch.setenv("AGENT_OTHER_KEY", OTHER_KEY)
    monkeypatch.setenv("AGENT_HEADER_KEY", HEADER_KEY)
    monkeypatch.setenv("AGENT_GATEWAY_TOKEN", GATEWAY_TOKEN)
    step_summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    pytester.makepyfile(test_agent=suite(SECRET_TASK))
    outputs = (
        "--consistency-md=summary.md",
        "--consistency-html=report.html",
        "--junitxml=junit.xml",
        "--consistency-output=junit=consistency-junit.xml",
        "-rA",
    )
    recorded = run(pytester, mode, *outputs)
    assert recorded.ret == 1, recorded.stdout.str()
    assert len(claude.requests) == 2 * 5
    assert {r["auth"] for r in claude.requests} == {"x-api-key", "authorization"}
    for output in ("report.json", "summary.md", "report.html", "junit.xml", "consistency-junit.xml"):
        assert (pytester.path / output).is_file(), output
    cassettes = list((pytester.path / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 2
    text = everything(pytester, recorded, [step_summary])
    for secret in (GOOD_KEY, OTHER_KEY, HEADER_KEY, GATEWAY_TOKEN, GOOD_KEY[7:], OTHER_KEY[7:]):
        assert secret not in text, secret
    # the fingerprints are there instead, one per credential
    fingerprints = {c["key_fingerprint"] for c in calls(pytester)}
    assert fingerprints == {fingerprint(k) for k in (GOOD_KEY, OTHER_KEY, HEADER_KEY, GATEWAY_TOKEN)}
    assert fingerprint(GOOD_KEY) in recorded.stdout.str()

    # replayed with no key at all: still nothing, and the same fingerprints
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    replayed = run(pytester, "none", *outputs)
    assert replayed.ret == 1, replayed.stdout.str()
    assert claude.requests == []
    text = everything(pytester, replayed, [step_summary])
    for secret in (GOOD_KEY, OTHER_KEY, HEADER_KEY, GATEWAY_TOKEN):
        assert secret not in text, secret
    assert {c["key_fingerprint"] for c in calls(pytester)} == fingerprints


# --- 2. replay equals recording -----------------------------------------------------------------------------

MIXED_TASKS = """
import asyncio

import pytest

ASK = dict(model=MODEL, max_tokens=32)

@pytest.mark.repeat_consistency(n=2)
def test_json(pinned_anthropic_client, consistency):
    reply = pinned_anthropic_client.messages.create(**ASK, messages=[{"role": "user", "content": "json please"}])
    consistency.record(reply.content[0].text)

@pytest.mark.repeat_consistency(n=2)
def test_stream(pinned_anthropic_client, consistency):
    with pinned_anthropic_client.messages.stream(
        **ASK, messages=[{"role": "user", "content": "stream it please"}]
    ) as stream:
        text = "".join(stream.text_stream)
    consistency.record(text)

@pytest.mark.repeat_consistency(n=2)
def test_async(async_pinned_anthropic_client, consistency):
    async def go():
        reply = await async_pinned_anthropic_client.messages.create(
            **ASK, messages=[{"role": "user", "content": "async please"}])
        return reply.content[0].text
    consistency.record(asyncio.run(go()))

@pytest.mark.repeat_consistency(n=2)
def test_async_stream(async_pinned_anthropic_client, consistency):
    async def go():
        stream = await async_pinned_anthropic_client.messages.create(
            **ASK, stream=True, messages=[{"role": "user", "content": "async stream"}])
        parts = []
        async for event in stream:
            if event.type == "content_block_delta":
                parts.append(event.delta.text)
        return "".join(parts)
    consistency.record(asyncio.run(go()))

@pytest.mark.repeat_consistency(n=1)
def test_retry(pinned_anthropic_client, consistency):
    reply = pinned_anthropic_client.messages.create(**ASK, messages=[{"role": "user", "content": "retry please"}])
    consistency.record(reply.content[0].text)
"""

MIXED_SCRIPT = (
    Step(text="alice", cache_read_input_tokens=5, cache_creation_input_tokens=2),
    Step(text="alice", served_model=MODEL + "-20250101"),
    Step(text="bob carol dave"),
    Step(text="bob carol"),
    Step(text="erin", output_tokens=9),
    Step(text="frank"),
    Step(text="gina hal"),
    Step(text="gina hal ian"),
    Step(status=529, retry_after="0"),
    Step(text="judy"),
)
CALL_FIELDS = (
    "provider",
    "method",
    "url",
    "base_url",
    "status",
    "error",
    "stream",
    "pinned",
    "model_requested",
    "model_served",
    "prompt_tokens",
    "completion_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "total_tokens",
    "tokens_estimated",
    "retry_index",
    "key_fingerprint",
)


def facts(pytester: pytest.Pytester) -> dict[str, Any]:
    data = report(pytester)
    return {
        t["task_id"]: {
            "answers": t["answers"],
            "drift": t["drift"]["kinds"],
            "retries": t["drift"]["retries"],
            "tokens": t["drift"]["tokens"],
            "calls": [[{k: c[k] for k in CALL_FIELDS} for c in r["calls"]] for r in t["repetitions"]],
        }
        for t in data["tasks"]
    }


@pytest.fixture
def recorded_mixed(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> tuple[pytest.RunResult, dict[str, Any], dict[str, Any]]:
    claude.script(*MIXED_SCRIPT)
    pytester.makepyfile(test_agent=suite(MIXED_TASKS))
    result = run(pytester, "once", "--consistency-max-retries=2")
    assert result.ret == 0, result.stdout.str()
    assert len(claude.requests) == len(MIXED_SCRIPT)
    live = facts(pytester)
    raw = report(pytester)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    return result, live, raw


def test_anthropic_replay_equals_the_recording(
    pytester: pytest.Pytester, claude: FakeAnthropic, recorded_mixed: tuple[pytest.RunResult, dict, dict]
) -> None:
    _, live, _ = recorded_mixed
    # the recording itself read the wire right
    assert live[next(t for t in live if t.endswith("test_retry"))]["calls"][0][0]["status"] == 529
    assert live[next(t for t in live if t.endswith("test_retry"))]["calls"][0][1]["retry_index"] == 1
    json_task = live[next(t for t in live if t.endswith("test_json"))]
    assert json_task["calls"][0][0]["cache_read_tokens"] == 5
    assert json_task["calls"][1][0]["model_served"] == MODEL + "-20250101"
    stream_task = live[next(t for t in live if t.endswith("test_async_stream"))]
    assert [c[0]["completion_tokens"] for c in stream_task["calls"]] == [2, 3]
    replayed = run(pytester, "none", "--consistency-max-retries=2")
    assert replayed.ret == 0, replayed.stdout.str()
    assert claude.requests == []
    assert all(c["replayed"] for c in calls(pytester))
    assert facts(pytester) == live


def test_anthropic_replay_under_xdist_equals_the_serial_replay(
    pytester: pytest.Pytester, claude: FakeAnthropic, recorded_mixed: tuple[pytest.RunResult, dict, dict]
) -> None:
    assert run(pytester, "none", "--consistency-max-retries=2").ret == 0
    serial = without_timings(report(pytester))
    parallel_run = run(pytester, "none", "--consistency-max-retries=2", "-n", "2")
    assert parallel_run.ret == 0, parallel_run.stdout.str()
    assert claude.requests == []
    parallel = without_timings(report(pytester))
    for data in (serial, parallel):
        data.pop("created", None)
        data.get("summary", {}).pop("duration", None)
    assert parallel["tasks"] == serial["tasks"]
    assert parallel["summary"] == serial["summary"]


def test_a_replayed_retry_reports_the_rate_limit_headers_the_server_sent(
    pytester: pytest.Pytester, claude: FakeAnthropic, recorded_mixed: tuple[pytest.RunResult, dict, dict]
) -> None:
    """The 529 said ``retry-after: 0``; the replay must not report a header the server never sent."""
    _, _, raw = recorded_mixed
    live = [c["rate_limit"] for t in raw["tasks"] for r in t["repetitions"] for c in r["calls"]]
    assert run(pytester, "none", "--consistency-max-retries=2").ret == 0
    again = [c["rate_limit"] for c in calls(pytester)]
    assert again == live


# --- 3. the gate never passes by accident: per-provider drift ----------------------------------------------


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


OWN_AND_PINNED_TASK = """
import os

import anthropic
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_anthropic_client, consistency):
    ask = dict(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    a = pinned_anthropic_client.messages.create(**ask)
    own = anthropic.Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], api_key=os.environ["AGENT_ANTHROPIC_KEY"])
    b = own.messages.create(**ask)
    consistency.record([a.content[0].text, b.content[0].text])
"""


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


# --- 4. the doctor: refuses before any call, and only what is wrong ----------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"ANTHROPIC_BASE_URL": "{url}/v1"}, "*ends in /v1, but the anthropic SDK appends*"),
        ({"ANTHROPIC_BASE_URL": "{url}/v1/"}, "*ends in /v1, but the anthropic SDK appends*"),
        ({"ANTHROPIC_BASE_URL": "{url}/v1/messages"}, "*ends in /v1/messages*"),
        ({"ANTHROPIC_BASE_URL": "{url}/?utm_source=newsletter&utm_medium=email"}, "*query string or fragment*"),
        ({"ANTHROPIC_BASE_URL": "{url}#docs"}, "*query string or fragment*"),
        ({"ANTHROPIC_BASE_URL": "{userinfo_url}"}, "*carries credentials (user:password@)*"),
        ({"ANTHROPIC_API_KEY": "your-key-here"}, "*$ANTHROPIC_API_KEY holds a placeholder*"),
        ({"ANTHROPIC_API_KEY": "sk-ant-xxxx"}, "*$ANTHROPIC_API_KEY holds a placeholder*"),
        ({"ANTHROPIC_API_KEY": "sk-ant-..."}, "*$ANTHROPIC_API_KEY holds a placeholder*"),
        ({"ANTHROPIC_AUTH_TOKEN": "your-key-here"}, "*$ANTHROPIC_AUTH_TOKEN holds a placeholder*"),
        ({"ANTHROPIC_AUTH_TOKEN": "sk-ant-xxxx"}, "*$ANTHROPIC_AUTH_TOKEN holds a placeholder*"),
        ({"OPENAI_API_KEY": "sk-ant-api03-" + "x1" * 20}, "*$OPENAI_API_KEY holds an Anthropic key*"),
        (
            {"ANTHROPIC_BASE_URL": "https://api.anthropic.com", "ANTHROPIC_API_KEY": "sk-proj-" + "a1" * 20},
            "*$ANTHROPIC_API_KEY holds an OpenAI-style key*",
        ),
    ],
    ids=lambda v: json.dumps(v) if isinstance(v, dict) else None,
)
def test_the_doctor_refuses_before_any_call(
    pytester: pytest.Pytester,
    claude: FakeAnthropic,
    fake: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    expected: str,
) -> None:
    userinfo_url = claude.base_url.replace("http://", "http://admin:hunter2pass@")
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(url=claude.base_url, userinfo_url=userinfo_url))
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    claude.keys = {GOOD_KEY, "sk-ant-xxxx", "sk-ant-...", "your-key-here"}  # a broken doctor would get answers
    pytester.makepyfile(test_agent=suite(BOTH_TASK))
    result = run(pytester, "off")
    assert claude.requests == [] and fake.requests == []
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines([expected])
    assert "hunter2pass" not in result.stdout.str() + result.stderr.str()


GATEWAY_SOURCE = """
import http.client, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

openai_port, anthropic_port = int(sys.argv[1]), int(sys.argv[2])

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self._forward("GET")

    def do_POST(self):
        self._forward("POST")

    def _forward(self, method):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        port = anthropic_port if self.path.startswith("/v1/messages") else openai_port
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.request(method, self.path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
            self.send_response_only(response.status)
            for name, value in response.getheaders():
                if name.lower() not in ("transfer-encoding", "content-length", "connection"):
                    self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        finally:
            connection.close()

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(f"READY http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
"""


@pytest.fixture
def one_gateway(claude: FakeAnthropic, fake: FakeOpenAI) -> Iterator[str]:
    """A LiteLLM-style gateway on one port, in its own process (as a real one is): ``/v1/messages`` to the
    Anthropic server, the rest to the OpenAI one."""
    openai_port = fake.base_url.split(":")[-1].split("/")[0]
    anthropic_port = claude.base_url.split(":")[-1]
    process = subprocess.Popen(
        [sys.executable, "-c", GATEWAY_SOURCE, openai_port, anthropic_port], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().split()
        assert line[:1] == ["READY"], line
        yield line[1]
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_doctor_accepts_one_gateway_key_for_both_routes(
    pytester: pytest.Pytester,
    claude: FakeAnthropic,
    fake: FakeOpenAI,
    one_gateway: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.keys = {"sk-1234"}
    claude.keys = {"sk-1234"}
    monkeypatch.setenv("OPENAI_API_KEY", "sk-1234")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-1234")
    monkeypatch.setenv("OPENAI_BASE_URL", one_gateway + "/v1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", one_gateway)
    pytester.makepyfile(test_agent=suite(BOTH_TASK))
    result = run(pytester, "once", "--consistency-same-gateway", "--route-drift-max=0")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert len(fake.requests) == 2 and len(claude.requests) == 2
    assert report(pytester)["tasks"][0]["drift"]["kinds"] == []
    assert "sk-1234" not in "\n".join(p.read_text() for p in (pytester.path / "cassettes").rglob("*.yaml"))
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    fake.reset()
    claude.reset()
    replayed = run(pytester, "none", "--consistency-same-gateway", "--route-drift-max=0")
    assert replayed.ret == 0, replayed.stdout.str() + replayed.stderr.str()
    assert fake.requests == [] and claude.requests == []


def test_the_doctor_accepts_an_auth_token_without_an_api_key(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", GATEWAY_TOKEN)
    claude.keys = {GATEWAY_TOKEN}
    pytester.makepyfile(
        test_agent=suite(
            OWN_AND_PINNED_TASK.replace("n=2", "n=1").replace(
                'api_key=os.environ["AGENT_ANTHROPIC_KEY"]', 'auth_token=os.environ["ANTHROPIC_AUTH_TOKEN"]'
            )
        )
    )
    result = run(pytester, "once", "--route-drift-max=0")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert [r["auth"] for r in claude.requests] == ["authorization", "authorization"]
    seen = calls(pytester)
    assert {c["key_fingerprint"] for c in seen} == {fingerprint(GATEWAY_TOKEN)}
    assert report(pytester)["tasks"][0]["drift"]["kinds"] == []
    assert GATEWAY_TOKEN not in "\n".join(p.read_text() for p in (pytester.path / "cassettes").rglob("*.yaml"))


def test_the_doctor_accepts_a_trailing_slash(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.base_url + "/")
    monkeypatch.setenv("AGENT_ANTHROPIC_KEY", GOOD_KEY)
    pytester.makepyfile(test_agent=suite(OWN_AND_PINNED_TASK))
    result = run(pytester, "once", "--route-drift-max=0")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert [r["path"] for r in claude.requests] == ["/v1/messages"] * 4
    assert report(pytester)["tasks"][0]["drift"]["kinds"] == []
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    replayed = run(pytester, "none", "--route-drift-max=0")
    assert replayed.ret == 0, replayed.stdout.str()
    assert claude.requests == []


# --- 5. the throttle --------------------------------------------------------------------------------------

FAILING_THEN_OK = """
import os

import anthropic
import pytest

ASK = dict(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])

@pytest.mark.repeat_consistency(n=1)
def test_task(pinned_anthropic_client, consistency):
    failure = os.environ["AGENT_FAILURE"]
    if failure == "refused":
        dead = anthropic.Anthropic(
            base_url=os.environ["AGENT_DEAD_URL"], api_key=os.environ["ANTHROPIC_API_KEY"], max_retries=0)
        with pytest.raises(anthropic.APIConnectionError):
            dead.messages.create(**ASK)
    elif failure == "529":
        with pytest.raises(anthropic.APIStatusError):
            pinned_anthropic_client.with_options(max_retries=0).messages.create(**ASK)
    elif failure == "timeout":
        with pytest.raises(anthropic.APITimeoutError):
            pinned_anthropic_client.with_options(max_retries=0, timeout=0.3).messages.create(**ASK)
    for _ in range(2):
        reply = pinned_anthropic_client.messages.create(**ASK)
    consistency.record(reply.content[0].text)
"""


@pytest.mark.parametrize("failure", ["refused", "529", "timeout"])
def test_a_failed_request_releases_its_slot(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    monkeypatch.setenv("AGENT_FAILURE", failure)
    monkeypatch.setenv("AGENT_DEAD_URL", f"http://127.0.0.1:{free_port()}")
    if failure == "529":
        claude.script(Step(status=529), Step(text="ok"), Step(text="ok"))
    if failure == "timeout":
        claude.script(Step(delay=1.5), Step(text="ok"), Step(text="ok"))
    pytester.makepyfile(test_agent=suite(FAILING_THEN_OK))
    began = time.monotonic()
    result = run_sub(pytester, "off", "--consistency-concurrency=1", timeout=60)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert time.monotonic() - began < 30
    task_calls = calls(pytester)
    assert [c["status"] for c in task_calls][-2:] == [200, 200]
    assert (
        task_calls[0]["error" if failure in ("refused", "timeout") else "status"]
        == {
            "refused": "connection",
            "timeout": "timeout",
            "529": 529,
        }[failure]
    )


GATHER_TASK = """
import asyncio

import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(async_pinned_anthropic_client, consistency):
    async def one(i):
        reply = await async_pinned_anthropic_client.messages.create(
            model=MODEL, max_tokens=8, messages=[{"role": "user", "content": f"question {i}"}])
        return reply.content[0].text

    async def all_of_them():
        return await asyncio.gather(*(one(i) for i in range(4)))

    consistency.record(asyncio.run(all_of_them()))
"""


@pytest.mark.parametrize(("limit", "expected"), [(None, "more"), (1, 1)])
def test_concurrency_one_holds_asyncio_gather_to_one_in_flight(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, limit: int | None, expected: Any
) -> None:
    monkeypatch.setattr(claude, "delay", 0.2)
    pytester.makepyfile(test_agent=suite(GATHER_TASK))
    args = [f"--consistency-concurrency={limit}"] if limit else []
    result = run_sub(pytester, "off", *args, timeout=60)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert len(claude.requests) == 8
    if expected == "more":
        assert claude.max_in_flight > 1  # without a limit the calls overlap: the limit means something
    else:
        assert claude.max_in_flight == expected
        assert sum(c["wait_ms"] > 100 for c in calls(pytester)) >= 3


NESTED_TASK = """
import pytest

ASK = dict(model=MODEL, max_tokens=8)

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_anthropic_client, consistency):
    texts = []
    with pinned_anthropic_client.messages.stream(**ASK, messages=[{"role": "user", "content": "outer"}]) as stream:
        for text in stream.text_stream:
            texts.append(text)
            if len(texts) == 1:  # a tool call while the stream is still open
                inner = pinned_anthropic_client.messages.create(**ASK, messages=[{"role": "user", "content": "in"}])
                texts.append(inner.content[0].text)
    consistency.record(texts)
"""


def test_concurrency_one_never_deadlocks_a_call_made_while_a_stream_is_open(
    pytester: pytest.Pytester, claude: FakeAnthropic
) -> None:
    """A stream's slot is held until its response headers arrive (Throttle.acquire, Attempt.tap), not until its
    body ends: a call made while the agent still reads a stream must get a slot, or concurrency=1 would hang."""
    claude.script(*[Step(text="one two three"), Step(text="inner")] * 2)
    pytester.makepyfile(test_agent=suite(NESTED_TASK))
    result = run_sub(pytester, "off", "--consistency-concurrency=1", timeout=60)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert report(pytester)["tasks"][0]["answers"] == [["one ", "inner", "two ", "three"]] * 2
    assert len(claude.requests) == 4


REPLAY_TASK = """
import os

import anthropic
import pytest

ASK = dict(model=MODEL, max_tokens=8)

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_anthropic_client, consistency):
    a = pinned_anthropic_client.messages.create(**ASK, messages=[{"role": "user", "content": "pinned"}])
    own = anthropic.Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], api_key=os.environ["AGENT_ANTHROPIC_KEY"])
    b = own.messages.create(**ASK, messages=[{"role": "user", "content": "own"}])
    consistency.record([a.content[0].text, b.content[0].text])
"""


@pytest.mark.parametrize("mode", ["none", "once", "new_episodes"])
def test_a_replay_is_never_slowed_by_the_rate_limit(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("AGENT_ANTHROPIC_KEY", GOOD_KEY)
    claude.script(Step(status=529, retry_after="0"), *[Step(text="ok")] * 6)
    pytester.makepyfile(test_agent=suite(REPLAY_TASK))
    assert run(pytester, "once").ret == 0
    assert len(claude.requests) == 7
    claude.reset()
    if mode == "none":
        monkeypatch.delenv("ANTHROPIC_API_KEY")
        monkeypatch.setenv("AGENT_ANTHROPIC_KEY", "replay-dummy-key")
    began = time.monotonic()
    # at one request a minute the 6 further attempts would take 6 minutes
    result = run_sub(pytester, mode, "--consistency-rpm=1", "--consistency-concurrency=1", timeout=40)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert time.monotonic() - began < 30
    assert claude.requests == []
    seen = calls(pytester)
    assert len(seen) == 7 and all(c["replayed"] and c["wait_ms"] == 0 for c in seen)


# --- 6. the performance changes keep behaviour --------------------------------------------------------------

LATE_HTTPX_TASK = """
import os
import sys

import pytest

IMPORTED_AT_COLLECTION = sorted(m for m in ("httpx", "httpx2", "anthropic", "openai") if m in sys.modules)

@pytest.mark.repeat_consistency(n=2)
def test_task(consistency):
    assert IMPORTED_AT_COLLECTION == []
    if consistency.repeat == 1 and os.environ["AGENT_MODE"] == "off":  # recording: vcrpy's patches import it
        assert "httpx" not in sys.modules
    import httpx  # first imported here, inside repetition 1

    with httpx.Client() as client:
        reply = client.post(
            os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
            headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"},
            json={"model": MODEL, "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]},
        )
    other = httpx.post(
        os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
        headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"},
        json={"model": MODEL, "max_tokens": 8, "messages": [{"role": "user", "content": "again"}]},
    )
    consistency.record([reply.json()["content"][0]["text"], other.json()["content"][0]["text"]])
"""

LATE_ANTHROPIC_TASK = """
import os
import sys

import pytest

IMPORTED_AT_COLLECTION = sorted(m for m in ("httpx", "httpx2", "anthropic", "openai") if m in sys.modules)

@pytest.mark.repeat_consistency(n=2)
def test_task(consistency):
    assert IMPORTED_AT_COLLECTION == []
    if consistency.repeat == 1 and os.environ["AGENT_MODE"] == "off":  # recording: vcrpy's patches import it
        assert "httpx2" not in sys.modules
    import anthropic  # and with it httpx2, first imported here

    client = anthropic.Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], api_key=os.environ["ANTHROPIC_API_KEY"])
    reply = client.messages.create(model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    consistency.record(reply.content[0].text)
"""


@pytest.mark.parametrize("body", [LATE_HTTPX_TASK, LATE_ANTHROPIC_TASK], ids=["httpx", "anthropic-httpx2"])
@pytest.mark.parametrize("mode", ["off", "once"])
def test_an_http_library_first_imported_inside_a_repetition_is_observed(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, body: str, mode: str
) -> None:
    monkeypatch.setenv("AGENT_MODE", mode)
    pytester.makepyfile(test_agent=suite(body))
    result = run_sub(pytester, mode)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    per_call = 2 if body is LATE_HTTPX_TASK else 1
    assert len(claude.requests) == 2 * per_call
    seen = calls(pytester)
    assert len(seen) == 2 * per_call, seen
    assert all(not c["pinned"] and c["provider"] == "anthropic" and c["model_served"] == MODEL for c in seen)
    assert all(c["key_fingerprint"] == fingerprint(GOOD_KEY) for c in seen)


NO_CASSETTE_TASKS = """
import os

import pytest
import requests
import urllib3

ASK = dict(max_tokens=8, messages=[{"role": "user", "content": "hi"}])

@pytest.mark.repeat_consistency(n=1)
def test_pinned(pinned_anthropic_client, consistency):
    pinned_anthropic_client.messages.create(model=MODEL, **ASK)

@pytest.mark.repeat_consistency(n=1)
def test_pinned_async(async_pinned_anthropic_client, consistency):
    import asyncio
    asyncio.run(async_pinned_anthropic_client.messages.create(model=MODEL, **ASK))

@pytest.mark.repeat_consistency(n=1)
def test_own_httpx(consistency):
    import httpx
    with httpx.Client() as client:
        client.post(
            os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
            headers={"x-api-key": "dummy-replay-key", "anthropic-version": "2023-06-01"},
            json={"model": MODEL, **ASK},
        )

@pytest.mark.repeat_consistency(n=1)
def test_requests(consistency):
    try:
        requests.get(os.environ["ANTHROPIC_BASE_URL"] + "/v1/models", timeout=5)
    except Exception as exc:
        consistency.record(repr(exc))
        raise

@pytest.mark.repeat_consistency(n=1)
def test_urllib3(consistency):
    try:
        urllib3.PoolManager(retries=False).request("GET", os.environ["ANTHROPIC_BASE_URL"] + "/v1/models")
    except Exception as exc:
        consistency.record(repr(exc))
        raise
"""


def test_replay_without_a_cassette_file_fails_the_repetition_and_sends_nothing(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    pytester.makepyfile(test_agent=suite(NO_CASSETTE_TASKS))
    result = run(pytester, "none")
    assert claude.requests == []
    assert result.ret == 1
    result.assert_outcomes(failed=5)
    out = result.stdout.str()
    for name in ("test_pinned", "test_pinned_async", "test_own_httpx"):
        assert f"no cassette at cassettes/test_agent/{name}/rep-1.yaml" in out, out
    assert "(sent by a client the agent built itself) was not recorded: no cassette at" in out
    (own,) = [c for c in calls(pytester) if not c["pinned"]]
    assert own["error"] == "replay_mismatch" and own["provider"] == "anthropic"
    pinned = [c for c in calls(pytester) if c["pinned"]]
    # the SDK retries a connection error once (route retries 1): two refused attempts per task, none sent
    assert len(pinned) == 4 and all(c["error"] == "replay_mismatch" for c in pinned)
    assert all(task(pytester, name)["drift"]["errors"].get("replay_mismatch") for name in ("test_pinned",))
    for name in ("test_requests", "test_urllib3"):
        (answer,) = task(pytester, name)["answers"]
        assert "blocked" in answer, answer
    assert not (pytester.path / "cassettes").exists()


TWO_SESSION_TASK = """
import os

import pytest
import requests

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_anthropic_client, consistency):
    reply = pinned_anthropic_client.messages.create(
        model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "same prompt every time"}])
    # the same request through a client the plugin does not observe (requests): only vcrpy answers it
    raw = requests.post(
        os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
        headers={"x-api-key": os.environ.get("ANTHROPIC_API_KEY") or "dummy", "anthropic-version": "2023-06-01"},
        json={"model": MODEL, "max_tokens": 8, "messages": [{"role": "user", "content": "same prompt every time"}]},
        timeout=10,
    )
    consistency.record([reply.content[0].text, raw.json()["content"][0]["text"]])
"""


def test_consecutive_sessions_in_one_process_replay_like_fresh_ones(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude.script(*(Step(text=t) for t in ("a1", "a2", "b1", "b2", "c1", "c2")))
    pytester.makepyfile(test_agent=suite(TWO_SESSION_TASK))
    assert run(pytester, "once").ret == 0
    assert len(claude.requests) == 6
    assert task(pytester, "test_task")["answers"] == [["a1", "a2"], ["b1", "b2"], ["c1", "c2"]]
    folder = pytester.path / "cassettes" / "test_agent" / "test_task"

    # 1. replay, then replay again after deleting repetition 2's cassette: never rep 1's answer for rep 2
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    first = run(pytester, "none")
    assert first.ret == 0, first.stdout.str()
    assert task(pytester, "test_task")["answers"] == [["a1", "a2"], ["b1", "b2"], ["c1", "c2"]]
    (folder / "rep-2.yaml").unlink()
    second = run(pytester, "none")
    assert claude.requests == []
    reps = task(pytester, "test_task")["repetitions"]
    assert [r["outcome"] for r in reps] == ["passed", "failed", "passed"], second.stdout.str()
    assert [r["answer"] for r in reps] == [["a1", "a2"], None, ["c1", "c2"]]
    assert "no cassette at cassettes/test_agent/test_task/rep-2.yaml" in second.stdout.str()

    # 2. record only the missing repetition, in the same process
    monkeypatch.setenv("ANTHROPIC_API_KEY", GOOD_KEY)
    claude.script(Step(text="z1"), Step(text="z2"))
    third = run(pytester, "once")
    assert third.ret == 0, third.stdout.str()
    assert len(claude.requests) == 2
    assert task(pytester, "test_task")["answers"] == [["a1", "a2"], ["z1", "z2"], ["c1", "c2"]]

    # 3. the model changed: nothing may be answered from the old cassettes
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    pytester.makepyfile(test_agent=suite(TWO_SESSION_TASK).replace(f"MODEL = {MODEL!r}", "MODEL = 'claude-new'"))
    fourth = run(pytester, "none")
    assert claude.requests == []
    reps = task(pytester, "test_task")["repetitions"]
    assert [r["outcome"] for r in reps] == ["failed"] * 3, fourth.stdout.str()
    assert all(r["answer"] is None for r in reps)


def test_a_repetition_is_never_answered_from_another_repetitions_cassette(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repetition 2 asks for more than it recorded: the extra request must not be served by rep 1's cassette."""
    body = TWO_SESSION_TASK.replace("n=3", "n=2")
    claude.script(*(Step(text=t) for t in ("a1", "a2", "b1", "b2")))
    pytester.makepyfile(test_agent=suite(body))
    assert run(pytester, "once").ret == 0
    # rep 2's cassette now records other requests (replays match on the digest of the body as sent): only rep 1's
    # cassette, which the cached patches served just before, holds a match
    folder = pytester.path / "cassettes" / "test_agent" / "test_task"
    text = (folder / "rep-2.yaml").read_text()
    changed = re.sub(r"(x-consistency-body-digest:\n\s+- sha256:)[0-9a-f]+", r"\g<1>" + "0" * 32, text)
    assert changed.count("0" * 32) == 2
    (folder / "rep-2.yaml").write_text(changed)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    claude.reset()
    result = run(pytester, "none")
    assert claude.requests == []
    reps = task(pytester, "test_task")["repetitions"]
    assert [r["outcome"] for r in reps] == ["passed", "failed"], result.stdout.str()
    assert reps[1]["answer"] is None


def test_a_replay_shows_each_routes_recorded_key_on_its_own_route(
    pytester: pytest.Pytester, claude: FakeAnthropic, recorded_mixed: tuple[pytest.RunResult, dict, dict]
) -> None:
    """Replayed without keys, the OpenAI route (never called) must not claim the Anthropic key as its own."""
    replayed = run(pytester, "none", "--consistency-max-retries=2")
    assert replayed.ret == 0, replayed.stdout.str()
    anthropic_key = fingerprint(GOOD_KEY)
    assert anthropic_key is not None
    route = report(pytester)["summary"]["route"]
    for line in replayed.stdout.lines:
        if line.startswith("route: "):  # the OpenAI route's line, if it is shown at all
            assert anthropic_key not in line, line
    assert anthropic_key not in route["key_shown"], route["key_shown"]
    (anthropic_line,) = [line for line in replayed.stdout.lines if line.startswith("route (anthropic): ")]
    assert f"key {anthropic_key} (recorded)" in anthropic_line, anthropic_line


ROUTES_APART_TASK = """
import threading
import time

import pytest

@pytest.mark.repeat_consistency(n=1)
def test_task(pinned_client, pinned_anthropic_client, consistency):
    slow = threading.Thread(target=lambda: pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "slow"}]))
    slow.start()
    time.sleep(0.3)  # the OpenAI call now holds the OpenAI route's only slot
    reply = pinned_anthropic_client.messages.create(
        model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "quick"}])
    slow.join()
    consistency.record(reply.content[0].text)
"""


def test_one_routes_slot_never_holds_back_the_other_route(
    pytester: pytest.Pytester, claude: FakeAnthropic, fake: FakeOpenAI
) -> None:
    fake.script(OpenAIStep(text="slow", delay=1.5))
    pytester.makepyfile(test_agent=suite(ROUTES_APART_TASK))
    result = run_sub(pytester, "off", f"--consistency-base-url={fake.base_url}", "--consistency-concurrency=1")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    (anthropic_call,) = [c for c in calls(pytester) if c["provider"] == "anthropic"]
    assert anthropic_call["wait_ms"] < 200, anthropic_call


class MidStreamError:
    """A Messages API whose streams start, then fail with an ``overloaded_error`` event (HTTP status 200), as the
    real API does when it is overloaded mid-answer."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                outer.requests += 1
                message = {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 3, "output_tokens": 1},
                }
                events = [
                    ("message_start", {"type": "message_start", "message": message}),
                    ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
                ]
                data = b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


MID_STREAM_TASK = """
import anthropic
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_anthropic_client, consistency):
    try:
        with pinned_anthropic_client.messages.stream(
            model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            consistency.record("".join(stream.text_stream))
    except anthropic.APIStatusError as exc:
        consistency.record(type(exc).__name__)
"""


def test_an_overloaded_error_in_the_middle_of_a_stream_is_a_route_error(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = MidStreamError()
    try:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        pytester.makepyfile(test_agent=suite(MID_STREAM_TASK))
        result = run(pytester, "off", "--route-drift-max=0")
        assert server.requests == 2
        assert report(pytester)["tasks"][0]["answers"] == ["APIStatusError"] * 2
        seen = calls(pytester)
        assert all(c["error"] for c in seen), seen
        assert "errors" in report(pytester)["tasks"][0]["drift"]["kinds"]
        assert result.ret == 1, result.stdout.str()
    finally:
        server.stop()
