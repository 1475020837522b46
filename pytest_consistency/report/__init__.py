"""Report formats: one module per format, each a pure rendering of the typed session result.

Every format implements :class:`~pytest_consistency.report.protocol.Format` (:mod:`.protocol`): a ``name``, the file
``suffix`` it is usually written to, and ``render(summary) -> str``. This module is the registry of the built-in
family, :data:`BUILTIN` (terminal, JSON, Markdown, HTML, JUnit XML), each imported on first use. A session picks
renderers by name through the firstresult hook ``pytest_consistency_report_format`` (whose default, registered
trylast, is :func:`builtin`), so a conftest can replace one or add its own and select it with
``--consistency-output NAME=FILE``. The ``pytest-consistency show --format`` command uses the built-ins directly.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the plugin names this package at import: it stays a dictionary and a function until used
    from pytest_consistency.report.protocol import Format

#: Built-in format name -> module (each module defines ``FORMAT``); imported on first use.
BUILTIN = {
    "terminal": "terminal",
    "json": "json_report",
    "markdown": "markdown",
    "html": "html",
    "junit": "junit",
    "otlp-json": "otlp",
}


class UnknownFormat(ValueError):
    """No format of that name: neither built in nor provided by a ``pytest_consistency_report_format`` hook."""


def builtin(name: str) -> Format | None:
    """The built-in format called ``name``, or None."""
    module = BUILTIN.get(name)
    if module is None:
        return None
    fmt: Format = import_module(f".{module}", __name__).FORMAT
    return fmt
