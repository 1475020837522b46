"""Every credential the session knows is redacted in every output: trust, round two.

Each test sends credentials the way agents and gateways do, through a live loopback server and the real SDKs, in
a real inner pytest session (with and without xdist), then greps every file the session wrote and everything it
printed: the JSON report, the HTML page, the Markdown summary, pytest's JUnit XML, the terminal and the cassettes.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic
from fake_anthropic import Step as ClaudeStep
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from suites import anthropic_suite, run_recorded

#: A gateway token and an Anthropic auth token with no key shape: only known because the session sent them.
GATEWAY_TOKEN = "hel1cone-token-qq77zz88"
AUTH_TOKEN = "gw-anthropic-token-55aa66bb"
OUTPUTS = ("--consistency-html=page.html", "--consistency-md=summary.md", "--junitxml=junit.xml", "-v")
XDIST = [pytest.param((), id="serial"), pytest.param(("-n", "2"), id="xdist")]


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def everything(pytester: pytest.Pytester, result: pytest.RunResult) -> dict[str, str]:
    """Every text file the session left (report, page, summary, JUnit, cassettes) and its output, by name."""
    texts = {"stdout": result.stdout.str(), "stderr": result.stderr.str()}
    for path in sorted(pytester.path.rglob("*")):
        if path.is_file() and path.suffix in (".yaml", ".json", ".xml", ".md", ".html", ".txt", ".log"):
            texts[str(path.relative_to(pytester.path))] = path.read_text(errors="replace")
    return texts


def assert_absent(texts: dict[str, str], *secrets: str) -> None:
    leaks = [(name, secret) for name, text in texts.items() for secret in secrets if secret in text]
    assert not leaks, leaks


def assert_outputs_written(pytester: pytest.Pytester) -> None:
    for name in ("report.json", "page.html", "summary.md", "junit.xml"):
        assert (pytester.path / name).is_file(), name


ANTHROPIC_ECHO = """
import base64, os, pytest

@pytest.mark.repeat_consistency(n=2, min_pass=0)
def test_task(pinned_anthropic_client, consistency):
    reply = pinned_anthropic_client.messages.create(
        model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "what is my key?"}])
    key = os.environ[os.environ["KEY_VAR"]]
    consistency.record({"text": reply.content[0].text + " " + key, "b64": base64.b64encode(key.encode()).decode(),
                        "b64_sentence": base64.b64encode(("your key: " + key).encode()).decode()})
"""


#: Both variables serially; under xdist the one (the redaction crossing workers does not depend on the variable).
@pytest.mark.parametrize(
    ("variable", "xdist"),
    [
        pytest.param("ANTHROPIC_API_KEY", (), id="ANTHROPIC_API_KEY-serial"),
        pytest.param("ANTHROPIC_API_KEY", ("-n", "2"), id="ANTHROPIC_API_KEY-xdist"),
        pytest.param("ANTHROPIC_AUTH_TOKEN", (), id="ANTHROPIC_AUTH_TOKEN-serial"),
    ],
)
def test_the_anthropic_routes_key_is_redacted_in_every_output(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, variable: str, xdist: tuple
) -> None:
    """``sk-ant-...`` from ANTHROPIC_API_KEY (its base64 survived) and a gateway's ANTHROPIC_AUTH_TOKEN (no shape)."""
    key = AUTH_TOKEN if variable == "ANTHROPIC_AUTH_TOKEN" else "sk-ant-api03-Zx9yW8vU7tS6rQ5pO4nM3lK2jI1hG0"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv(variable, key)
    monkeypatch.setenv("KEY_VAR", variable)
    claude.keys = {key}
    claude.script(*[ClaudeStep(text="alice")] * 2)
    pytester.makepyfile(test_agent=anthropic_suite(ANTHROPIC_ECHO))
    result = pytester.runpytest("--consistency-record=off", "--consistency-report=report.json", *OUTPUTS, *xdist)
    assert result.ret == 0, result.stdout.str()
    assert_outputs_written(pytester)
    assert_absent(everything(pytester, result), key, b64(key).rstrip("="), b64(f"your key: {key}")[16:40])
    answer = json.loads((pytester.path / "report.json").read_text())["tasks"][0]["answers"][0]
    assert answer["text"] == "alice <redacted>"


