"""Text every output can encode: a lone surrogate is shown as its escape (``\\udcff``), never a crash.

``os.fsdecode`` turns a file name's bytes that are not UTF-8 into lone surrogates (``"\\udcff"``), so an answer the
fixture accepts, a task id or a warning can hold one. The JSON report keeps it exactly (JSON escapes it as
``\\udcff``), but UTF-8 cannot encode it: written as it is, the Markdown, HTML or JUnit file, or the terminal of
``pytest-consistency show``, fails and the output is lost. Every text output goes through :func:`visible`, which
writes each surrogate as the same six characters the JSON report holds: the output is written, and the reader sees
exactly where the undecodable bytes were, instead of a silent replacement character.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def visible(text: str) -> str:
    """``text`` with every surrogate code point written as its ``\\uXXXX`` escape; other text unchanged."""
    if not _SURROGATE.search(text):  # the common case, and the fast one
        return text
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def visible_in_json(text: str) -> str:
    """JSON text (``ensure_ascii=False``) whose strings decode to :func:`visible` text: a surrogate becomes the JSON
    escape of a backslash and ``uXXXX``, so a page's script shows the same six characters as the rest of it."""
    if not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda match: f"\\\\u{ord(match.group()):04x}", text)


def needs_escape(text: str) -> bool:
    """Whether :func:`visible` would change ``text``."""
    return _SURROGATE.search(text) is not None


#: Said once by an output that escaped something, so an escape is never mistaken for what the agent returned.
ESCAPE_NOTE = (
    "Some text holds bytes that are not UTF-8 (lone surrogates, as os.fsdecode gives for such a file name): each "
    "is shown as its escape, e.g. \\udcff; the JSON report holds the text exactly."
)
