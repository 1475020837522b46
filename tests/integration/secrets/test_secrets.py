"""No credential is ever written or shown: cassettes, report, terminal, JUnit XML, error messages.

Each test sends secrets the way real agents and gateways do (query keys, gateway auth headers, basic auth, keys in
answers and prompts) through a live loopback server, then greps everything the session left behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from suites import run_recorded

GATEWAY_TOKEN = "helicone-token-9f8e7d6c5b4a"
PORTKEY = "portkey-secret-4242aaaa"
QUERY_KEY = "query-secret-31337zz"
CUSTOM_TOKEN = "custom-token-value-5150"


def leftovers(pytester: pytest.Pytester, result: pytest.RunResult) -> str:
    """Everything the session wrote or printed: every file under the test dir and the captured output."""
    texts = [result.stdout.str(), result.stderr.str()]
    for path in pytester.path.rglob("*"):
        if path.is_file() and path.suffix in (".yaml", ".json", ".xml", ".txt", ".log"):
            texts.append(path.read_text(errors="replace"))
    return "\n".join(texts)


def run(pytester: pytest.Pytester, fake: FakeOpenAI, mode: str, *args: str) -> pytest.RunResult:
    return run_recorded(pytester, fake.base_url, mode, "--junitxml=junit.xml", *args)


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_credentials_other_than_the_api_key_never_reach_cassettes(
    pytester: pytest.Pytester, fake: FakeOpenAI, fmt: str
) -> None:
    fake.script(*[Step(text="widget")] * 4)
    pytester.makepyfile(
        test_agent=f"""
import httpx, pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency):
    client = pinned_client.with_options(default_headers={{
        "helicone-auth": "Bearer {GATEWAY_TOKEN}",
        "x-portkey-api-key": "{PORTKEY}",
        "x-custom-token": "{CUSTOM_TOKEN}",
    }})
    reply = client.chat.completions.create(
        model="fake-model", messages=[{{"role": "user", "content": "hi"}}], extra_query={{"key": "{QUERY_KEY}"}})
    # the agent's own client, with basic auth
    own = httpx.get("{fake.base_url}/models", auth=("agent-user", "basic-pass-8080"))
    consistency.record(reply.choices[0].message.content)
"""
    )
    result = run(pytester, fake, "once", f"--consistency-cassette-format={fmt}")
    assert result.ret == 0, result.stdout.str()
    files = sorted((pytester.path / "cassettes").rglob(f"rep-*.{fmt}"))
    assert len(files) == 2 and not list((pytester.path / "cassettes").rglob("rep-*.yml"))
    cassettes = "\n".join(p.read_text() for p in files)
    assert "helicone-auth" not in cassettes or GATEWAY_TOKEN not in cassettes
    everything = leftovers(pytester, result)
    for secret in (GOOD_KEY, GATEWAY_TOKEN, PORTKEY, QUERY_KEY, CUSTOM_TOKEN, "basic-pass-8080", "YWdlbnQtdXNlcjpi"):
        assert secret not in everything, secret
    # the query parameter is kept, its value redacted, so the replay still matches the same URI
    assert "key=%3Credacted%3E" in cassettes or "key=<redacted>" in cassettes
    replay = run(pytester, fake, "none", f"--consistency-cassette-format={fmt}")
    assert replay.ret == 0, replay.stdout.str()


def test_credentials_in_the_base_url_are_a_route_problem_shown_redacted(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_agent="def test_x(pinned_client):\n    pass\n")
    url = fake.base_url.replace("http://", "http://admin:hunter2pass@")
    result = pytester.runpytest(f"--consistency-base-url={url}", "--consistency-record=off")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*carries credentials (user:password@)*"])
    assert "hunter2pass" not in result.stdout.str() + result.stderr.str()
    assert fake.requests == []
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    result = pytester.runpytest("--consistency-record=off")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "hunter2pass" not in result.stderr.str()


@pytest.mark.parametrize("bad", [GOOD_KEY + "\n", " " + GOOD_KEY, GOOD_KEY + "\r\n"])
def test_a_key_with_whitespace_is_refused_before_any_call_without_showing_it(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", bad)
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_x(pinned_client):
    pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
"""
    )
    result = run(pytester, fake, "off", "--consistency-preflight")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*$OPENAI_API_KEY has leading or trailing whitespace or a line break*"])
    assert GOOD_KEY not in leftovers(pytester, result) and GOOD_KEY[3:15] not in leftovers(pytester, result)
    assert fake.requests == []


def test_a_base_url_with_a_trailing_space_is_refused(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url + " ")
    pytester.makepyfile(test_agent="def test_x(pinned_client):\n    pass\n")
    result = pytester.runpytest("--consistency-record=off")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*contains whitespace or a line break*"])


def test_answers_that_echo_a_key_are_redacted_in_report_terminal_and_junit(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    fake.script(*[Step(text=f"your key is {GOOD_KEY}")] * 2)
    pytester.makepyfile(
        test_agent="""
import os, pytest

@pytest.mark.repeat_consistency(n=2, min_pass=0)
def test_task(pinned_client, consistency, record_property):
    reply = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "k?"}])
    answer = reply.choices[0].message.content
    consistency.record({"text": answer, "env": os.environ["OPENAI_API_KEY"], "masked": "sk-te****cdef"})
"""
    )
    result = run(pytester, fake, "off", "-v")
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "report.json").read_text())
    answers = report["tasks"][0]["answers"]
    assert answers[0] == {"text": "your key is <redacted>", "env": "<redacted>", "masked": "<redacted>"}
    assert GOOD_KEY not in leftovers(pytester, result)


def test_unmarked_test_cannot_go_live_in_replay_only_mode(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_agent="""
import pytest

def test_unmarked(pinned_client):
    with pytest.raises(Exception) as info:
        pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    assert "outside a @pytest.mark.repeat_consistency repetition" in str(info.value) + str(info.value.__cause__)
"""
    )
    for key in (GOOD_KEY, None):
        if key is None:
            monkeypatch.delenv("OPENAI_API_KEY")
        result = pytester.runpytest(f"--consistency-base-url={fake.base_url}")
        assert result.ret == 0, result.stdout.str()
        assert fake.requests == []


def test_cassette_write_refused_when_a_sent_secret_escaped_redaction(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """A gateway token sent in a body that is not UTF-8: redaction leaves binary bodies alone, the scan does not.

    (A token partly percent-encoded in a text body used to be the miss; redaction now sees through escapes.)"""
    fake.script(*[Step(text="widget")] * 3)
    pytester.makepyfile(
        test_agent=f"""
import httpx, pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_client, consistency):
    pinned_client.chat.completions.create(model="fake-model", messages=[{{"role": "user", "content": "hi"}}])
    if consistency.repeat == 2:
        httpx.request("GET", "{fake.base_url}/models", content=b"\\xff\\xfe {GATEWAY_TOKEN}",
                      headers={{"helicone-auth": "Bearer {GATEWAY_TOKEN}", "authorization": "Bearer {GOOD_KEY}"}})
"""
    )
    result = run(pytester, fake, "once")
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_task[[]rep2[]]*", "*refusing to write *rep-2.yaml*"])
    names = sorted(p.name for p in (pytester.path / "cassettes").rglob("*.yaml"))
    assert names == ["rep-1.yaml", "rep-3.yaml"]
    assert GATEWAY_TOKEN not in leftovers(pytester, result)
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["summary"]["passed"] is False and result.ret == 1


def _unused(path: Path) -> None:  # keep Path imported for type checkers of helpers above
    del path