WIRE_ECHO = f"""
import base64, httpx, pytest

@pytest.mark.repeat_consistency(n=2, min_pass=0)
def test_task(pinned_client, consistency):
    client = pinned_client.with_options(default_headers={{"helicone-auth": "Bearer {GATEWAY_TOKEN}"}})
    reply = client.chat.completions.create(model="fake-model", messages=[{{"role": "user", "content": "hi"}}])
    # the agent's own client, with basic auth
    httpx.get("{{base}}/models", auth=("agent-user", "basic-pw-77qq"))
    token = "{GATEWAY_TOKEN}"
    consistency.record({{"text": reply.choices[0].message.content + " " + token, "pw": "basic-pw-77qq",
                         "b64": base64.b64encode(token.encode()).decode()}})
"""


@pytest.mark.parametrize("xdist", XDIST)
def test_credentials_seen_on_the_wire_are_redacted_in_every_output(
    pytester: pytest.Pytester, fake: FakeOpenAI, xdist: tuple
) -> None:
    fake.script(*[Step(text="widget")] * 2)
    pytester.makepyfile(test_agent=WIRE_ECHO.replace("{base}", fake.base_url))
    result = run_recorded(pytester, fake.base_url, "once", *OUTPUTS, *xdist)
    assert result.ret == 0, result.stdout.str()
    assert_outputs_written(pytester)
    assert_absent(everything(pytester, result), GATEWAY_TOKEN, b64(GATEWAY_TOKEN).rstrip("="), "basic-pw-77qq")
    answer = json.loads((pytester.path / "report.json").read_text())["tasks"][0]["answers"][0]
    assert answer["text"] == "widget <redacted>" and answer["pw"] == "<redacted>"


FAILING_ECHO = f"""
import logging, os, sys, warnings, pytest

@pytest.mark.repeat_consistency(n=2, min_pass=1)
def test_task(pinned_client, consistency, record_property):
    client = pinned_client.with_options(default_headers={{"helicone-auth": "Bearer {GATEWAY_TOKEN}"}})
    reply = client.chat.completions.create(model="fake-model", messages=[{{"role": "user", "content": "hi"}}])
    key = os.environ["OPENAI_API_KEY"]
    answer = reply.choices[0].message.content + " " + key + " " + "{GATEWAY_TOKEN}"
    consistency.record(answer)
    print("stdout:", answer)
    print("stderr:", answer, file=sys.stderr)
    logging.getLogger("agent").warning("log: %s", answer)
    warnings.warn("warned: " + answer)
    record_property("answer", answer)
    assert "widget" in answer
"""


@pytest.mark.parametrize("xdist", XDIST)
def test_pytests_own_failure_text_is_redacted_in_the_terminal_and_junit(
    pytester: pytest.Pytester, fake: FakeOpenAI, xdist: tuple
) -> None:
    """The README's own pattern: ``assert "widget" in answer`` with a key in the answer, failing every repetition,
    its output captured, logged and recorded as a JUnit property; locals shown (``-l``), every section reported."""
    fake.script(*[Step(text="gadget")] * 2)
    pytester.makepyfile(test_agent=FAILING_ECHO)
    result = run_recorded(pytester, fake.base_url, "off", *OUTPUTS, "-l", "-rA", "--tb=long", *xdist)
    assert result.ret == 1, result.stdout.str()
    assert_outputs_written(pytester)
    texts = everything(pytester, result)
    assert "assert 'widget' in 'gadget <redacted> <redacted>'" in texts["stdout"]
    assert "Captured stdout call" in texts["stdout"] and "stdout: gadget <redacted> <redacted>" in texts["stdout"]
    assert "UserWarning: warned: gadget <redacted> <redacted>" in texts["stdout"]
    assert_absent(texts, GOOD_KEY, GATEWAY_TOKEN)


