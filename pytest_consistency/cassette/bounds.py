"""What a cassette may hold before anything uses it: nothing that stands for more than its own text.

Why: a cassette is untrusted input (committed, shared, edited by hand). A YAML alias repeats a node written once, so
nine anchors that each list the one before ten times ("billion laughs") make a 2.5 KB file stand for a billion
strings. The safe loader builds that cheaply, as one list shared a billion times, but whatever walks it afterwards
does not: ``repr()`` in an error message ran to MemoryError (issue 41), a conversion to JSON writes every copy. vcrpy
never writes an anchor or an alias, so a cassette with either is refused, before a node is built, whether or not
an alias uses the anchor: one rule, nothing to weigh. Without them every value is written out in the file, so what
a cassette loads to (its nodes, its strings) grows with the file and no faster.

Nesting is bounded too (:data:`MAX_DEPTH`): vcrpy nests six levels, and a structure hundreds deep makes every
recursive walk (``copy.deepcopy`` in vcrpy's filters, ``repr``) run out of stack or take quadratic time. It is
checked on the loaded data, without recursion; libyaml refuses to scan past 1000 levels itself, so building it
first is bounded.

And a message quotes a value through :func:`shown`, a bounded rendering of its beginning, never ``repr()`` of the
whole: a value may be as large as the file.

No vcrpy here: the resample wing reads source cassettes with PyYAML directly, and applies the same bounds.
"""

from __future__ import annotations

import reprlib
from typing import Any

#: Deepest nesting of mappings and lists a cassette may have; vcrpy writes six (the file, its interactions, an
#: exchange, its request or response, the headers, a header's values).
MAX_DEPTH = 32
#: Longest anchor name a message quotes.
NAME_CHARACTERS = 40


class UnboundedCassette(ValueError):
    """A cassette that could stand for more than its text (an anchor or alias) or nests past :data:`MAX_DEPTH`;
    ``problem`` says what and where, in a line."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def refuse_references(text: str, loader: Any = None) -> None:
    """Refuse an anchor (``&name``) or alias (``*name``) in the YAML ``text``, from ``loader``'s events (the loader
    that will read it; PyYAML's safe loader by default), before any node exists. Linear in the text; the first one
    found stops it. Text without ``&`` or ``*`` can hold neither, so it is not parsed twice."""
    if "&" not in text and "*" not in text:
        return
    import yaml

    for event in yaml.parse(text, Loader=loader or getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        name = getattr(event, "anchor", None)
        if name is None:
            continue
        alias = isinstance(event, yaml.AliasEvent)
        written = ("*" if alias else "&") + (name if len(name) <= NAME_CHARACTERS else name[:NAME_CHARACTERS] + "...")
        mark = event.start_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise UnboundedCassette(
            f"a YAML {'alias' if alias else 'anchor'} ({written!r}){where}: a cassette holds no anchors or aliases "
            "(vcrpy never writes them, and an alias can make a few bytes stand for gigabytes)"
        )


_CONTAINERS = (dict, list, tuple)


def refuse_depth(data: Any) -> None:
    """Refuse ``data`` (a loaded cassette, a tree once references are refused) nested past :data:`MAX_DEPTH`; one
    pass over its mappings and lists, no recursion."""
    if type(data) not in _CONTAINERS:
        return
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise UnboundedCassette(
                f"nested more than {MAX_DEPTH} levels deep (mappings and lists in one another; vcrpy writes six)"
            )
        if type(value) is dict:
            # a key may be a tuple (vcrpy's python/tuple); only containers are kept, the strings are most of it
            stack += [(key, depth + 1) for key in value if type(key) is tuple]
            value = value.values()
        stack += [(child, depth + 1) for child in value if type(child) in _CONTAINERS]


class _Shown(reprlib.Repr):
    """``reprlib``'s bounded rendering, bytes included (``reprlib`` renders them whole)."""

    def repr_bytes(self, value: bytes, level: int) -> str:
        return repr(value[: self.maxstring]) + ("..." if len(value) > self.maxstring else "")


_SHOWN = _Shown()
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxtuple, _SHOWN.maxdict = 2, 3, 3, 3
_SHOWN.maxstring = _SHOWN.maxother = 60


def shown(value: Any, width: int = 60) -> str:
    """``value`` as a message quotes it: its beginning, at most ``width`` characters, in time and memory that do not
    depend on its size (a list shared a billion times, a body of megabytes)."""
    text = _SHOWN.repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
