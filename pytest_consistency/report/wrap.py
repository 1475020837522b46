"""Wrapping a terminal line (the terminal's and the blocks its sections render, such as re-judging's)."""

from __future__ import annotations

import re
import textwrap


def wrapped(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` columns, continued four columns in. A long word stays whole, and so does
    a command in backticks (its spaces are not break points): a command pasted from the terminal must run."""
    protected = re.sub(r"`[^`]*`", lambda m: m[0].replace(" ", _NO_BREAK), text)
    lines = textwrap.wrap(
        protected, max(width, 40), subsequent_indent="    ", break_on_hyphens=False, break_long_words=False
    )
    return [line.replace(_NO_BREAK, " ") for line in lines] or [text]


#: Stands for a space that must not break a line while ``wrapped`` wraps (a character no text here holds).
_NO_BREAK = "\x00"
