"""What resolving a route checks of its base URL, per provider (route.resolve)."""

from __future__ import annotations

import pytest

from pytest_consistency.route.providers import builtin
from pytest_consistency.route.resolve import base_url_problems


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://api.anthropic.com", None),
        ("https://api.anthropic.com/", None),
        ("http://gw:4000/anthropic", None),
        ("https://api.anthropic.com/v1", "ends in /v1, "),
        ("https://api.anthropic.com/v1/", "ends in /v1, "),
        ("https://api.anthropic.com/v1/messages", "ends in /v1/messages, "),
        ("http://gw:4000/anthropic/v1", "ends in /v1, "),
    ],
)
def test_an_anthropic_base_url_must_not_carry_what_the_sdk_appends(url: str, problem: str | None) -> None:
    found = base_url_problems(url, "$ANTHROPIC_BASE_URL", builtin("anthropic"))
    if problem is None:
        assert found == []
    else:
        fixed = url.rstrip("/").removesuffix("/messages").removesuffix("/v1")
        assert len(found) == 1 and problem in found[0] and found[0].endswith(f"use {fixed}")


def test_an_openai_base_url_needs_its_api_path() -> None:
    assert base_url_problems("http://gw:4000/v1", "x", builtin("openai")) == []
    assert "has no API path" in base_url_problems("http://gw:4000", "x", builtin("openai"))[0]
    assert base_url_problems("http://gw:4000", "x", builtin("anthropic")) == []


def test_a_judge_setting_is_said_to_come_from_the_judges_option() -> None:
    """Where a judge's route setting came from is the judge option's own source (``settings.sources`` is keyed by the
    settings' names), the setting named after it; an agent route's from its own option."""
    from pytest_consistency.config.settings import Settings
    from pytest_consistency.route.resolve import resolve_route

    settings = Settings(
        judge=(("base_url", "http://judge:4000/v1"), ("model", "judge-model")),
        base_url="http://agent:4000/v1",
        sources={"judge": "--consistency-judge", "base_url": "--consistency-base-url"},
    )
    judge = resolve_route(settings, {}, builtin("openai"), role="judge")
    assert (judge.base_url_source, judge.model_source) == (
        "--consistency-judge (base_url)",
        "--consistency-judge (model)",
    )
    agent = resolve_route(settings, {}, builtin("openai"))
    assert agent.base_url_source == "--consistency-base-url"
