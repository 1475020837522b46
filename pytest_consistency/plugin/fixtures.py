"""The fixtures a test receives: ``consistency`` (the repetition's handle) and the route-pinned clients. This
module is registered as a plugin under ``consistency-fixtures``; the clients' machinery loads when a test first
asks for a client.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_consistency.capture.active import ActiveRepetition, Consistency, activate, current
from pytest_consistency.plugin.defaults import DEFAULTS
from pytest_consistency.plugin.state import ACTIVE, STATE

if TYPE_CHECKING:
    from pytest_consistency.route.route import Route


@pytest.fixture
def _consistency_repetition(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def consistency(request: pytest.FixtureRequest) -> Iterator[Consistency]:
    """Handle of the current repetition: ``record(answer)``, ``repeat``, ``n``, ``task_id``, ``calls``."""
    node = request.node
    active = node.stash.get(ACTIVE, None)
    own = active is None  # an unmarked test: a repetition of one, active while the test uses the handle
    if active is None:
        active = ActiveRepetition(task_id=node.nodeid, repeat=1, n=1, marked=False)
        node.stash[ACTIVE] = active
        activate(active)
    hook = request.config.hook.pytest_consistency_normalize_answer
    impls = hook.get_hookimpls()
    if len(impls) == 1 and impls[0].plugin_name == DEFAULTS:
        # Only the documented default (no conftest hook, no wrapper): called directly, not through pluggy.
        from pytest_consistency.analysis.answers import default_normalize

        yield Consistency(active, lambda answer, task_id: default_normalize(answer))
    else:
        yield Consistency(active, lambda answer, task_id: hook(answer=answer, task_id=task_id))
    if own and current() is active:
        activate(None)


def _route(config: pytest.Config, name: str) -> Route:
    route = config.stash[STATE].routes[name]
    if route.problems:
        pytest.fail(route.error_message(), pytrace=False)
    return route


def _client(config: pytest.Config, route: Route, is_async: bool) -> Any:
    from pytest_consistency.capture.clients import (
        build_client,  # the clients' transports: only for a session that builds a client
    )

    state = config.stash[STATE]
    return build_client(
        route,
        state.ledger,
        is_async=is_async,
        provider=state.providers[route.provider],
        throttle=state.throttles.get(route.provider),
    )


@pytest.fixture(scope="session")
def pinned_route(pytestconfig: pytest.Config) -> Route:
    """The session's OpenAI route (base URL, model, key fingerprint, timeout, retries); ``api_key`` is never
    shown."""
    return _route(pytestconfig, "openai")


@pytest.fixture
def pinned_client(pinned_route: Route, pytestconfig: pytest.Config) -> Iterator[Any]:
    """``openai.OpenAI`` on the pinned route; every HTTP attempt is recorded on the current repetition."""
    client = _client(pytestconfig, pinned_route, is_async=False)
    yield client
    client.close()


@pytest.fixture
def async_pinned_client(pinned_route: Route, pytestconfig: pytest.Config) -> Any:
    """``openai.AsyncOpenAI`` on the pinned route.

    A plain (sync) fixture, so it works under pytest-asyncio's strict mode and anyio alike; its connections
    belong to the test's event loop, which is gone at teardown, so it is left to the garbage collector.
    """
    return _client(pytestconfig, pinned_route, is_async=True)


@pytest.fixture(scope="session")
def pinned_anthropic_route(pytestconfig: pytest.Config) -> Route:
    """The session's Anthropic route (ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN or ANTHROPIC_API_KEY,
    ANTHROPIC_MODEL, or their options)."""
    return _route(pytestconfig, "anthropic")


@pytest.fixture
def pinned_anthropic_client(pinned_anthropic_route: Route, pytestconfig: pytest.Config) -> Iterator[Any]:
    """``anthropic.Anthropic`` on the pinned Anthropic route; every HTTP attempt is recorded like the OpenAI
    client's."""
    client = _client(pytestconfig, pinned_anthropic_route, is_async=False)
    yield client
    client.close()


@pytest.fixture
def async_pinned_anthropic_client(pinned_anthropic_route: Route, pytestconfig: pytest.Config) -> Any:
    """``anthropic.AsyncAnthropic`` on the pinned Anthropic route (a sync fixture, as ``async_pinned_client``)."""
    return _client(pytestconfig, pinned_anthropic_route, is_async=True)
