"""The fast cassette reader gives exactly what vcrpy's YAML loader gives, or leaves the text to it.

Compared on every committed cassette, on hostile YAML (tags, anchors, binary bodies, block scalars, comments,
odd indentation, escapes, broken files) and on random cassettes written by vcrpy's own serializer. Equality is
strict: types too (``True == 1`` and ``1 == 1.0`` in Python, not here), and dict key order.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from vcr.serializers import yamlserializer

from pytest_consistency.cassette import yaml_reader as cassette_yaml
from pytest_consistency.cassette.yaml_reader import Unsupported, loads, parse

ROOT = Path(__file__).resolve().parents[2]


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, dicts in the same key order (what a loader must reproduce)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def full(text: str) -> Any:
    return yamlserializer.deserialize(text)


def committed_yaml() -> list[Path]:
    files = [*sorted((ROOT / "cassettes").rglob("*.yaml")), *sorted((ROOT / "examples").rglob("*.yaml"))]
    assert len(files) > 10
    return files


def test_every_committed_cassette_is_read_fast_and_equal() -> None:
    cassettes = sorted((ROOT / "cassettes").rglob("*.yaml"))  # repetitions' and resample samples' cassettes
    assert any(p.name.startswith("rep-") for p in cassettes) and any(p.name.startswith("sample-") for p in cassettes)
    for path in cassettes:
        text = path.read_text(encoding="utf-8")
        assert same(parse(text), full(text)), path


@pytest.mark.parametrize("path", committed_yaml(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_committed_yaml_file_loads_as_vcrpy_loads_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert same(loads(text), full(text))


BASE = (
    "interactions:\n- request:\n    body: null\n    headers:\n      accept:\n      - application/json\n"
    "    method: POST\n    uri: http://127.0.0.1:1/v1/chat/completions\n  response:\n    body:\n"
    "      string: '{\"a\": 1}'\n    headers: {}\n    status:\n      code: 200\n      message: OK\nversion: 1\n"
)

#: Each must be declined (left to vcrpy's loader) or read to exactly vcrpy's value.
HOSTILE = {
    "anchor and alias": "a: &x 1\nb: *x\n",
    "merge key": "base: &b\n  k: v\nother:\n  <<: *b\n",
    "binary body": "body:\n  string: !!binary |\n    aGVsbG8=\nversion: 1\n",
    "python tag": "interactions: !!python/object/apply:os.system ['echo pwned']\nversion: 1\n",
    "python tuple": "a: !!python/tuple [1, 2]\n",
    "str tag": "a: !!str 1\n",
    "literal block": "a: |\n  line one\n  line two\n",
    "folded block": "a: >\n  line one\n  line two\n",
    "comment line": "# a comment\na: 1\n",
    "trailing comment": "a: 1 # one\n",
    "comment after quote": "a: 'x' # one\n",
    "document marker": "---\na: 1\n",
    "document end": "a: 1\n...\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "flow mapping": "a: {b: 1}\n",
    "flow sequence": "a: [1, 2]\n",
    "empty flow": "a: {}\nb: []\n",
    "tab": "a:\tb\n",
    "tab indent": "a:\n\tb: 1\n",
    "crlf": "a: 1\r\nb: 2\r\n",
    "bom": "\ufeffa: 1\n",
    "control character": "a: 'x\x01y'\n",
    "nel": "a: 'x\x85y'\n",
    "float": "a: 1.5\n",
    "exponent": "a: 1e3\n",
    "infinity": "a: .inf\n",
    "timestamp": "a: 2026-12-02\n",
    "octal": "a: 010\n",
    "hex": "a: 0x1F\n",
    "sexagesimal": "a: 1:30\n",
    "underscore int": "a: 1_000\n",
    "plus int": "a: +5\n",
    "negative int": "a: -5\n",
    "booleans": "a: yes\nb: No\nc: on\nd: TRUE\ne: false\n",
    "nulls": "a: ~\nb: null\nc: Null\n",
    "empty value": "a:\nb: 1\n",
    "int key": "1: a\n",
    "bool key": "yes: a\n",
    "null key": "~: a\n",
    "quoted key": "'a b': 1\n\"c\": 2\n",
    "key with escape": '"a\\tb": 1\n',
    "duplicate keys": "a: 1\na: 2\n",
    "complex key": "? a\n: 1\n",
    "single quotes": "a: 'it''s'\n",
    "single over lines": "a: 'one\n  two\n\n  three\n\n\n  four  '\n",
    "single trailing spaces": "a: 'one   \n   two'\n",
    "double escapes": 'a: "tab\\there \\u00e9 \\x41 \\U0001F600 \\N \\_ \\L \\P \\0 \\e \\\\ \\""\n',
    "double over lines": 'a: "one\\\n  \\ two\n  three"\n',
    "double escaped break": 'a: "one \\\n  two"\n',
    "bad escape": 'a: "\\q"\n',
    "surrogate escape": 'a: "\\ud800"\n',
    "unterminated single": "interactions:\n- request:\n    body: '{\"a\n",
    "unterminated double": 'a: "abc\n',
    "quote then text": "a: 'x' y\n",
    "under-indented continuation": "a:\n  b: 'one\ntwo'\n",
    "marker inside scalar": "a: 'one\n---\n  two'\n",
    "plain over lines": "a: one\n  two\n  three\nb: 1\n",
    "plain continuation with colon": "a: one\n  two: three\n",
    "plain continuation comment": "a: one\n  #two\n",
    "plain with colon": "a: http://x:1/y\n",
    "plain starting with dash": "a: -x\n",
    "plain ending with colon": "a: x:\n",
    "indentless sequence": "a:\n- 1\n- 2\nb: 3\n",
    "indented sequence": "a:\n  - 1\n  - 2\nb: 3\n",
    "nested sequences": "a:\n- - 1\n  - 2\n- - 3\n",
    "sequence of mappings": "a:\n- b: 1\n  c: 2\n- d: 3\n",
    "extra spaces after dash": "a:\n-   1\n",
    "empty item": "a:\n-\n- 1\n",
    "mis-indented entry": "a:\n  b: 1\n   c: 2\n",
    "under-indented entry": "a:\n    b: 1\n  c: 2\n",
    "blank line": "a: 1\n\nb: 2\n",
    "trailing blank lines": "a: 1\n\n\n",
    "spaces after value": "a: 1   \n",
    "spaces after colon": "a:   1\n",
    "no final newline": "a: 1",
    "a list": "- 1\n- 2\n",
    "a scalar": "just text\n",
    "empty": "",
    "conflict markers": "<<<<<<< HEAD\ninteractions: []\n=======\ninteractions: []\n>>>>>>> branch\nversion: 1\n",
    "non-ascii": "a: 'café ☕'\n",
    "astral": "a: '\U0001f600'\n",
    "line separator": "a: 'x\u2028y'\n",
    "cassette": BASE,
}


def outcome(load: Any, text: str) -> tuple[str, Any]:
    try:
        return "value", load(text)
    except Exception as exc:  # compared: the same exception type from both loaders
        return type(exc).__name__, None


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_yaml_is_declined_or_read_exactly(name: str) -> None:
    text = HOSTILE[name]
    expected = outcome(full, text)
    try:
        fast = parse(text)
    except Unsupported:
        fast = None
    else:
        assert expected[0] == "value" and same(fast, expected[1]), (fast, expected)
    got = outcome(loads, text)
    assert got[0] == expected[0] and same(got[1], expected[1])


@pytest.mark.parametrize(
    "name",
    ["anchor and alias", "binary body", "python tag", "literal block", "comment line", "float", "timestamp", "tab"],
)
def test_what_the_emitter_never_writes_is_left_to_vcrpys_loader(name: str) -> None:
    with pytest.raises(Unsupported):
        parse(HOSTILE[name])


def test_the_usual_shapes_are_read_fast() -> None:
    for name in ("cassette", "single over lines", "double escapes", "sequence of mappings", "booleans", "nulls"):
        assert same(parse(HOSTILE[name]), full(HOSTILE[name])), name


ALPHABET = [
    *"abcXYZ019 -_:#'\"\\/{}[],&*!|>%@`?=~.+",
    "\n",
    "\t",
    "\r",
    " " * 5,
    "é",
    "☕",
    "\U0001f600",
    "\x85",
    "\u2028",
    "\x00",
    "\x07",
    "\ufeff",
    ": ",
    " #",
    "''",
    "- ",
    "---",
    "...",
    "null",
    "true",
    "yes",
    "123",
    "1.5",
    "0x1",
    "2026-12-02",
]


#: What API traffic mostly holds (words, JSON punctuation, quotes, a newline): the fast path must read it exactly.
TAME = [*"abcXYZ019 -_:'\"/{}[],.", "hello", "  ", "\n", "é", "null", "true", "123", ": ", "''"]


def random_text(rng: random.Random, tame: bool = False, longest: int = 200) -> str:
    n = rng.choice([n for n in (0, 1, 2, 5, 20, 60, 200) if n <= longest])
    alphabet = TAME if tame or rng.random() < 0.6 else ALPHABET
    return "".join(rng.choice(alphabet) for _ in range(n))


def random_key(rng: random.Random) -> str:
    return random_text(rng, tame=rng.random() < 0.8, longest=20) or "k"


def random_value(rng: random.Random, depth: int) -> Any:
    kind = rng.random()
    if depth > 3 or kind < 0.45:
        return random_text(rng)
    if kind < 0.5:
        return rng.choice([None, True, False, 0, -7, 12345678901234567890, 200])
    if kind < 0.75:
        return [random_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
    return {random_key(rng): random_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 2, 4]))}


def random_interaction(rng: random.Random) -> dict[str, Any]:
    request = {
        "body": rng.choice([None, random_text(rng)]),
        "headers": {random_key(rng): [random_text(rng)] for _ in range(rng.randint(0, 6))},
        "method": "POST",
        "uri": "http://127.0.0.1:8080/v1/" + random_text(rng, tame=True, longest=20),
    }
    response = {
        "body": {"string": random_text(rng)},
        "headers": {random_key(rng): [random_text(rng)] for _ in range(rng.randint(0, 4))},
        "status": {"code": 200, "message": "OK"},
        "extra": random_value(rng, 0),
    }
    return {"request": request, "response": response}


def random_cassette(rng: random.Random) -> dict[str, Any]:
    return {"interactions": [random_interaction(rng) for _ in range(rng.randint(1, 2))], "version": 1}


@pytest.mark.parametrize("seed", range(40))
def test_random_cassettes_written_by_vcrpy_read_the_same(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cassette_yaml, "ESCAPES_PER_LINE", 10**9)  # the reader itself, on escape-heavy files too
    rng = random.Random(seed)
    fast = 0
    for _ in range(25):
        text = yamlserializer.serialize(random_cassette(rng))
        expected = full(text)
        try:
            value = parse(text)
        except Unsupported:
            continue
        fast += 1
        assert same(value, expected), text
    assert fast > 0  # most random files stay in the emitter's shape


def test_loads_counts_which_reader_it_used() -> None:
    before = dict(cassette_yaml.counts)
    loads(HOSTILE["cassette"])
    loads(HOSTILE["binary body"])
    assert cassette_yaml.counts["fast"] == before["fast"] + 1
    assert cassette_yaml.counts["full"] == before["full"] + 1


@pytest.mark.parametrize(
    "value, expected",
    [("abc", "abc"), ("null", None), ("~", None), ("yes", True), ("Off", False), ("200", 200), ("-3", -3)],
)
def test_resolve_plain_follows_pyyaml(value: str, expected: Any) -> None:
    assert same(cassette_yaml.resolve_plain(value), expected)


@pytest.mark.parametrize("value", ["1.5", "010", "0x1", "1_0", "2026-12-02", "<<", "="])
def test_resolve_plain_declines_what_the_emitter_quotes_or_never_writes(value: str) -> None:
    with pytest.raises(Unsupported):
        cassette_yaml.resolve_plain(value)


# --- what the adversarial review found: each is now declined, so loads() gives exactly vcrpy's answer ------------


@pytest.mark.parametrize(
    "text",
    [
        "a" * 1025 + ": b\n",  # libyaml refuses a simple key over 1024 characters
        "'" + "a" * 1023 + "': b\n",
        "x:\n- " + "a" * 1025 + ": b\n",
        "a:\n" + "- " * 300 + "x\n",  # nesting that exhausted the reader's recursion (995 levels) or came near
        "".join(" " * i + "k:\n" for i in range(300)) + " " * 300 + "z: 1\n",
        "a:\n" + "- " * 200 + "x\n",
    ],
    ids=["long plain key", "long quoted key", "long key in a sequence", "deep sequences", "deep mappings", "200 deep"],
)
def test_what_libyaml_refuses_or_nests_deeply_is_left_to_vcrpys_loader(text: str) -> None:
    with pytest.raises(Unsupported):
        parse(text)
    try:
        expected: Any = full(text)
    except Exception as exc:  # the same exception, whatever vcrpy raises
        with pytest.raises(type(exc)):
            loads(text)
    else:
        assert same(loads(text), expected)


def test_a_loader_the_user_changed_is_used_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    import yaml

    class Resolving(yamlserializer._CassetteLoader):  # type: ignore[name-defined,misc]
        pass

    yaml.add_implicit_resolver("tag:yaml.org,2002:null", re.compile("^(?:None|none)$"), list("Nn"), Loader=Resolving)
    monkeypatch.setattr(yamlserializer, "_CassetteLoader", Resolving)
    assert not cassette_yaml.standard_loader()
    assert loads("a: None\n") == {"a": None}  # as vcrpy's loader, changed, reads it

    class Constructing(yamlserializer._CassetteLoader):  # type: ignore[name-defined,misc]
        pass

    Constructing.add_constructor("tag:yaml.org,2002:str", lambda loader, node: loader.construct_scalar(node).upper())
    monkeypatch.setattr(yamlserializer, "_CassetteLoader", Constructing)
    assert not cassette_yaml.standard_loader()
    monkeypatch.undo()
    assert cassette_yaml.standard_loader()


def test_bytes_are_read_by_vcrpys_loader() -> None:
    assert same(loads(b"a: 1\n"), {"a": 1})  # type: ignore[arg-type]


def test_an_escape_heavy_file_goes_to_vcrpys_loader_whole_and_reads_the_same() -> None:
    body = json.dumps({"choices": [{"message": {"content": "x"}}], "usage": {"total_tokens": 3}}, indent=2)
    text = yamlserializer.serialize({"interactions": [{"response": {"body": {"string": body * 3}}}], "version": 1})
    assert text.count("\\") > cassette_yaml.ESCAPES_PER_LINE * len(text.split("\n"))
    with pytest.raises(Unsupported, match="escapes"):
        parse(text)
    assert same(loads(text), full(text))
