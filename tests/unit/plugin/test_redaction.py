"""Which secrets a session knows (``plugin.redaction``): every route's key and every variable a key may come from."""

from __future__ import annotations

from pytest_consistency.plugin.redaction import is_secret_value, route_secrets
from pytest_consistency.route.providers import builtin
from pytest_consistency.route.route import Route

KEY = "sk-test-unit-key-0123456789abcdef"


def route(provider: str, api_key: str | None, key_env: str) -> Route:
    return Route("http://h/v1", api_key, "m", 60.0, 1, key_env=key_env, provider=provider)


def providers() -> dict[str, object]:
    return {name: builtin(name) for name in ("openai", "anthropic")}


def test_every_routes_key_and_every_variable_a_key_may_come_from() -> None:
    routes = [route("openai", KEY, "OPENAI_API_KEY"), route("anthropic", "gw-token-1", "ANTHROPIC_AUTH_TOKEN")]
    env = {"OPENAI_API_KEY": KEY, "ANTHROPIC_AUTH_TOKEN": "gw-token-1", "ANTHROPIC_API_KEY": " sk-ant-other-2 "}
    found = route_secrets(routes, providers(), env)  # type: ignore[arg-type]
    assert found == sorted({KEY, "gw-token-1", " sk-ant-other-2 ", "sk-ant-other-2"})


def test_replay_placeholders_and_documentation_placeholders_are_not_secrets() -> None:
    from pytest_consistency.secrets.keys import REPLAY_KEY

    routes = [route("openai", REPLAY_KEY, "OPENAI_API_KEY")]
    assert route_secrets(routes, providers(), {"OPENAI_API_KEY": "sk-..."}) == []  # type: ignore[arg-type]
    assert not is_secret_value("YOUR_API_KEY") and not is_secret_value("  ") and is_secret_value("sk-1234")
