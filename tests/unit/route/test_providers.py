"""The built-in providers: base-URL shape per SDK, defaults, and lookup by name."""

from __future__ import annotations

from pytest_consistency.route.providers import BUILTIN, builtin


def test_both_builtins_are_found_by_name_and_unknown_names_are_not() -> None:
    assert sorted(BUILTIN) == ["anthropic", "openai"]
    for name in BUILTIN:
        provider = builtin(name)
        assert provider is not None and provider.name == name
    assert builtin("gemini") is None
