"""The Anthropic route through a gateway: the real anthropic SDK -> the LiteLLM proxy's ``/v1/messages`` -> an
Anthropic Messages API upstream (``tests/support/fake_anthropic.py``), all on loopback.

The proxy holds the upstream key; the agent holds only the proxy's master key (``ANTHROPIC_AUTH_TOKEN`` or
``ANTHROPIC_API_KEY``), which is the key the route pins and fingerprints. What LiteLLM 1.108 does on this route, and
what the tests rely on:

* every answer carries ``x-litellm-model-id`` (the deployment), ``x-litellm-attempted-retries`` and
  ``x-litellm-attempted-fallbacks``; errors carry only ``x-litellm-model-id``;
* it rewrites the ``model`` of a JSON answer and of a stream's ``message_start`` to the model group the agent asked
  for (except a JSON answer after a fallback, which names the fallback's model), so an upstream that swaps models is
  invisible in the body: the deployment header is what shows a move;
* it forwards the upstream's usage untouched (cache counts included; in SSE: ``message_start`` and
  ``message_delta``), but none of its ``anthropic-ratelimit-*`` / ``retry-after`` headers under their own names;
* an upstream 529 ``overloaded_error`` reaches the agent as a 500 ``api_error`` (the SDK retries it), unless a
  retry or a fallback inside the gateway hides it behind a 200.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fake_anthropic import GOOD_KEY, MODEL, FakeAnthropic, Step
from gateways import ANTHROPIC_DEPLOYMENTS, MASTER_KEY, Gateway, anthropic_config_text, litellm_gateway
from suites import load_report as report
from suites import report_calls as calls
from suites import run_mode as run

from pytest_consistency.secrets.keys import fingerprint

TASK = """
import pytest

@pytest.mark.repeat_consistency(n={n})
def test_task(pinned_anthropic_client, pinned_anthropic_route, consistency):
    reply = pinned_anthropic_client.messages.create(
        model=pinned_anthropic_route.model, max_tokens=64, messages=[{{"role": "user", "content": "name the sender"}}])
    consistency.record(reply.content[0].text)
"""

STREAM_TASK = """
import pytest

