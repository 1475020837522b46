"""A log record redacted in every field a formatter reads (``secrets.records``), and left alone without a secret."""

from __future__ import annotations

import logging
import sys

from pytest_consistency.secrets.literals import redactor
from pytest_consistency.secrets.records import redact_record

KEY = "sk-live-0123456789abcdefghij"
REDACT = redactor([KEY], shapes=False)
FORMAT = "%(levelname)s %(name)s %(message)s %(credential)s %(settings)s"


def record(msg: str, *args: object, exc: bool = False, **extra: object) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise RuntimeError(f"refused {KEY}")
        except RuntimeError:
            exc_info = sys.exc_info()
    made = logging.LogRecord("agent", logging.INFO, __file__, 1, msg, args or None, exc_info, sinfo=f"Stack: {KEY}")
    made.__dict__.update({"credential": "-", "settings": "-", **extra})
    return made


def formatted(made: logging.LogRecord) -> str:
    return logging.Formatter(FORMAT).format(made)


def test_every_field_a_formatter_reads_is_redacted() -> None:
    made = record("key %s in %r", KEY, {"api_key": KEY}, exc=True, credential=KEY, settings={"key": KEY})
    assert KEY in formatted(record("key %s", KEY, exc=True, credential=KEY))  # the attack, unfiltered
    redact_record(made, REDACT)
    text = formatted(made)
    assert KEY not in text and "<redacted>" in text, text
    assert "RuntimeError" in text and "Stack:" in text  # the exception and the stack are still shown
    assert made.exc_info is not None  # the exception object is the code's own


def test_a_record_without_a_secret_keeps_its_arguments() -> None:
    made = record("%d calls to %s", 3, "chat")
    redact_record(made, REDACT)
    assert made.args == (3, "chat") and made.msg == "%d calls to %s"
