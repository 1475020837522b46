"""The route doctor refuses before any call, and only what is wrong (one gateway key for both routes, an auth token
without an API key, a trailing slash are accepted).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from fake_anthropic import GOOD_KEY, FakeAnthropic
from fake_openai import FakeOpenAI
from suites import BOTH_ROUTES_TASK as BOTH_TASK
from suites import OWN_AND_PINNED_TASK
from suites import anthropic_suite as suite
from suites import load_report as report
from suites import report_calls as calls
from suites import run_mode as run

from pytest_consistency.secrets.keys import fingerprint

GATEWAY_TOKEN = "gw-bearer-token-qwertyuiopasdf"  # no key shape at all: only literal redaction can catch it


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
