"""The route doctor's cross-route checks, on resolved routes (pure)."""

from __future__ import annotations

from pytest_consistency.route.doctor import cross_route_problems
from pytest_consistency.route.route import Route
from pytest_consistency.secrets.keys import REPLAY_KEY

ANT_KEY = "sk-ant-api03-" + "a" * 40
OPENAI_KEY = "sk-proj-" + "b" * 40
GATEWAY_KEY = "sk-1234"


def route(provider: str, base_url: str, key: str | None) -> Route:
    env = "OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"
    return Route(base_url, key, None, 60, 1, key_env=env, provider=provider)


def test_an_anthropic_key_under_the_openai_variable_is_refused() -> None:
    found = cross_route_problems({"openai": route("openai", "https://api.openai.com/v1", ANT_KEY)}, False)
    assert "holds an Anthropic key" in found["openai"][0]


def test_an_anthropic_key_to_anthropics_own_openai_compatible_endpoint_is_fine() -> None:
    assert cross_route_problems({"openai": route("openai", "https://api.anthropic.com/v1", ANT_KEY)}, False) == {}


def test_an_openai_key_sent_to_anthropics_api_is_refused_but_a_gateway_key_to_a_gateway_is_not() -> None:
    found = cross_route_problems({"anthropic": route("anthropic", "https://api.anthropic.com", OPENAI_KEY)}, False)
    assert "OpenAI-style key" in found["anthropic"][0]
    routes = {
        "openai": route("openai", "http://gw:4000/v1", GATEWAY_KEY),
        "anthropic": route("anthropic", "http://gw:4000", GATEWAY_KEY),
    }
    assert cross_route_problems(routes, same_gateway=True) == {}


def test_same_gateway_compares_scheme_host_and_port() -> None:
    routes = {
        "openai": route("openai", "http://gw:4000/v1", GATEWAY_KEY),
        "anthropic": route("anthropic", "http://gw:4001", GATEWAY_KEY),
    }
    found = cross_route_problems(routes, same_gateway=True)
    assert set(found) == {"openai", "anthropic"} and "http://gw:4001" in found["openai"][0]
    assert cross_route_problems(routes, same_gateway=False) == {}


def test_replay_only_routes_carry_no_key_to_judge() -> None:
    routes = {
        "openai": route("openai", "https://api.openai.com/v1", REPLAY_KEY),
        "anthropic": route("anthropic", "https://api.anthropic.com", REPLAY_KEY),
    }
    assert cross_route_problems(routes, False) == {}
