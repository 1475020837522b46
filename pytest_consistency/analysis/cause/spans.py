"""Where two texts differ, cut to a few dozen characters around it: what a person reads to see the difference."""

from __future__ import annotations

import re

from pytest_consistency.model.cause import MAX_PART_TEXT, Evidence
from pytest_consistency.model.trajectory import clip

#: A character of a word (as a credential is made of, see ``trajectory.TOKEN``).
WORD = re.compile(r"[A-Za-z0-9_\-.~+/=]")

#: Characters shown before the first difference, and of each side's differing span.
CONTEXT = 40
SHOWN = 80


def differing(left: str, right: str) -> tuple[str, str]:
    """Each text cut to the span where they differ, with up to :data:`CONTEXT` equal characters before it."""
    prefix = 0
    limit = min(len(left), len(right))
    while prefix < limit and left[prefix] == right[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and left[len(left) - 1 - suffix] == right[len(right) - 1 - suffix]:
        suffix += 1
    start = word_start(left, max(0, prefix - CONTEXT))
    lead = "…" if start else ""

    def cut(text: str) -> str:
        end = word_end(text, max(prefix + 1, len(text) - suffix))
        return lead + clip(text[start:end], SHOWN + (prefix - start)) + ("…" if end < len(text) else "")

    return cut(left), cut(right)


def word_start(text: str, at: int) -> int:
    """``at`` moved back to the start of the word it falls in: a span never starts inside a word, so a key is
    shown whole (and redacted whole) or not at all."""
    while 0 < at < len(text) and WORD.match(text[at - 1]) and WORD.match(text[at]):
        at -= 1
    return at


def word_end(text: str, at: int) -> int:
    """``at`` moved on to the end of the word it falls in (see :func:`word_start`)."""
    while 0 < at < len(text) and WORD.match(text[at - 1]) and WORD.match(text[at]):
        at += 1
    return at


def evidence(repeats: tuple[int, int], left: str | None, right: str | None) -> tuple[Evidence, ...]:
    """The two sides of a difference, cut around it; empty when a side's text was not kept. Two equal kept texts
    of parts whose digests differ were cut at :data:`MAX_PART_TEXT`: the difference lies after that."""
    if left is None or right is None:
        return ()
    if left == right:
        beyond = len(left) >= MAX_PART_TEXT - 1
        tail = "…" + left[word_start(left, max(0, len(left) - CONTEXT)) :] if beyond else clip(left, SHOWN)
        return (Evidence(repeats[0], tail, beyond), Evidence(repeats[1], tail, beyond))
    a, b = differing(left, right)
    return (Evidence(repeats[0], a), Evidence(repeats[1], b))


def quoted(sides: tuple[Evidence, ...]) -> str:
    """``"…at 09:13" (repetition 1) vs "…at 09:26" (repetition 2)``; with texts equal as kept, where they differ."""
    if not sides:
        return ""
    if sides[0].beyond:
        return f"the first {MAX_PART_TEXT} characters are the same; the texts differ after them"
    return " vs ".join(f"{_q(side.text)} (repetition {side.repeat})" for side in sides)


def _q(text: str) -> str:
    return '"' + text.replace("\n", "\\n") + '"'
