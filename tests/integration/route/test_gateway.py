"""Drift a gateway hides from the response body, seen through its headers; scripted 429s from llmock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_openai import FakeOpenAI
from gateways import MASTER_KEY, UPSTREAM_KEY, litellm_proxy
from suites import load_report as report


@pytest.fixture(autouse=True)
def _live(pytester: pytest.Pytester) -> None:
    """These sessions talk to live loopback servers: no cassettes (``--consistency-record=off``)."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nconsistency_record = off\n")


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    server.keys = {UPSTREAM_KEY}
    yield server
    server.stop()


@pytest.fixture(scope="module")
def proxy(upstream: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with litellm_proxy(upstream.base_url, tmp_path_factory.mktemp("litellm")) as url:
        yield url


@pytest.fixture
def gateway_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", MASTER_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


SUITE = """
import pytest

@pytest.mark.repeat_consistency(n={n})
def test_gateway(pinned_client, pinned_route, consistency):
    reply = pinned_client.chat.completions.create(
        model=pinned_route.model, messages=[{{"role": "user", "content": "items under 20?"}}])
    consistency.record(reply.choices[0].message.content)
"""


def test_gateway_fallback_is_route_drift(pytester: pytest.Pytester, proxy: str, gateway_env: None) -> None:
    pytester.makepyfile(test_gw=SUITE.format(n=2))
    result = pytester.runpytest(
        f"--consistency-base-url={proxy}",
        "--consistency-model=primary",
        "--route-drift-max=0",
        "--consistency-report=report.json",
    )
    assert result.ret == 1
    route = report(pytester)["tasks"][0]["drift"]
    assert "fallback" in route["kinds"] and "model_served" in route["kinds"]
    result.stdout.fnmatch_lines(["*asked for primary, served backup-model*gateway fell back 2 time(s)*"])
    assert MASTER_KEY not in result.stdout.str() + (pytester.path / "report.json").read_text()


def test_shuffled_deployment_is_route_drift_though_model_is_the_alias(
    pytester: pytest.Pytester, proxy: str, gateway_env: None
) -> None:
    pytester.makepyfile(test_gw=SUITE.format(n=14))  # both deployments used: 1 - 2 * 2**-14
    result = pytester.runpytest(
        f"--consistency-base-url={proxy}",
        "--consistency-model=agent-model",
        "--route-drift-max=0",
        "--consistency-report=report.json",
    )
    assert result.ret == 1
    task = report(pytester)["tasks"][0]
    served = {c["model_served"] for r in task["repetitions"] for c in r["calls"]}
    assert served == {"agent-model"}  # the body hides the switch...
    assert task["drift"]["kinds"] == ["deployment"]  # ...the x-litellm-model-id header does not
    result.stdout.fnmatch_lines(["*gateway deployment: 2 different (x-litellm-model-id)*"])


def test_llmock_scripted_429s_count_as_retries_and_errors(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from llmock.testing import LLMockServer

    with LLMockServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "llmock-test-key-0000000000")
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        pytester.makepyfile(
            test_gw=SUITE.format(n=2)
            + f"""
import json, urllib.request

@pytest.fixture(autouse=True)
def script_429(consistency):
    if consistency.repeat == 2:
        body = json.dumps({{"behaviors": [{{"type": "fail", "status": 429, "times": 1, "retry_after": 0.01}}]}})
        request = urllib.request.Request({server.url!r} + "/_llmock/scenario", data=body.encode(),
                                         headers={{"content-type": "application/json"}})
        urllib.request.urlopen(request).read()
"""
        )
        result = pytester.runpytest(
            f"--consistency-base-url={server.base_url('openai')}",
            "--consistency-model=gpt-4o-mini",
            "--route-drift-max=0",
            "--consistency-report=report.json",
            "-p",
            "no:randomly",
        )
    assert result.ret == 1
    task = report(pytester)["tasks"][0]
    calls = [(c["status"], c["retry_index"]) for r in task["repetitions"] for c in r["calls"]]
    assert calls == [(200, 0), (429, 0), (200, 1)]
    assert task["drift"]["errors"] == {"429": 1}
    assert task["drift"]["kinds"] == ["errors"]  # one retry is within max_retries=1
    result.stdout.fnmatch_lines(["*errors: 429 x1*"])
