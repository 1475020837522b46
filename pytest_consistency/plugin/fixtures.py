"""The fixtures a test receives: ``consistency`` (the repetition's handle) and the route-pinned clients. This
module's :class:`Fixtures` is registered as a plugin under ``consistency-fixtures`` in every session (a test may ask
for them by name), before the plugin wakes (``dormant``): so it loads nothing else of the plugin; the handle's
module loads when a test first asks for the handle, the clients' machinery when a test first asks for a client.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_consistency.plugin.defaults import DEFAULTS

if TYPE_CHECKING:
    from pytest_consistency.capture.active import Consistency
    from pytest_consistency.plugin.state import PluginState
    from pytest_consistency.route.route import Route

NAME = "consistency-fixtures"
#: The fixtures of each route (the agent's of each provider, the judge's: ``route.route.ROUTE_NAMES``): a session
#: that uses one needs that route to be usable.
ROUTE_FIXTURES = {
    "openai": frozenset({"pinned_route", "pinned_client", "async_pinned_client"}),
    "anthropic": frozenset({"pinned_anthropic_route", "pinned_anthropic_client", "async_pinned_anthropic_client"}),
    # Two fixtures, no more: each fixture of this role costs every pytest start about 0.5 M instructions, the plugin
    # asleep too (docs/performance.md). An async judge: ``consistency.judging()`` around a client of your own.
    "judge": frozenset({"judge_client"}),
    "anthropic_judge": frozenset({"anthropic_judge_client"}),
}
#: A test that names one of these needs the plugin awake before it runs (``dormant``).
WAKING = frozenset({"consistency"}).union(*ROUTE_FIXTURES.values())


class Fixtures:
    """The fixtures, as methods of the role registered under ``consistency-fixtures``: bound to the config, none of
    them asks for ``request`` or ``pytestconfig``. A fixture that does makes pytest build a fixture definition for
    ``request`` two or three times per test it serves (with the signature of each); for ``consistency``, that was
    the largest single cost a repetition paid beyond pytest-repeat's (``tests/integration/costs``)."""

    #: Set on the class made for each config (:meth:`for_config`): the session-scoped fixtures are class methods
    #: (pytest 9.2 deprecates session-scoped fixtures that are instance methods) and read them from there. The state
    #: is bound when the plugin wakes (:meth:`bind`); a fixture asked for before calls ``awaken`` first.
    config: pytest.Config
    state: PluginState | None = None
    awaken: Callable[[pytest.Config], None]

    @classmethod
    def for_config(cls, config: pytest.Config, awaken: Callable[[pytest.Config], None]) -> Fixtures:
        """The role of one config: an instance of a class of its own, so that two sessions in one process (an
        inline pytester run inside a test) never share it."""
        made: type[Fixtures] = type(cls.__name__, (cls,), {"config": config, "awaken": staticmethod(awaken)})
        return made()

    @classmethod
    def bind(cls, state: PluginState) -> None:
        """The session's state, once the plugin woke (``configure``)."""
        cls.state = state

    @classmethod
    def awake(cls) -> PluginState:
        """The session's state, waking the plugin first if it still sleeps."""
        if cls.state is None:
            cls.awaken(cls.config)
        assert cls.state is not None, "the plugin woke without binding its state"
        return cls.state

    @pytest.fixture
    def _consistency_repetition(self) -> None:
        """The repetitions' parameter (``metafunc.parametrize(..., indirect=True)`` needs a fixture by its name);
        the repetition's number is read from ``item.callspec``, so the fixture gives nothing."""

    @pytest.fixture
    def consistency(self) -> Consistency:
        """Handle of the current repetition: ``record(answer)``, ``cost(usd)``, ``repeat``, ``n``, ``task_id``,
        ``calls``.

        A plain fixture (no teardown of its own): the repetition scope deactivates an unmarked test's handle when
        the test's protocol ends (``lifecycle``)."""
        from pytest_consistency.capture.active import ActiveRepetition, Consistency, activate

        state = self.state
        if state is None:  # asked for by name in a session the plugin slept through so far
            state = self.awake()
        node = state.item or self.setting_up()
        tracked = state.items.get(node)
        active = None if tracked is None else tracked.active
        if active is None:  # an unmarked test: a repetition of one, active while the test uses the handle
            active = state.track(node).active = ActiveRepetition(task_id=node.nodeid, repeat=1, n=1, marked=False)
            activate(active)
        if state.normalize is None:  # conftests register before the first test runs: read once
            state.normalize = normalizer(self.config)
        return Consistency(active, state.normalize, state.ledger)

    def setting_up(self) -> pytest.Item:
        """The item being set up when the repetition roles do not track it: a session where no collected test is
        marked or names ``consistency``, and one asks for it with ``request.getfixturevalue``. The roles are
        registered from here on, so that this test's teardown deactivates its handle and later tests are tracked."""
        from pytest_consistency.plugin.runtime import register

        register(self.config)
        session = self.config.pluginmanager.get_plugin("session")
        stack = getattr(getattr(session, "_setupstate", None), "stack", {})
        for node in reversed(list(stack)):
            if isinstance(node, pytest.Item):
                return node
        raise pytest.UsageError("the consistency fixture is only available to a test (it was asked for outside one)")

    @pytest.fixture(scope="session")
    @classmethod
    def pinned_route(cls) -> Route:
        """The session's OpenAI route (base URL, model, key fingerprint, timeout, retries); ``api_key`` is never
        shown."""
        return _route(cls.awake(), "openai")

    @pytest.fixture
    def pinned_client(self, pinned_route: Route) -> Iterator[Any]:
        """``openai.OpenAI`` on the pinned route; every HTTP attempt is recorded on the current repetition."""
        client = _client(self.awake(), pinned_route, is_async=False)
        yield client
        client.close()

    @pytest.fixture
    def async_pinned_client(self, pinned_route: Route) -> Any:
        """``openai.AsyncOpenAI`` on the pinned route.

        A plain (sync) fixture, so it works under pytest-asyncio's strict mode and anyio alike; its connections
        belong to the test's event loop, which is gone at teardown, so it is left to the garbage collector.
        """
        return _client(self.awake(), pinned_route, is_async=True)

    @pytest.fixture(scope="session")
    @classmethod
    def pinned_anthropic_route(cls) -> Route:
        """The session's Anthropic route (ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN or ANTHROPIC_API_KEY,
        ANTHROPIC_MODEL, or their options)."""
        return _route(cls.awake(), "anthropic")

    @pytest.fixture
    def pinned_anthropic_client(self, pinned_anthropic_route: Route) -> Iterator[Any]:
        """``anthropic.Anthropic`` on the pinned Anthropic route; every HTTP attempt is recorded like the OpenAI
        client's."""
        client = _client(self.awake(), pinned_anthropic_route, is_async=False)
        yield client
        client.close()

    @pytest.fixture
    def async_pinned_anthropic_client(self, pinned_anthropic_route: Route) -> Any:
        """``anthropic.AsyncAnthropic`` on the pinned Anthropic route (a sync fixture, as ``async_pinned_client``)."""
        return _client(self.awake(), pinned_anthropic_route, is_async=True)

    @pytest.fixture
    def judge_client(self) -> Iterator[Any]:
        """``openai.OpenAI`` on the judge's route (``--consistency-judge``, YAML ``judge:``; what it leaves unset is
        the agent route's): every call it makes is recorded with the role ``judge`` (in the repetition's cassette),
        and is no part of route drift or the causes."""
        state = self.awake()
        client = _client(state, _route(state, "judge"), is_async=False)
        yield client
        client.close()

    @pytest.fixture
    def anthropic_judge_client(self) -> Iterator[Any]:
        """``anthropic.Anthropic`` on the judge's Anthropic route (the ``judge:`` options over the Anthropic route's);
        its calls are the judge's, as ``judge_client``'s."""
        state = self.awake()
        client = _client(state, _route(state, "anthropic_judge"), is_async=False)
        yield client
        client.close()


def normalizer(config: pytest.Config) -> Callable[[Any, str], Any]:
    """How ``record`` normalises an answer: the documented default called directly when it is the only
    implementation of ``pytest_consistency_normalize_answer`` (no conftest hook, no wrapper), else the hook."""
    hook = config.hook.pytest_consistency_normalize_answer
    impls = hook.get_hookimpls()
    if len(impls) == 1 and impls[0].plugin_name == DEFAULTS:
        from pytest_consistency.analysis.answers import default_normalize

        return lambda answer, task_id: default_normalize(answer)
    return lambda answer, task_id: hook(answer=answer, task_id=task_id)


def _route(state: PluginState, name: str) -> Route:
    route = state.routes[name]
    if route.problems:
        pytest.fail(route.error_message(), pytrace=False)
    return route


def _client(state: PluginState, route: Route, is_async: bool) -> Any:
    from pytest_consistency.capture.clients import (
        build_client,  # the clients' transports: only for a session that builds a client
    )

    return build_client(
        route,
        state.ledger,
        is_async=is_async,
        provider=state.providers[route.provider],
        throttle=state.throttles.get(route.provider),
    )
