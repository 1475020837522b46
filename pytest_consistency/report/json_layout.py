"""The JSON report's text: indented where a reader looks, one line per record where a machine does.

Why not ``json.dumps(data, indent=2)``: with ``indent`` CPython (before 3.14) gives up its C encoder and writes
every value through the Python one. A report of 1,000 tasks x 10 repetitions x 20 calls is 36 MB, and its dump
took as long as building, checking and redacting the whole summary together. Below :data:`LINE_DEPTH` (a call
record inside a repetition inside a task) and for every list of plain values (outcomes, answers, a tree node's
repetitions), the C encoder writes the container whole, on one line; above it the layout is ``indent=2``'s, so the
summary, each task's figures and each repetition's fields still read one per line and diff line by line.

The text parses to exactly the data (``json.loads(layout(x)) == x``); only whitespace differs from ``indent=2``.
Like the report writer before it, it refuses NaN and infinity (``ValueError``): the report is strict JSON.
"""

from __future__ import annotations

import json
from typing import Any

#: Containers at this depth or deeper are written on one line: the report's root is 0, ``tasks`` 1, a task 2,
#: ``repetitions`` 3, a repetition 4, ``calls`` 5, so a call record is one line.
LINE_DEPTH = 6
INDENT = "  "

_ENCODE = json.JSONEncoder(allow_nan=False).encode


def _plain(value: Any) -> bool:
    return not isinstance(value, (dict, list, tuple))


def layout(data: Any, line_depth: int = LINE_DEPTH) -> str:
    """``data`` as strict JSON text: ``indent=2`` down to ``line_depth``, one line from there on and for lists of
    plain values."""
    out: list[str] = []
    _write(data, 0, line_depth, out)
    return "".join(out)


def _write(value: Any, depth: int, line_depth: int, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value or depth >= line_depth or not all(isinstance(key, str) for key in value):
            out.append(_ENCODE(value))  # non-string keys: the encoder's own conversion, as json.dumps would do
            return
        inner = "\n" + INDENT * (depth + 1)
        out.append("{")
        first = True
        for key, item in value.items():
            out.append(inner if first else "," + inner)
            first = False
            out.append(_ENCODE(key))
            out.append(": ")
            _write(item, depth + 1, line_depth, out)
        out.append("\n" + INDENT * depth + "}")
    elif isinstance(value, (list, tuple)):
        if not value or depth >= line_depth or all(_plain(item) for item in value):
            out.append(_ENCODE(value))
            return
        inner = "\n" + INDENT * (depth + 1)
        out.append("[")
        first = True
        for item in value:
            out.append(inner if first else "," + inner)
            first = False
            _write(item, depth + 1, line_depth, out)
        out.append("\n" + INDENT * depth + "]")
    else:
        out.append(_ENCODE(value))
