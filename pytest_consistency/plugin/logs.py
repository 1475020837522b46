"""pytest's own logs redacted: every handler pytest's logging plugin installs sees records without the session's
secrets, from the first record of the session.

pytest writes a record as it is emitted: to ``log_file``, to live logging (``log_cli``), into ``caplog`` and into
the report's captured-log section (its ``report_handler``); what the plugin redacts in the reports afterwards
(``redaction``) comes too late for the first two. So a :class:`RedactingFilter` sits on each of those
handlers (added when pytest registers its logging plugin, ``attach``), and on Python's last-resort handler, which
prints what is logged before pytest's handlers are in place (a conftest's ``pytest_configure``, or its import),
from the moment the initial conftests load (``install``).

What is redacted: before the session is configured, the values of the SDKs' key variables (``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``); from then on, every secret the session knows at the time the
record is emitted (``redaction.known_secrets``: the routes' keys, their variables, and every credential a
repetition sent on the wire so far). A credential first sent later cannot be taken out of a line already written.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_consistency.plugin.state import PluginState

#: The handlers of pytest's logging plugin (``_pytest.logging.LoggingPlugin``) that receive records.
HANDLERS = ("log_file_handler", "log_cli_handler", "caplog_handler", "report_handler")
#: Where an SDK reads its key, redacted before the session's routes are known (and, set, a reason for the plugin to
#: wake: ``dormant``).
EARLY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


class RedactingFilter(logging.Filter):
    """Redacts each record (once, however many handlers it reaches) with the redaction ``current()`` gives then
    (``secrets.records.redact_record``). Defined here, with the redaction loaded at the first record: every session
    installs it (:func:`install`), one the plugin never wakes for too."""

    def __init__(self, current: Callable[[], Callable[[str], str]]) -> None:
        super().__init__()
        self.current = current

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "_consistency_redacted", False):
            from pytest_consistency.secrets.records import redact_record

            redact_record(record, self.current())
            record._consistency_redacted = True
        return True


_FILTER: pytest.StashKey[RedactingFilter] = pytest.StashKey()
_SECRETS: pytest.StashKey[Secrets] = pytest.StashKey()


def install(config: pytest.Config) -> None:
    """The filter for this session, on the last-resort handler from now on (``uninstall`` takes it off). Every
    session installs it, one the plugin never wakes for too: this module loads nothing else of the plugin until a
    record arrives."""
    if _FILTER in config.stash:
        return
    secrets = config.stash[_SECRETS] = Secrets(config)
    found = config.stash[_FILTER] = RedactingFilter(secrets)
    last = logging.lastResort
    if last is not None:
        last.addFilter(found)


def bind(config: pytest.Config, state: PluginState) -> None:
    """The session's state, once the plugin woke (``configure``): the filter redacts what the session knows."""
    install(config)
    config.stash[_SECRETS].state = state


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
        #: The session's state, once the plugin woke (:func:`bind`).
        self.state: PluginState | None = None
        self.key: tuple[int, int] | None = None
        self.redact: Callable[[str], str] = str

    def __call__(self) -> Callable[[str], str]:
        state = self.state
        key = (-1, 0) if state is None else (1, len(state.seen_secrets))
        if key != self.key:
            from pytest_consistency.secrets.literals import redactor

            self.key, self.redact = key, redactor(self.secrets(), shapes=False)
        return self.redact

    def secrets(self) -> list[str]:
        state = self.state
        if state is None:
            from pytest_consistency.plugin.redaction import is_secret_value

            values = (os.environ.get(name) for name in EARLY_VARIABLES)
            return [value for value in values if value and is_secret_value(value)]
        from pytest_consistency.plugin.redaction import known_secrets

        return known_secrets(state)
