"""The plugin's log filter (``plugin.logs``): each record redacted once, with the redaction of the moment."""

from __future__ import annotations

import logging
from collections.abc import Callable

from pytest_consistency.plugin.logs import RedactingFilter
from pytest_consistency.secrets.literals import redactor

KEY = "sk-live-0123456789abcdefghij"
REDACT = redactor([KEY], shapes=False)


def record(msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("agent", logging.INFO, __file__, 1, msg, args or None, None)


def test_the_filter_redacts_a_record_once_with_the_redaction_of_the_moment() -> None:
    calls = []

    def current() -> Callable[[str], str]:
        calls.append(1)
        return REDACT

    found = RedactingFilter(current)
    made = record("key %s", KEY)
    assert found.filter(made) and found.filter(made)  # two handlers: redacted once, never dropped
    assert calls == [1] and KEY not in made.getMessage()
