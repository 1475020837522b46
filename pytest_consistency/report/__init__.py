"""Report formats: one module per format, each a pure rendering of the typed session result.

Every format implements :class:`Format`: a ``name``, the file ``suffix`` it is usually written to, and
``render(summary) -> str``. The built-in family is :data:`BUILTIN` (terminal, JSON, Markdown, HTML, JUnit XML); a
session picks renderers by name through the firstresult hook ``pytest_consistency_report_format`` (whose default,
registered trylast, is :func:`builtin`), so a conftest can replace one or add its own and select it with
``--consistency-output NAME=FILE``. The ``pytest-consistency show --format`` command uses the built-ins directly.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the plugin names this package at import; the result model is needed only at the session end
    from pytest_consistency.model.result import SessionSummary

#: Built-in format name -> module (each module defines ``FORMAT``); imported on first use.
BUILTIN = {
    "terminal": "terminal",
    "json": "json_report",
    "markdown": "markdown",
    "html": "html",
    "junit": "junit",
}


class Format(Protocol):
    """A report format: renders a whole session result as one text."""

    name: str
    suffix: str

    def render(self, summary: SessionSummary) -> str: ...


class UnknownFormat(ValueError):
    """No format of that name: neither built in nor provided by a ``pytest_consistency_report_format`` hook."""


def builtin(name: str) -> Format | None:
    """The built-in format called ``name``, or None."""
    module = BUILTIN.get(name)
    if module is None:
        return None
    fmt: Format = import_module(f".{module}", __name__).FORMAT
    return fmt
