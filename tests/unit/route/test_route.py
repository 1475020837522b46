"""What a route does to the process environment (route.route): which variables get the stand-in key, and that they are
restored as they were."""

from __future__ import annotations

import os

import pytest

from pytest_consistency.route.route import Route, stand_in_keys, stand_in_variables
from pytest_consistency.secrets.keys import REPLAY_KEY


def test_which_variables_get_the_stand_in_key() -> None:
    """The SDK's variable of each provider, unless the SDK has a credential already (ANTHROPIC_AUTH_TOKEN is one), and
    a route's own key variable; never a variable that is set, and an empty one counts as unset."""
    openai_route = Route("http://127.0.0.1:9/v1", None, None, 60, 1, key_env="AGENT_LLM_KEY")
    claude_route = Route("http://127.0.0.1:9", None, None, 60, 1, provider="anthropic", key_env="ANTHROPIC_API_KEY")
    routes = (openai_route, claude_route)
    assert stand_in_variables(routes, {}) == ("AGENT_LLM_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    assert stand_in_variables(routes, {"OPENAI_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "t"}) == (
        "AGENT_LLM_KEY",
        "OPENAI_API_KEY",
    )
    assert stand_in_variables(routes, {"AGENT_LLM_KEY": "k", "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}) == ()


def test_the_stand_in_key_is_restored_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    with stand_in_keys(("OPENAI_API_KEY", "ANTHROPIC_API_KEY")) as filled:
        assert filled == ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
        assert os.environ["OPENAI_API_KEY"] == os.environ["ANTHROPIC_API_KEY"] == REPLAY_KEY
    assert "OPENAI_API_KEY" not in os.environ and os.environ["ANTHROPIC_API_KEY"] == ""
    with stand_in_keys(("OPENAI_API_KEY",)):
        os.environ["OPENAI_API_KEY"] = "the agent set its own"  # left as the agent set it
    assert os.environ["OPENAI_API_KEY"] == "the agent set its own"
