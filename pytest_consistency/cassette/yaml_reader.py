"""A fast reader for the YAML that vcrpy writes, giving the same Python objects as vcrpy's own loader.

Why: a replayed repetition parses its cassette, and vcrpy's loader (libyaml's C parser, then PyYAML's Python
resolver and ``SafeConstructor``) was the largest single cost of a replay: about 0.2 ms and 2.7 M instructions per
cassette, where the same data as JSON loads in a few microseconds. This reader takes 1.06 M (callgrind, the benchmark's
cassettes). The files stay vcrpy's YAML (users' tools read them); only the reading changes.

What it reads: exactly the shapes PyYAML's emitter writes for a cassette (vcrpy dumps with its defaults): block
mappings and sequences (indentless under a key, compact ``- key: value`` items), the empty flow collections ``{}``
and ``[]``, and plain, single-quoted and double-quoted scalars, folded over several lines as the emitter wraps them.
Plain scalars are resolved with PyYAML's own implicit resolvers (the table ``yaml.resolver.Resolver`` holds), and
only to what the emitter writes plain: strings, ``null``, booleans and decimal integers.

Anything else (a tag such as ``!!binary`` or ``!!python/...``, anchors and aliases, block scalars ``|`` and ``>``,
comments, directives and document markers, tabs, carriage returns, characters YAML does not allow, floats and
timestamps, a non-string key, indentation the emitter never writes, an unterminated scalar, a document that is not a
mapping) raises ``Unsupported`` and ``loads`` hands the text to vcrpy's loader unchanged: an unusual file loads as it
always did, and a broken one fails with vcrpy's error, so the plugin's message naming the file is the same.
``tests/unit/test_cassette_yaml.py`` compares both loaders on every committed cassette, on hostile YAML and on
random cassettes dumped by vcrpy's serializer.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any


class Unsupported(ValueError):
    """The text is outside what this reader handles exactly; vcrpy's loader reads it instead."""


