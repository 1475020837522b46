"""Drift per provider: each provider's calls against its own pinned route (pure)."""

from __future__ import annotations

from pytest_consistency.analysis.drift import task_drift
from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.result import PinnedRoute

OPENAI = PinnedRoute("http://gw/v1", "sha256:aaaa", "gpt-x", 1)
ANTHROPIC = PinnedRoute("http://gw", "sha256:bbbb", "claude-x", 1)


def call(provider: str, base_url: str, key: str, model: str, served: str | None = None) -> CallRecord:
    return CallRecord("POST", base_url + "/x", base_url, key, model, served or model, status=200, provider=provider)


def steady() -> list[CallRecord]:
    return [
        call("openai", "http://gw/v1", "sha256:aaaa", "gpt-x"),
        call("anthropic", "http://gw", "sha256:bbbb", "claude-x"),
    ]


def test_two_providers_each_on_its_route_is_no_drift() -> None:
    drift = task_drift([steady(), steady()], OPENAI, others={"anthropic": ANTHROPIC})
    assert drift.kinds == []


def test_an_anthropic_call_off_its_route_is_drift_even_when_openai_is_steady() -> None:
    moved = [steady()[0], call("anthropic", "http://other", "sha256:bbbb", "claude-x")]
    drift = task_drift([steady(), moved], OPENAI, others={"anthropic": ANTHROPIC})
    assert drift.kinds == ["base_url"]
    assert drift.details == ["anthropic base URL: 2 different (http://gw, http://other)"]


def test_a_served_model_change_on_one_provider_is_drift_and_named() -> None:
    changed = [steady()[0], call("anthropic", "http://gw", "sha256:bbbb", "claude-x", served="claude-y")]
    drift = task_drift([steady(), changed], OPENAI, others={"anthropic": ANTHROPIC})
    assert drift.kinds == ["model_served"]
    assert "anthropic model served: 2 different" in drift.details[0]


def test_a_provider_without_a_pinned_route_is_compared_across_repetitions_only() -> None:
    one = [call("anthropic", "http://gw", "sha256:cccc", "claude-x")]
    assert task_drift([one, one], OPENAI).kinds == []
    other_key = [call("anthropic", "http://gw", "sha256:dddd", "claude-x")]
    assert task_drift([one, other_key], OPENAI).kinds == ["key"]


def test_openai_only_sessions_read_as_before() -> None:
    only = [call("openai", "http://gw/v1", "sha256:aaaa", "gpt-x")]
    wrong = [call("openai", "http://gw/v1", "sha256:aaaa", "gpt-y")]
    drift = task_drift([only, wrong], OPENAI)
    assert drift.kinds == ["model_requested", "model_served"]
    assert drift.details[:2] == [
        "model requested: 2 different (gpt-x, gpt-y)",
        "model served: 2 different (gpt-x, gpt-y)",
    ]


def test_an_agent_that_embeds_with_another_model_is_no_drift_and_its_embeddings_are_not_the_pinned_model() -> None:
    """Issue 41: an agent using a chat model and an embedding model read as 100 % route drift (two models
    requested, and the embedding model 'not the pinned gpt-x'). A route is per endpoint kind."""

    def at(path: str, model: str) -> CallRecord:
        url = "http://gw/v1" + path
        return CallRecord("POST", url, "http://gw/v1", "sha256:aaaa", model, model, status=200)

    rep = [at("/chat/completions", "gpt-x"), at("/embeddings", "text-embed"), at("/chat/completions", "gpt-x")]
    assert task_drift([rep, rep], OPENAI).kinds == []
    # the chat calls still answer to the pinned model, and each kind is compared across repetitions with itself
    other_chat = [at("/chat/completions", "gpt-y"), at("/embeddings", "text-embed")]
    drift = task_drift([rep, other_chat], OPENAI)
    assert drift.kinds == ["model_requested", "model_served"]
    assert drift.details[0] == "chat model requested: 2 different (gpt-x, gpt-y)"
    other_embed = [at("/chat/completions", "gpt-x"), at("/embeddings", "text-embed-2")]
    drift = task_drift([rep, other_embed], OPENAI)
    assert drift.details[0] == "embeddings model requested: 2 different (text-embed, text-embed-2)"


def judged(role: str = "judge") -> list[CallRecord]:
    """The steady agent calls, and a judge's call on another gateway, model and key, that needed 3 retries and
    failed once (429)."""
    judge = call("openai", "http://judge/v1", "sha256:cccc", "judge-x")
    judge.role, judge.retry_index = role, 3
    failed = call("openai", "http://judge/v1", "sha256:cccc", "judge-x")
    failed.role, failed.status = role, 429
    return [*steady(), judge, failed]


def test_a_judges_calls_on_their_own_route_are_no_drift_of_the_agent() -> None:
    drift = task_drift([steady(), judged()], OPENAI, others={"anthropic": ANTHROPIC})
    assert drift.kinds == [] and drift.errors == {}
    # counted all the same: they are calls the session made, with tokens
    assert drift.calls == 6 and drift.retries == 1
    assert drift.tokens_per_repetition == [0, 0]


def test_a_simulated_users_calls_are_no_drift_of_the_agent_either() -> None:
    assert task_drift([steady(), judged("user")], OPENAI, others={"anthropic": ANTHROPIC}).kinds == []


def test_the_same_calls_made_by_the_agent_are_drift() -> None:
    drift = task_drift([steady(), judged("agent")], OPENAI, others={"anthropic": ANTHROPIC})
    assert {"base_url", "key", "model_requested", "retries", "errors"} <= set(drift.kinds)
