"""SDK clients built from a pinned route, with the recording transport inside.

What differs between SDKs (which client class, which HTTP library, how the key is passed) is the provider's
(``providers``); the recording transport, the token budget and the throttle are the same for all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_consistency.capture.transport import recording_transport
from pytest_consistency.route.route import Route
from pytest_consistency.shared.ledger import Ledger

if TYPE_CHECKING:
    from pytest_consistency.route.providers import Provider
    from pytest_consistency.shared.throttle import Throttle


def provider_of(route: Route) -> Provider:
    from pytest_consistency.route.providers import UnknownProvider, builtin

    provider = builtin(route.provider)
    if provider is None:
        raise UnknownProvider(f"no provider called {route.provider!r}")
    return provider


def defaults_of(route: Route, provider: Provider | None = None) -> dict[str, Any]:
    names = (provider or provider_of(route)).defaults
    values = {
        "model": route.model,
        "temperature": route.temperature,
        "seed": route.seed,
        "max_tokens": route.max_tokens,
    }
    return {name: values.get(name) for name in names}


def build_client(
    route: Route,
    ledger: Ledger | None,
    is_async: bool = False,
    api_key: str | None = None,
    provider: Provider | None = None,
    throttle: Throttle | None = None,
) -> Any:
    """The provider's SDK client (``openai.OpenAI``, ``anthropic.Anthropic``, or async) on the route; a judge's
    route makes a client whose calls are the judge's (``CallRecord.role``)."""
    provider = provider or provider_of(route)
    transport = recording_transport(
        provider.http_module(is_async),
        ledger,
        defaults_of(route, provider),
        is_async,
        replay_only=route.replay_only,
        endpoints=provider.sampling_endpoints,
        throttle=throttle,
        role=None if route.role == "agent" else route.role,
    )
    if api_key is not None:
        from dataclasses import replace

        route = replace(route, api_key=api_key)
    return provider.client(route, transport, is_async)