@pytest.mark.repeat_consistency(n={n})
def test_task(pinned_anthropic_client, pinned_anthropic_route, consistency):
    with pinned_anthropic_client.messages.stream(
        model=pinned_anthropic_route.model, max_tokens=64,
        messages=[{{"role": "user", "content": "name the sender please"}}],
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    # What the SDK itself parsed, to hold the plugin's records against.
    consistency.record({{"text": text, "model": final.model, "usage": [final.usage.input_tokens,
                                                                     final.usage.output_tokens]}})
"""


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gateway(upstream: FakeAnthropic, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    config = anthropic_config_text(upstream.base_url, GOOD_KEY)
    with litellm_gateway(config, tmp_path_factory.mktemp("litellm-anthropic")) as running:
        yield running


@pytest.fixture
def claude(upstream: FakeAnthropic, gateway: Gateway, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    """The upstream, reset; the environment of an agent that only knows the gateway and its master key."""
    upstream.reset()
    upstream.keys = {GOOD_KEY}
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", gateway.url)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", MASTER_KEY)
    return upstream


def written(pytester: pytest.Pytester, result: pytest.RunResult) -> str:
    """Everything a session left behind: its terminal output, its report and its cassettes."""
    cassettes = [p.read_text() for p in sorted((pytester.path / "cassettes").rglob("*.yaml"))]
    return "\n".join(
        [result.stdout.str(), result.stderr.str(), (pytester.path / "report.json").read_text(), *cassettes]
    )


def test_records_through_the_gateway_and_replays_with_it_frozen(
    pytester: pytest.Pytester, claude: FakeAnthropic, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_MODEL", MODEL)
    claude.script(
        Step(text="alice", cache_read_input_tokens=7, cache_creation_input_tokens=3),
        Step(text="alice"),
        Step(text="alice liddell"),
    )
    pytester.makepyfile(test_agent=TASK.format(n=3))
    recorded = run(pytester, "once")
    assert recorded.ret == 0, recorded.stdout.str()

    # The proxy called the upstream with its own key; the agent's requests carried only the master key.
    assert [(r["path"], r["headers"].get("x-api-key")) for r in claude.requests] == [("/v1/messages", GOOD_KEY)] * 3
    live = calls(pytester)
    assert len(live) == 3
    for call in live:
        assert call["provider"] == "anthropic" and call["pinned"] and not call["replayed"]
        assert call["url"] == f"{gateway.url}/v1/messages"
        assert call["base_url"] == gateway.url
        assert call["key_fingerprint"] == fingerprint(MASTER_KEY)
        assert call["model_requested"] == call["model_served"] == MODEL
        assert (call["status"], call["retry_index"]) == (200, 0)
        assert call["prompt_tokens"] == 3  # "name the sender"
        assert call["gateway"]["x-litellm-model-id"] == "claude-direct"
        assert call["gateway"]["x-litellm-attempted-retries"] == "0"
        assert call["gateway"]["x-litellm-attempted-fallbacks"] == "0"
        assert call["rate_limit"] == {}  # LiteLLM drops the upstream's anthropic-ratelimit-* on JSON answers
    assert [c["completion_tokens"] for c in live] == [1, 1, 2]
    # The upstream's cache counts pass through the gateway.
    assert (live[0]["cache_read_tokens"], live[0]["cache_creation_tokens"], live[0]["total_tokens"]) == (7, 3, 14)
    task = report(pytester)["tasks"][0]
    assert task["answers"] == ["alice", "alice", "alice liddell"]
    assert task["drift"]["kinds"] == []
    recorded.stdout.fnmatch_lines([f"*route (anthropic): {gateway.url}*"])
    assert len(list((pytester.path / "cassettes").rglob("rep-*.yaml"))) == 3
    text = written(pytester, recorded)
    assert MASTER_KEY not in text and GOOD_KEY not in text

    # Replay: no key, and the proxy stopped. Nothing reaches it (not even a connection), nor the upstream.
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN")
    claude.reset()
    with gateway.frozen():
        replayed = run(pytester, "none", "--consistency-timeout=5")
        waiting = gateway.waiting_connections()
    assert replayed.ret == 0, replayed.stdout.str()
    assert waiting in (0, None)
    assert claude.requests == []
    again = calls(pytester)
    assert all(c["replayed"] for c in again)
    keep = (
        "provider",
        "base_url",
        "key_fingerprint",
        "model_requested",
        "model_served",
        "status",
        "prompt_tokens",
        "completion_tokens",
        "cache_read_tokens",
        "cache_creation_tokens",
        "total_tokens",
        "gateway",
    )
    assert [{k: c[k] for k in keep} for c in again] == [{k: c[k] for k in keep} for c in live]
    assert report(pytester)["tasks"][0]["answers"] == task["answers"]
    text = written(pytester, replayed)
    assert MASTER_KEY not in text and GOOD_KEY not in text


def test_a_replay_shows_the_recorded_key_on_the_anthropic_route_not_the_openai_one(
    pytester: pytest.Pytester, claude: FakeAnthropic, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replayed without a key, the summary names the keys the cassettes were recorded with, on the route whose calls
    carried them: here only the Anthropic route made calls, so the OpenAI route (unused, unconfigured) has none."""
    pytester.makepyfile(test_agent=TASK.format(n=1))
    assert run(pytester, "once", f"--consistency-anthropic-model={MODEL}").ret == 0
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN")
    replayed = run(pytester, "none", f"--consistency-anthropic-model={MODEL}")
    assert replayed.ret == 0
    recorded_key = fingerprint(MASTER_KEY)
    assert [c["key_fingerprint"] for c in calls(pytester)] == [recorded_key]
    lines = replayed.stdout.lines
    anthropic_line = next(line for line in lines if line.startswith("route (anthropic): "))
    openai_lines = [line for line in lines if line.startswith("route: ")]
    assert f"key {recorded_key} (recorded)" in anthropic_line, anthropic_line
    assert not any(recorded_key in line for line in openai_lines), openai_lines


def test_a_preflight_checks_the_anthropic_route_through_the_gateway(
    pytester: pytest.Pytester, claude: FakeAnthropic
) -> None:
    """``--consistency-preflight`` in a session that uses only the Anthropic route: one minimal request through the
    gateway, then the tasks; the OpenAI route, unused and unconfigured, is not what it checks."""
    pytester.makepyfile(test_agent=TASK.format(n=2))
    result = run(pytester, "off", f"--consistency-anthropic-model={MODEL}", "--consistency-preflight")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert (len(claude.preflights), len(claude.requests)) == (1, 2)  # the preflight, then the two repetitions
    assert report(pytester)["summary"]["run"]["preflight"] == "ok"


def test_a_stream_through_the_gateway_keeps_model_and_tokens(
    pytester: pytest.Pytester, claude: FakeAnthropic, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The other variable: ANTHROPIC_API_KEY is sent as x-api-key, which LiteLLM accepts as well as a bearer token.
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN")
    monkeypatch.setenv("ANTHROPIC_API_KEY", MASTER_KEY)
    claude.script(Step(text="alice liddell", cache_read_input_tokens=5), Step(text="alice liddell"))
    pytester.makepyfile(test_agent=STREAM_TASK.format(n=2))
    recorded = run(pytester, "once", f"--consistency-anthropic-model={MODEL}")
    assert recorded.ret == 0, recorded.stdout.str()
    assert [r["body"]["stream"] for r in claude.requests] == [True, True]
    live = calls(pytester)
    task = report(pytester)["tasks"][0]
    assert task["answers"] == [{"text": "alice liddell", "model": MODEL, "usage": [4, 2]}] * 2
    for call in live:
        assert call["stream"] and call["provider"] == "anthropic" and call["status"] == 200
        assert call["key_fingerprint"] == fingerprint(MASTER_KEY)
        assert call["model_served"] == MODEL
        assert call["prompt_tokens"] == 4  # message_start, as passed through by the gateway
        assert call["completion_tokens"] == 2  # message_delta
        assert not call["tokens_estimated"]
        assert call["gateway"]["x-litellm-model-id"] == "claude-direct"
        assert call["gateway"]["x-litellm-model-api-base"] == claude.base_url  # sent on streams only
    assert (live[0]["cache_read_tokens"], live[0]["total_tokens"]) == (5, 4 + 2 + 5)
    assert (live[1]["cache_read_tokens"], live[1]["total_tokens"]) == (0, 4 + 2)
    assert task["drift"]["kinds"] == []

    # On a stream LiteLLM forwards every upstream header, prefixed llm_provider-: the cookie must not stay.
    text = written(pytester, recorded)
    for secret in (MASTER_KEY, GOOD_KEY, "cookie-secret-value"):
        assert secret not in text, secret

    claude.reset()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replayed = run(pytester, "none", f"--consistency-anthropic-model={MODEL}")
    assert replayed.ret == 0, replayed.stdout.str()
    assert claude.requests == []
    again = calls(pytester)
    keep = ("model_served", "prompt_tokens", "completion_tokens", "cache_read_tokens", "total_tokens", "gateway")
    assert all(c["replayed"] and c["stream"] for c in again)
    assert [{k: c[k] for k in keep} for c in again] == [{k: c[k] for k in keep} for c in live]
    assert report(pytester)["tasks"][0]["answers"] == task["answers"]


def test_the_upstream_account_a_stream_names_never_reaches_a_cassette(
    pytester: pytest.Pytester, claude: FakeAnthropic
) -> None:
    """A streamed answer through LiteLLM carries the upstream's ``anthropic-organization-id`` as
    ``llm_provider-anthropic-organization-id``: the account, as sensitive as ``openai-organization``, which the
    cassettes never keep."""
    pytester.makepyfile(test_agent=STREAM_TASK.format(n=1))
    assert run(pytester, "once", f"--consistency-anthropic-model={MODEL}").ret == 0
    assert claude.requests and calls(pytester)[0]["stream"]
    cassettes = "\n".join(p.read_text() for p in (pytester.path / "cassettes").rglob("*.yaml"))
    assert "llm_provider-" in cassettes  # the upstream's headers were forwarded and recorded...
    assert "org-secret-organization" not in cassettes  # ...but not the account they name


def test_an_overloaded_upstream_reaches_the_agent_as_a_500_and_is_route_drift(
    pytester: pytest.Pytester, claude: FakeAnthropic
) -> None:
    claude.script(Step(text="alice"), Step(status=529, retry_after="0"), Step(text="alice"), Step(text="alice"))
    pytester.makepyfile(test_agent=TASK.format(n=3))
    result = run(
        pytester,
        "off",
        f"--consistency-anthropic-model={MODEL}",
        "--consistency-max-retries=1",
        "--consistency-retries-max=0",
        "--route-drift-max=0",
    )
    assert result.ret == 1
    assert len(claude.requests) == 4  # the gateway did not retry on its own (num_retries: 0)
    seen = calls(pytester)
    assert [(c["status"], c["retry_index"]) for c in seen] == [(200, 0), (500, 0), (200, 1), (200, 0)]
    failed = seen[1]
    # The 529 overloaded_error became a 500 api_error; the upstream's retry-after did not come through.
    assert failed["gateway"] == {"x-litellm-model-id": "claude-direct"}
    assert failed["rate_limit"] == {}
    task = report(pytester)["tasks"][0]
    assert task["answers"] == ["alice"] * 3
    assert task["drift"]["errors"] == {"5xx": 1}
    assert task["drift"]["kinds"] == ["retries", "errors"]
    result.stdout.fnmatch_lines(["*errors: 5xx x1*"])


def test_a_retry_inside_the_gateway_is_route_drift_though_every_call_succeeded(
    pytester: pytest.Pytester, claude: FakeAnthropic
) -> None:
    claude.script(Step(status=529, retry_after="0"), Step(text="alice"), Step(text="alice"))
    pytester.makepyfile(test_agent=TASK.format(n=2))
    result = run(
        pytester,
        "off",
        "--consistency-anthropic-model=claude-retry",
        "--consistency-retries-max=0",
        "--route-drift-max=0",
    )
    assert result.ret == 1
    assert len(claude.requests) == 3  # the 529 was retried by the gateway...
    seen = calls(pytester)
    assert [(c["status"], c["retry_index"]) for c in seen] == [(200, 0), (200, 0)]  # ...out of the agent's sight
    assert [c["gateway"]["x-litellm-attempted-retries"] for c in seen] == ["1", "0"]
    assert {c["model_served"] for c in seen} == {"claude-retry"}
    drift = report(pytester)["tasks"][0]["drift"]
    assert drift["kinds"] == ["retries"] and drift["errors"] == {}
    result.stdout.fnmatch_lines(["*gateway retries: 1 > allowed 0*"])


def test_two_deployments_behind_one_alias_are_route_drift(pytester: pytest.Pytester, claude: FakeAnthropic) -> None:
    pytester.makepyfile(test_agent=TASK.format(n=20))  # both deployments used: 1 - 2 * 2**-20
    result = run(pytester, "off", "--consistency-anthropic-model=claude-pair", "--route-drift-max=0")
    assert result.ret == 1
    assert {r["body"]["model"] for r in claude.requests} == {MODEL}
    task = report(pytester)["tasks"][0]
    seen = [c for r in task["repetitions"] for c in r["calls"]]
    assert {c["model_served"] for c in seen} == {"claude-pair"}  # the body names the alias...
    assert {c["gateway"]["x-litellm-model-id"] for c in seen} == set(ANTHROPIC_DEPLOYMENTS["claude-pair"])
    assert task["drift"]["kinds"] == ["deployment"]  # ...the deployment header does not hide the switch
    result.stdout.fnmatch_lines(["*gateway deployment: 2 different (x-litellm-model-id)*"])


@pytest.mark.parametrize(
    ("suite", "kinds"),
    [
        (TASK, ["model_served", "deployment", "fallback"]),
        # A stream's message_start names the alias even after a fallback: only the headers tell.
        (STREAM_TASK, ["deployment", "fallback"]),
    ],
    ids=["json", "stream"],
)
def test_a_fallback_after_an_overloaded_primary_is_route_drift(
    pytester: pytest.Pytester, claude: FakeAnthropic, suite: str, kinds: list[str]
) -> None:
    claude.script(Step(status=529, retry_after="0"), Step(text="alice"), Step(text="alice"))
    pytester.makepyfile(test_agent=suite.format(n=2))
    result = run(pytester, "off", "--consistency-anthropic-model=claude-primary", "--route-drift-max=0")
    assert result.ret == 1
    assert [r["body"]["model"] for r in claude.requests] == [
        "claude-primary-model",  # 529
        "claude-backup-model",
        "claude-primary-model",
    ]
    seen = calls(pytester)
    assert [c["status"] for c in seen] == [200, 200]
    assert [c["gateway"]["x-litellm-model-id"] for c in seen] == ["claude-backup", "claude-primary"]
    assert [c["gateway"]["x-litellm-attempted-fallbacks"] for c in seen] == ["1", "0"]
    served = [c["model_served"] for c in seen]
    assert served == (["claude-backup-model", "claude-primary"] if suite is TASK else ["claude-primary"] * 2)
    drift = report(pytester)["tasks"][0]["drift"]
    assert drift["kinds"] == kinds and drift["errors"] == {}
    result.stdout.fnmatch_lines(["*gateway fell back 1 time(s)*"])
    assert MASTER_KEY not in result.stdout.str() + json.dumps(report(pytester))