TOLERATED_ECHO = FAILING_ECHO.replace("min_pass=1", "min_pass=0.5").replace(
    'assert "widget" in answer', 'assert consistency.repeat == 1 or "widget" in answer'
)


def test_a_tolerated_repetitions_failure_text_is_redacted_as_well(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(*[Step(text="gadget")] * 2)
    pytester.makepyfile(test_agent=TOLERATED_ECHO)
    result = run_recorded(pytester, fake.base_url, "off", *OUTPUTS, "-vv", "-l")
    assert result.ret == 0, result.stdout.str()
    texts = everything(pytester, result)
    assert "TOLERATED" in texts["stdout"]
    assert_absent(texts, GOOD_KEY, GATEWAY_TOKEN)


SETUP_ECHO = f"""
import pytest

@pytest.fixture
def agent():
    raise RuntimeError("gateway refused token {GATEWAY_TOKEN} and key " + __import__("os").environ["OPENAI_API_KEY"])

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency, agent):
    pass
"""


def test_a_setup_errors_text_is_redacted(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """The route key reaches a fixture's exception message; the wire token is not known (nothing was sent)."""
    pytester.makepyfile(test_agent=SETUP_ECHO.replace(GATEWAY_TOKEN, "sk-ant-api03-abcdefghij0123456789XYZ"))
    result = run_recorded(pytester, fake.base_url, "off", *OUTPUTS)
    assert result.ret == 1
    texts = everything(pytester, result)
    assert "ERROR at setup of test_task" in texts["stdout"]
    assert_absent(texts, GOOD_KEY, "sk-ant-api03-abcdefghij0123456789XYZ")


CASE_TASK = """
import httpx, requests, pytest

@pytest.mark.repeat_consistency(n=1)
def test_task(pinned_client, consistency):
    reply = pinned_client.with_options(default_headers={"X-MasterKey": "mk-lower-9q9q"}).chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "hi"}], extra_query={"TOKEN": "qtok-3z3z"})
    requests.get("BASE/models", headers={"X-TOKEN": "rtok-4y4y", "COOKIE": "sid=ck-5x5x"},
                 params={"Api_Key": "rkey-6w6w"}).raise_for_status()
    httpx.request("GET", "BASE/models", data={"client_secret": "form-sec-7v7v", "password": "form-pw-8u8u",
                                              "grant_type": "client_credentials"}).raise_for_status()
    requests.get("BASE/models", data={"CLIENT_SECRET": "form-sec-9t9t", "scope": "read"}).raise_for_status()
    consistency.record(reply.choices[0].message.content)
"""


def test_names_in_any_case_and_form_bodies_never_reach_cassettes(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(Step(text="widget"))
    pytester.makepyfile(test_agent=CASE_TASK.replace("BASE", fake.base_url))
    result = run_recorded(pytester, fake.base_url, "once", *OUTPUTS)
    assert result.ret == 0, result.stdout.str()
    texts = everything(pytester, result)
    cassette = next(text for name, text in texts.items() if name.endswith("rep-1.yaml"))
    assert "grant_type=client_credentials" in cassette and "scope=read" in cassette  # the rest is kept verbatim
    values = ("mk-lower-9q9q", "qtok-3z3z", "rtok-4y4y", "ck-5x5x", "rkey-6w6w", "form-sec-7v7v", "form-pw-8u8u")
    assert_absent(texts, *values, "form-sec-9t9t")
    replay = run_recorded(pytester, fake.base_url, "none")
    assert replay.ret == 0, replay.stdout.str()


MULTIPART_TASK = """
import httpx, pytest

@pytest.mark.repeat_consistency(n=1)
def test_task(consistency):
    httpx.request("GET", "BASE/models", data={"api_key": "mp-key-1r1r", "purpose": "batch"},
                  files={"file": ("batch.jsonl", b"{}")}).raise_for_status()
    consistency.record("uploaded")
"""


def test_multipart_credential_fields_never_reach_cassettes(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """(Not replayed: httpx draws a new multipart boundary for every request, so the body differs each time.)"""
    pytester.makepyfile(test_agent=MULTIPART_TASK.replace("BASE", fake.base_url))
    result = run_recorded(pytester, fake.base_url, "once", *OUTPUTS)
    assert result.ret == 0, result.stdout.str()
    texts = everything(pytester, result)
    cassette = next(text for name, text in texts.items() if name.endswith("rep-1.yaml"))
    assert "batch.jsonl" in cassette and "purpose" in cassette  # the file part and the other fields are kept
    assert_absent(texts, "mp-key-1r1r")


SHORT_KEY = "sk-1234"
SHORT_TASK = """
import os, pytest

@pytest.mark.repeat_consistency(n=2, min_pass=0)
def test_task(pinned_client, consistency):
    reply = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "k?"}])
    answer = reply.choices[0].message.content
    consistency.record(answer)
    assert "widget" in answer
"""


@pytest.mark.parametrize("xdist", XDIST)
def test_a_short_key_is_redacted_in_cassettes_and_every_output(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, xdist: tuple
) -> None:
    """LiteLLM's documented master key, echoed by the server into every answer, and every ordinary word kept."""
    monkeypatch.setenv("OPENAI_API_KEY", SHORT_KEY)
    fake.keys = {SHORT_KEY}
    fake.script(*[Step(text=f"your key is {SHORT_KEY}, not sk-12345")] * 2)
    pytester.makepyfile(test_agent=SHORT_TASK)
    result = run_recorded(pytester, fake.base_url, "once", *OUTPUTS, *xdist)
    assert result.ret == 0, result.stdout.str()
    assert_outputs_written(pytester)
    texts = everything(pytester, result)
    assert_absent(texts, SHORT_KEY + ",", SHORT_KEY + "'", b64(SHORT_KEY).rstrip("="))
    answer = json.loads((pytester.path / "report.json").read_text())["tasks"][0]["answers"][0]
    assert answer == "your key is <redacted>, not sk-12345"


def _unused(path: Path) -> None:
    del path


@pytest.mark.parametrize("tail", ["?api_key=frag-secret-1q", "#access_token=frag-secret-1q", "?TOKEN=frag-secret-1q"])
def test_a_base_url_pasted_with_a_credential_is_refused_without_showing_it(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tail: str
) -> None:
    """An OAuth redirect's fragment (``#access_token=``) or a query key in a pasted base URL: the route problem
    names the URL with the value redacted."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url + tail)
    pytester.makepyfile(test_agent="def test_x(pinned_client):\n    pass\n")
    result = pytester.runpytest("--consistency-record=off")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*has a query string or fragment*"])
    assert "frag-secret-1q" not in result.stdout.str() + result.stderr.str()


ONE_WORD_TASK = """
import pytest

@pytest.mark.repeat_consistency(n=1)
def test_task(pinned_client, consistency):
    client = pinned_client.with_options(default_headers={"X-VaultToken": "hvs.vault-one-word-2k2k"})
    reply = client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "hi"}], extra_headers={"X-TenantKey": "tk-one-3j3j"})
    consistency.record(reply.choices[0].message.content)
"""


def test_a_credential_header_named_in_one_word_never_reaches_cassettes(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """httpx records ``X-VaultToken`` as ``x-vaulttoken``: one word, lower case, still a credential."""
    fake.script(Step(text="widget"))
    pytester.makepyfile(test_agent=ONE_WORD_TASK)
    result = run_recorded(pytester, fake.base_url, "once", *OUTPUTS)
    assert result.ret == 0, result.stdout.str()
    assert {"x-vaulttoken", "x-tenantkey"} <= {name.lower() for name in fake.requests[0]["headers"]}
    texts = everything(pytester, result)
    cassette = next(text for name, text in texts.items() if name.endswith("rep-1.yaml"))
    assert "x-stainless-lang" in cassette and "x-vaulttoken" not in cassette and "x-tenantkey" not in cassette
    assert_absent(texts, "hvs.vault-one-word-2k2k", "tk-one-3j3j")
    replay = run_recorded(pytester, fake.base_url, "none")
    assert replay.ret == 0, replay.stdout.str()
