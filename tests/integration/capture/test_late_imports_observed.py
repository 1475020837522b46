"""An HTTP library first imported inside a repetition (httpx, the anthropic SDK) is observed all the same: the
plugin's lazy imports keep behaviour.
"""

from __future__ import annotations

import pytest
from fake_anthropic import GOOD_KEY, MODEL, FakeAnthropic
from suites import anthropic_suite as suite
from suites import report_calls as calls

from pytest_consistency.secrets.keys import fingerprint

#: Their sessions' processes start cold, not forked from the warm server (tests/support/forkserver.py):
#: an HTTP library first imported inside a repetition is their point (a fork has them all).
pytestmark = pytest.mark.cold_start


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
