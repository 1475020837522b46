"""Log records redacted before any handler formats them (the plugin's ``logging.Filter`` on the handlers that write
text, ``plugin.logs.RedactingFilter``, calls :func:`redact_record`).

Why a filter that rewrites the record, and not a formatter: a handler's formatter is the user's choice (pytest's
``log_format``, ``log_file_format``, ``log_cli_format``), and every one of them formats from the record's fields. So
the fields are made clean: the message as formatted (``msg % args``: the key passed as an argument is as much in the
text as one written into the message), the exception's text (formatted once, as ``logging.Formatter`` would, and
kept in ``exc_text``, which every formatter uses before formatting the exception again), the stack, and every other
attribute a format could name (``extra={...}`` values, a logger or thread name). A record that holds no secret is
left untouched, so ``caplog.records`` keep their ``args``; one that does loses them (its message is the redacted
text). The exception object itself (``exc_info``) is left as the code raised it: it is no text until formatted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

#: The fields handled one by one below, and those that are never text.
_OWN = frozenset({"msg", "args", "exc_info", "exc_text", "stack_info", "_consistency_redacted"})
_NUMBERS = frozenset(
    {"levelno", "lineno", "created", "msecs", "relativeCreated", "thread", "process", "taskName", "asctime"}
)


def redact_record(record: logging.LogRecord, redact: Callable[[str], str]) -> None:
    """Rewrite ``record`` in place so that no field a formatter reads holds a secret ``redact`` replaces."""
    try:
        message = record.getMessage()
    except Exception:  # a record that cannot be formatted: logging reports it, with what the call passed
        message = None
    if message is not None:
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
    if record.exc_info and not record.exc_text:
        text = logging.Formatter().formatException(record.exc_info)
        clean = redact(text)
        if clean != text:
            record.exc_text = clean
    elif record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    fields = vars(record)
    for name, value in list(fields.items()):
        if name in _OWN or name in _NUMBERS or value is None:
            continue
        if isinstance(value, str):
            clean = redact(value)
        else:  # an extra of another type: a format shows it as str(value)
            try:
                text = str(value)
            except Exception:
                continue
            clean = redact(text)
            if clean == text:
                continue
        if clean != value:
            fields[name] = clean
