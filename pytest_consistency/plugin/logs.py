"""pytest's own logs redacted: every handler pytest's logging plugin installs sees records without the session's
secrets, from the first record of the session.

pytest writes a record as it is emitted: to ``log_file``, to live logging (``log_cli``), into ``caplog`` and into
the report's captured-log section (its ``report_handler``); what the plugin redacts in the reports afterwards
(``secrets``) comes too late for the first two. So a ``secrets.records.RedactingFilter`` sits on each of those
handlers (added when pytest registers its logging plugin, ``attach``), and on Python's last-resort handler, which
prints what is logged before pytest's handlers are in place (a conftest's ``pytest_configure``, or its import),
from the moment the initial conftests load (``install``).

What is redacted: before the session is configured, the values of the SDKs' key variables (``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``); from then on, every secret the session knows at the time the
record is emitted (``secrets.known_secrets``: the routes' keys, their variables, and every credential a
repetition sent on the wire so far). A credential first sent later cannot be taken out of a line already written.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

import pytest

from pytest_consistency.plugin.state import STATE
from pytest_consistency.secrets.literals import redactor
from pytest_consistency.secrets.records import RedactingFilter

#: The handlers of pytest's logging plugin (``_pytest.logging.LoggingPlugin``) that receive records.
HANDLERS = ("log_file_handler", "log_cli_handler", "caplog_handler", "report_handler")
#: Where an SDK reads its key, redacted before the session's routes are known.
EARLY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
_FILTER = pytest.StashKey[RedactingFilter]()


def install(config: pytest.Config) -> None:
    """The filter for this session, on the last-resort handler from now on (``uninstall`` takes it off)."""
    if _FILTER in config.stash:
        return
    found = config.stash[_FILTER] = RedactingFilter(Secrets(config))
    last = logging.lastResort
    if last is not None:
        last.addFilter(found)


def attach(config: pytest.Config, plugin: object) -> None:
    """Put the session's filter on each handler of pytest's logging plugin ``plugin``."""
    install(config)
    found = config.stash[_FILTER]
    for name in HANDLERS:
        handler = getattr(plugin, name, None)
        if isinstance(handler, logging.Handler) and found not in handler.filters:
            handler.addFilter(found)


class LogRedaction:
    """Puts the filter on pytest's logging plugin when pytest registers it (after the plugin's configure, or before:
    ``pytest_plugin_registered`` is historic). Registered as ``consistency-logs``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_plugin_registered(self, plugin: object, manager: pytest.PytestPluginManager) -> None:
        if manager.get_name(plugin) == "logging-plugin":
            attach(self.config, plugin)


def uninstall(config: pytest.Config) -> None:
    found = config.stash.get(_FILTER, None)
    last = logging.lastResort
    if found is not None and last is not None:
        last.removeFilter(found)


class Secrets:
    """The redaction of the moment: rebuilt only when the list of secrets has changed (a new one seen)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.key: tuple[int, int] | None = None
        self.redact: Callable[[str], str] = str

    def __call__(self) -> Callable[[str], str]:
        state = self.config.stash.get(STATE, None)
        key = (-1, 0) if state is None else (1, len(state.seen_secrets))
        if key != self.key:
            self.key, self.redact = key, redactor(self.secrets(), shapes=False)
        return self.redact

    def secrets(self) -> list[str]:
        state = self.config.stash.get(STATE, None)
        if state is None:
            from pytest_consistency.plugin.secrets import is_secret_value

            values = (os.environ.get(name) for name in EARLY_VARIABLES)
            return [value for value in values if value and is_secret_value(value)]
        from pytest_consistency.plugin.secrets import known_secrets

        return known_secrets(state)
