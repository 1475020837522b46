"""The secrets a session knows, gathered where they are seen and carried to the process that writes the outputs.

Every output (the JSON report, the HTML page, the Markdown summary, the JUnit XML, the terminal, pytest's own
failure text) is redacted with the same list: every route's key and the variables it may come from
(``OPENAI_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, ``ANTHROPIC_API_KEY``, a configured one), and every credential a
repetition sent on the wire (a gateway's ``helicone-auth: Bearer ...``, a basic-auth password, a query key, a form's
``client_secret``). Those are seen by the process that ran the repetition; under xdist that is a worker, so each
worker hands its list to the controller when it finishes (``workeroutput``, in memory: never in a report, where
``pytest-reportlog`` would write it).

A failing repetition's text is redacted in the process that ran it, before pytest prints, serialises or writes it
(see ``failure_text``): the worker knows what it sent, the controller only receives the redacted report.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from .failure_text import has_text, redact_report
from .keys import REPLAY_KEY, is_placeholder
from .redact import redactor
from .state import ACTIVE, STATE, is_worker

if TYPE_CHECKING:
    from .providers import Provider
    from .route import Route
    from .state import PluginState

#: The ``workeroutput`` entry that carries a worker's secrets to the controller.
WORKER_KEY = "consistency_known_secrets"


def is_secret_value(value: str | None) -> bool:
    """A value worth redacting: not empty, not our own replay placeholder, not a documentation placeholder."""
    return bool(value and value.strip()) and value != REPLAY_KEY and not is_placeholder(str(value))


def route_secrets(routes: Iterable[Route], providers: Mapping[str, Provider], env: Mapping[str, str]) -> list[str]:
    """Every route's key, and the value of every variable a key of its provider may come from (replay-only mode
    uses none of them, but a CI job may still export a real one)."""
    found: list[str] = []
    for route in routes:
        if route.api_key and not route.replay_only:
            found.append(route.api_key)
        provider = providers.get(route.provider)
        names = {route.key_env, *(provider.key_envs if provider is not None else ())}
        for name in sorted(names):
            value = env.get(name)
            if value:
                found += [value, value.strip()]
    return sorted({value for value in found if is_secret_value(value)})


def known_secrets(state: PluginState) -> list[str]:
    """The secrets of this process: the routes' keys and every credential seen on the wire (with xdist, the
    controller's list includes each finished worker's)."""
    return sorted(set(route_secrets(state.routes.values(), state.providers, os.environ)) | state.seen_secrets)


def remember(state: PluginState, secrets: Iterable[str]) -> None:
    state.seen_secrets.update(value for value in secrets if is_secret_value(value))


class SecretsHooks:
    """Gathers the credentials each repetition sent, redacts every report before pytest uses it, and carries the
    worker's secrets to the controller."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.routes: list[str] | None = None

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        """Outermost, so it sees what every other wrapper made of the report (the replay-mismatch text too)."""
        report = yield
        state = self.config.stash[STATE]
        active = item.stash.get(ACTIVE, None)
        if active is not None and active.secrets:
            remember(state, active.secrets)
        if has_text(report):  # most reports have none: a passing phase with nothing captured
            # A repetition's text gets credential shapes redacted too; any other test's only the session's secrets.
            redact_report(report, self.redactor(shapes=active is not None))
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_warning_recorded(self, warning_message: Any) -> None:
        """A warning's text, before the terminal's summary (or xdist, for the controller's) reads it."""
        redact = self.redactor(shapes=False)
        message = warning_message.message
        if isinstance(message, str):
            warning_message.message = redact(message)
        elif isinstance(message, Warning) and any(isinstance(arg, str) for arg in message.args):
            message.args = tuple(redact(arg) if isinstance(arg, str) else arg for arg in message.args)

    def redactor(self, shapes: bool) -> Callable[[str], str]:
        state = self.config.stash[STATE]
        if self.routes is None:  # the routes never change during a session
            self.routes = route_secrets(state.routes.values(), state.providers, os.environ)
        return redactor([*self.routes, *state.seen_secrets], shapes=shapes)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if is_worker(self.config):
            state = self.config.stash[STATE]
            self.config.workeroutput[WORKER_KEY] = sorted(state.seen_secrets)  # type: ignore[attr-defined]

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        remember(self.config.stash[STATE], output.get(WORKER_KEY, ()))
