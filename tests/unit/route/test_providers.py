"""The built-in providers: base-URL shape per SDK, defaults, and lookup by name."""

from __future__ import annotations

import pytest

from pytest_consistency.capture.clients import defaults_of
from pytest_consistency.route.providers import BUILTIN, builtin
from pytest_consistency.route.resolve import base_url_problems
from pytest_consistency.route.route import Route


def test_both_builtins_are_found_by_name_and_unknown_names_are_not() -> None:
    assert sorted(BUILTIN) == ["anthropic", "openai"]
    for name in BUILTIN:
        provider = builtin(name)
        assert provider is not None and provider.name == name
    assert builtin("gemini") is None


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


def test_sampling_defaults_follow_what_each_api_accepts() -> None:
    route = Route("http://h/v1", None, "m", 60, 1, temperature=0.0, seed=7, max_tokens=64)
    assert defaults_of(route) == {"model": "m", "temperature": 0.0, "seed": 7, "max_tokens": 64}
    anthropic = Route("http://h", None, "m", 60, 1, temperature=0.0, seed=7, provider="anthropic")
    # the Messages API takes no seed; an unset limit is no default (the transport adds only what is set)
    assert defaults_of(anthropic) == {"model": "m", "temperature": 0.0, "max_tokens": None}
