"""No Anthropic credential reaches a cassette, a report or the terminal: the route's key, other keys of the
agent's own clients and a gateway token with no key shape (from the adversarial tests of the routes, part 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_anthropic import GOOD_KEY, FakeAnthropic
from suites import anthropic_suite as suite
from suites import report_calls as calls
from suites import run_mode as run

from pytest_consistency.secrets.keys import fingerprint

#: Other Anthropic credentials an agent might use in its own clients (all accepted by the loopback server).
OTHER_KEY = "sk-ant-api03-otherkey-9876543210abcdefXYZ"


HEADER_KEY = "sk-ant-api03-headerkey-1122334455aabbccDD"


GATEWAY_TOKEN = "gw-bearer-token-qwertyuiopasdf"  # no key shape at all: only literal redaction can catch it


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