#: Characters this reader leaves to vcrpy's loader wherever they occur: YAML's non-printable characters (libyaml
#: rejects them), and tab, carriage return, NEL, the Unicode line and paragraph separators and the byte order
#: mark, which change how lines break or how indentation and spaces are read.
_DECLINED = re.compile("[^\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_SPACES = re.compile(" *")
#: A quoted scalar's text up to the next character that means something there: its quote, a backslash (double
#: quotes) or a line break (spaces are text, except those before a break, which folding drops).
_SINGLE_RUN = re.compile("[^'\n]*")
_DOUBLE_RUN = re.compile('[^"\\\\\n]*')
#: A file with more escapes and doubled quotes than this many per line goes to vcrpy's loader at once. This
#: reader's cost is about a step per line and one per escape; vcrpy's about three per line (a node each), whatever
#: its scalars hold. So an escape-heavy body (a pretty-printed JSON response is written with a ``\n`` per line
#: of it, an answer with apostrophes with ``''`` for each) is read faster by libyaml's C scanner.
ESCAPES_PER_LINE = 2
#: libyaml refuses a simple key longer than 1024 characters; this reader declines any above this.
MAX_KEY = 1000
#: Nesting deeper than this goes to vcrpy's loader (a cassette is about 6 deep; recursion stays far from limits).
MAX_DEPTH = 64
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
#: Indicators a plain scalar may not start with here ('-' is handled apart: allowed before a non-space).
_PLAIN_START = frozenset("?:,[]{}#&*!|>'\"%@` ")
#: libyaml's escapes in double-quoted scalars (those the emitter writes, and the rest of YAML 1.1's).
_ESCAPES = {
    "0": "\0",
    "a": "\x07",
    "b": "\x08",
    "t": "\x09",
    "n": "\x0a",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\x0d",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_CODES = {"x": 2, "u": 4, "U": 8}
_HEX = re.compile("[0-9A-Fa-f]+\\Z")

_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"


@functools.lru_cache(maxsize=4096)
def resolve_plain(value: str) -> Any:
    """A plain scalar's value, resolved as PyYAML's ``Resolver`` and ``SafeConstructor`` do (a pure function of the
    text and PyYAML's resolver table; cached, since a cassette's keys and many values repeat in every file: a
    resolver added to ``yaml.resolver.Resolver`` after the first cassette was read is not seen for those texts)."""
    from yaml.constructor import SafeConstructor
    from yaml.resolver import Resolver

    table = Resolver.yaml_implicit_resolvers
    for tag, regexp in [*table.get(value[0], ()), *table.get(None, ())]:
        if regexp.match(value):
            if tag == _NULL:
                return None
            if tag == _BOOL:
                return SafeConstructor.bool_values[value.lower()]
            if tag == _INT and _DECIMAL.match(value):
                return int(value)
            raise Unsupported(f"plain scalar resolved to {tag}")
    return value


def _is_item(line: str, n: int) -> bool:
    """Whether ``line`` has a block sequence's ``-`` at column ``n``."""
    return line.startswith("-", n) and (len(line) == n + 1 or line[n + 1] == " ")


@functools.lru_cache(maxsize=4096)
def _split_plain_key(content: str) -> tuple[str, str | None] | None:
    """``_Reader.split_key`` for a plain key (a pure function, cached: the same keys start lines in every file)."""
    colon = content.find(": ")
    if colon < 0:
        if not content.endswith(":"):
            return None
        text, rest = content[:-1], None
    else:
        text, rest = content[:colon], content[colon + 2 :]
    _check_plain(text, first=True)
    key = resolve_plain(text)
    if not isinstance(key, str):
        raise Unsupported("a key that is not a string")
    return key, rest


@functools.lru_cache(maxsize=4096)
def _plain_line(part: str) -> Any:
    """A plain scalar on one line: checked, then resolved (cached, as ``resolve_plain``)."""
    _check_plain(part, first=True)
    return resolve_plain(part)


def _fold(raw: str, n: int) -> str:
    """A quoted scalar's text between its quotes, over several lines and without escapes, folded as libyaml does:
    spaces around each line break dropped, a break alone read as a space, each empty line after it as a newline.
    Each line after the first that has text must be indented deeper than ``n``."""
    lines = raw.split("\n")
    out = [lines[0].rstrip(" ")]
    empty = 0
    last = len(lines) - 1
    for index in range(1, last + 1):
        line = lines[index]
        text = line.lstrip(" ")
        if index < last:
            text = text.rstrip(" ")
            if not text:
                empty += 1
                continue
        if len(line) - len(line.lstrip(" ")) <= n:
            raise Unsupported("a continuation line indented as the emitter never does")
        out.append("\n" * empty if empty else " ")
        out.append(text)
        empty = 0
    return "".join(out)


def _check_plain(part: str, first: bool) -> None:
    """One line of a plain scalar as the emitter writes them: no ': ', ' #', trailing space or leading indicator."""
    if (
        not part
        or ": " in part
        or " #" in part
        or part[-1] in ": "
        or part[0] in _PLAIN_START
        or (part[0] == "-" and (not first or len(part) == 1 or part[1] == " "))
        or (first and part.startswith(("---", "...")))
    ):
        raise Unsupported("a plain scalar the emitter writes otherwise")


class _Reader:
    """One document: its lines (structure is read line by line) and its text (for scalars over several lines)."""

    __slots__ = ("end", "lines", "starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.end = len(text)
        self.lines = text.split("\n")
        self.starts: list[int] | None = None

    def offset(self, i: int) -> int:
        """Where line ``i`` starts in the text."""
        if self.starts is None:
            self.starts = [0, *itertools.accumulate(len(line) + 1 for line in self.lines)]
        return self.starts[i]

    def document(self) -> dict[str, Any]:
        if _DECLINED.search(self.text):
            raise Unsupported("a character left to the full loader")
        marks = self.text.count("\\") + self.text.count("''")
        if marks > 16 and marks > ESCAPES_PER_LINE * len(self.lines):
            raise Unsupported("more escapes than this reader is faster for")
        first = self.lines[0]
        if not first or first[0] == " " or _is_item(first, 0) or self.split_key(first) is None:
            raise Unsupported("the document is not a block mapping at column 0")
        value, i = self.mapping(0, 0)
        if i < len(self.lines) and not self.blank_from(i):
            raise Unsupported("content after the document")
        return value

    def blank_from(self, i: int) -> bool:
        return all(not line.strip(" ") for line in self.lines[i:])

    def split_key(self, content: str) -> tuple[str, str | None] | None:
        """``(key, rest of the line after ': ')`` when ``content`` starts with a simple key (rest None when the line
        ends at the ':'), or None when it does not."""
        if content[0] in "'\"":
            try:
                key, q = _Reader(content).quoted(0, -1, single_line=True)
            except Unsupported:
                return None
            if content.startswith(":", q) and (q + 1 == len(content) or content[q + 1] == " "):
                return key, (content[q + 2 :] if q + 1 < len(content) else None)
            return None
        return _split_plain_key(content)

    def going_on(self, i: int, n: int) -> str | None:
        """Line ``i`` without its indentation when it continues the collection at column ``n``; None where the
        collection ends (the end of the text, trailing blank lines, a line indented less)."""
        if i >= len(self.lines):
            return None
        line = self.lines[i]
        inner = line.lstrip(" ")
        if not inner:
            if self.blank_from(i):
                return None
            raise Unsupported("a blank line between entries")
        indent = len(line) - len(inner)
        if indent < n:
            return None
        if indent > n:
            raise Unsupported("indentation the emitter never writes")
        return inner

    def mapping(self, i: int, n: int) -> tuple[dict[str, Any], int]:
        """The block mapping whose first key is line ``i`` from column ``n``; returns it and the line after it."""
        if n > 2 * MAX_DEPTH:  # a level indents by a column or more (an indentless sequence's items by two)
            raise Unsupported("nesting deeper than a cassette's")
        lines = self.lines
        count = len(lines)
        out: dict[str, Any] = {}
        while True:
            content = lines[i][n:]
            if content[:2] == "- " or content == "-":
                raise Unsupported("a sequence entry where a key was expected")
            split = self.split_key(content) if content[:1] in ("'", '"') else _split_plain_key(content)
            if split is None:
                raise Unsupported("not a mapping entry")
            key, rest = split
            if len(content) - (len(rest) + 2 if rest is not None else 1) > MAX_KEY:  # the key as written
                raise Unsupported("a key longer than libyaml reads")
            value: Any
            if rest is not None:
                value, i = self.scalar(rest, i, n)
            else:
                i += 1
                if i >= count:
                    raise Unsupported("a key without a value")
                line = lines[i]
                inner = line.lstrip(" ")
                indent = len(line) - len(inner)
                item = inner[:2] == "- " or inner == "-"
                if indent == n and item:
                    value, i = self.sequence(i, n)
                elif indent > n and inner:
                    value, i = (self.sequence if item else self.mapping)(i, indent)
                else:
                    raise Unsupported("a key without a value")
            out[key] = value
            if self.going_on(i, n) is None:
                return out, i

    def sequence(self, i: int, n: int) -> tuple[list[Any], int]:
        """The block sequence whose first ``-`` is line ``i``'s column ``n``."""
        if n > 2 * MAX_DEPTH:
            raise Unsupported("nesting deeper than a cassette's")
        lines = self.lines
        out: list[Any] = []
        while True:
            line = lines[i]
            content = line[n + 2 :]
            if line[n : n + 2] != "- " or not content or content[0] == " ":
                raise Unsupported("a sequence entry the emitter does not write")
            item: Any
            first = content[0]
            if content[:2] == "- " or content == "-":
                item, i = self.sequence(i, n + 2)
            elif (
                content != "{}"
                and content != "[]"
                and (self.split_key(content) if first in "'\"" else _split_plain_key(content)) is not None
            ):
                item, i = self.mapping(i, n + 2)
            else:
                item, i = self.scalar(content, i, n)
            out.append(item)
            # An indentless sequence also ends where its mapping's next key starts.
            inner = self.going_on(i, n)
            if inner is None or not (inner[:2] == "- " or inner == "-"):
                return out, i

    def scalar(self, rest: str, i: int, n: int) -> tuple[Any, int]:
        """The scalar (or empty flow collection) that starts with ``rest`` at the end of line ``i``; continuation
        lines must be indented deeper than ``n``. Returns it and the index of the line after it."""
        if not rest:
            raise Unsupported("a missing value")
        c = rest[0]
        if c == "'" or c == '"':
            inner = rest[1:-1]
            if len(rest) > 1 and rest[-1] == c and c not in inner and (c == "'" or "\\" not in inner):
                return inner, i + 1  # on one line, without escapes: the text between the quotes
            start = self.offset(i) + len(self.lines[i]) - len(rest)
            close = self.text.find(c, start + 1)
            raw = self.text[start + 1 : close]
            if close > 0 and not self.text.startswith(c, close + 1) and "\\" not in raw:
                value, q = _fold(raw, n), close + 1  # over several lines, without escapes
            else:
                value, q = self.quoted(start, n)
            if q < self.end and self.text[q] != "\n":
                raise Unsupported("content after a quoted scalar")
            return value, i + 1 + self.text.count("\n", start, q)
        if rest == "{}":
            return {}, i + 1
        if rest == "[]":
            return [], i + 1
        lines = self.lines
        i += 1
        if i >= len(lines) or len(lines[i]) - len(lines[i].lstrip(" ")) <= n or not lines[i].strip(" "):
            return _plain_line(rest), i  # on one line (the usual case)
        _check_plain(rest, first=True)
        parts = [rest]
        while i < len(lines):
            line = lines[i]
            part = line.lstrip(" ")
            if not part or len(line) - len(part) <= n:
                break
            _check_plain(part, first=False)
            parts.append(part)
            i += 1
        return resolve_plain(" ".join(parts)), i

    def quoted(self, p: int, n: int, single_line: bool = False) -> tuple[str, int]:
        """The single- or double-quoted scalar at ``p`` (libyaml's folding and escapes) and the position after it.

        A continuation line must be indented deeper than ``n``, as the emitter writes them."""
        text = self.text
        quote = text[p]
        double = quote == '"'
        run = _DOUBLE_RUN if double else _SINGLE_RUN
        chunks: list[str] = []
        p += 1
        while True:
            q = run.match(text, p).end()  # type: ignore[union-attr]
            segment = text[p:q]
            p = q
            if p >= self.end:
                raise Unsupported("an unterminated scalar")
            ch = text[p]
            if ch == "\n":  # a line break folds: the spaces before it go, empty lines are newlines, else a space
                if single_line:
                    raise Unsupported("a key over several lines")
                if segment:
                    chunks.append(segment.rstrip(" "))
                folded: list[str] = []
                p = self.breaks(p + 1, n, folded)
                chunks.extend(folded or [" "])
                continue
            if segment:
                chunks.append(segment)
            if ch == quote:
                if not double and text.startswith("'", p + 1):
                    chunks.append("'")
                    p += 2
                    continue
                return "".join(chunks), p + 1
            # A backslash in a double-quoted scalar: an escape.
            ch = text[p + 1 : p + 2]
            if ch in _ESCAPES:
                chunks.append(_ESCAPES[ch])
                p += 2
            elif ch in _CODES:
                digits = text[p + 2 : p + 2 + _CODES[ch]]
                if len(digits) != _CODES[ch] or not _HEX.match(digits):
                    raise Unsupported("a bad escape")
                code = int(digits, 16)
                if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                    raise Unsupported("an escape that is no character")
                chunks.append(chr(code))
                p += 2 + len(digits)
            elif ch == "\n" and not single_line:
                p = self.breaks(p + 2, n, chunks)
            else:
                raise Unsupported("an unknown escape")

    def breaks(self, p: int, n: int, chunks: list[str]) -> int:
        """After a line break inside a quoted scalar: one newline per empty line; the next line's indentation is
        dropped (it must be deeper than ``n``). Returns the position of that line's first character."""
        text = self.text
        while True:
            if text.startswith(("---", "..."), p):
                raise Unsupported("a document marker inside a scalar")
            q = _SPACES.match(text, p).end()  # type: ignore[union-attr]
            if q < self.end and text[q] == "\n":
                chunks.append("\n")
                p = q + 1
                continue
            if q >= self.end or q - p <= n:
                raise Unsupported("a continuation line indented as the emitter never does")
            return q


def parse(text: str) -> dict[str, Any]:
    """The document as vcrpy's YAML loader would build it; raises ``Unsupported`` for anything unusual."""
    return _Reader(text).document()


#: How often each path was taken in this process (read by a guard in tests/test_lazy_costs.py).
counts = {"fast": 0, "full": 0}


#: The tags whose construction this reader does itself: vcrpy's loader must build them as PyYAML's safe loader does.
_OWN_TAGS = ("str", "null", "bool", "int", "map", "seq")


def standard_loader() -> bool:
    """Whether vcrpy's cassette loader resolves and constructs what this reader reads as PyYAML's safe loader does:
    a user who added an implicit resolver or a constructor to it (or to ``CSafeLoader``) gets vcrpy's loader."""
    from vcr.serializers import yamlserializer
    from yaml.constructor import SafeConstructor
    from yaml.resolver import Resolver

    loader = yamlserializer._CassetteLoader
    own = loader.yaml_constructors
    safe = SafeConstructor.yaml_constructors
    return loader.yaml_implicit_resolvers is Resolver.yaml_implicit_resolvers and all(
        own.get(f"tag:yaml.org,2002:{tag}") is safe[f"tag:yaml.org,2002:{tag}"] for tag in _OWN_TAGS
    )


def loads(text: str) -> Any:
    """vcrpy's ``yamlserializer.deserialize``, through the fast reader when the text is in its shape."""
    try:
        if not isinstance(text, str) or not standard_loader():
            raise Unsupported("not text, or a loader changed by the user")
        data = parse(text)
    except Unsupported:
        from vcr.serializers import yamlserializer

        counts["full"] += 1
        return yamlserializer.deserialize(text)
    counts["fast"] += 1
    return data


class Serializer:
    """vcrpy's YAML serializer with the fast reader: what the plugin's persister loads cassettes with."""

    @staticmethod
    def deserialize(cassette_string: str) -> Any:
        return loads(cassette_string)

    @staticmethod
    def serialize(cassette_dict: Any) -> str:
        from vcr.serializers import yamlserializer

        return yamlserializer.serialize(cassette_dict)  # type: ignore[no-any-return]
