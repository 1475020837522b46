"""``cassette.bounds``: what a cassette may hold before anything uses it (issue 41).

An anchor or an alias is refused from the parser's events, before a node is built, and only those: ``&`` and ``*``
in text (a query string, a markdown answer, a quoted scalar) are text. Nesting past the bound is refused on the
loaded data, without recursion. A message quotes a bounded beginning of a value, whatever its size.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from vcr.serializers import jsonserializer, yamlserializer

from pytest_consistency.cassette import _vcr
from pytest_consistency.cassette.bounds import (
    MAX_DEPTH,
    UnboundedCassette,
    refuse_depth,
    refuse_references,
    shown,
)
from pytest_consistency.cassette.messages import CassetteError
from pytest_consistency.cassette.persist import Persister
from pytest_consistency.cassette.scrub import Scrubber

#: Nine anchors, each ten of the one before: ``*l8`` stands for 10**9 strings.
LAUGHS = "".join(
    f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 10) if level else ', '.join(['lol'] * 10)}]\n"
    for level in range(9)
)

REFUSED = {
    "billion laughs": (LAUGHS + "bomb: *l8\n", "a YAML anchor ('&l0') at line 1, column 5"),
    "anchor without an alias": ("a: &x 1\nb: 2\n", "a YAML anchor ('&x') at line 1, column 4"),
    "alias of an anchor in a list": ("- &x 1\n- *x\n", "a YAML anchor ('&x')"),
    "merge key": ("base: &b {k: v}\nother:\n  <<: *b\n", "a YAML anchor ('&b')"),
    "anchor on a mapping": ("a: &m\n  k: v\n", "a YAML anchor ('&m')"),
    "anchor in flow": ("a: [1, &y 2]\n", "a YAML anchor ('&y') at line 1, column 8"),
    "a long name": (f"a: &{'n' * 5000} 1\n", "('&" + "n" * 40 + "...')"),
}


@pytest.mark.parametrize("case", list(REFUSED))
@pytest.mark.parametrize("loader", [yaml.SafeLoader, yamlserializer._CassetteLoader], ids=["python", "vcrpy"])
def test_an_anchor_or_alias_is_refused_where_it_is_written(case: str, loader: type) -> None:
    text, words = REFUSED[case]
    with pytest.raises(UnboundedCassette) as raised:
        refuse_references(text, loader)
    assert words in raised.value.problem, raised.value.problem
    assert "a cassette holds no anchors or aliases" in raised.value.problem
    assert len(raised.value.problem) < 300


def test_an_alias_without_its_anchor_is_refused_too() -> None:
    """Not YAML (the parser knows no such anchor), refused by the same rule before the composer says so."""
    with pytest.raises(UnboundedCassette, match=r"a YAML alias \('\*nowhere'\) at line 1"):
        refuse_references("a: *nowhere\n")


@pytest.mark.parametrize(
    "text",
    [
        "uri: http://127.0.0.1/v1/search?q=a&b=c*\n",
        "body: 'R&D: **bold** & *emphasis*'\n",
        'body: "&x *y"\n',
        "body: a&b\n",
        "body: |\n  &x\n  *y\n",
        "- '*'\n- '&'\n",
        "no references at all\n",
    ],
)
def test_ampersands_and_stars_in_text_are_text(text: str) -> None:
    refuse_references(text, yamlserializer._CassetteLoader)
    assert _vcr.serializer("yaml").deserialize(text) == yaml.safe_load(text)


def test_the_text_is_not_parsed_when_it_cannot_hold_a_reference() -> None:
    """No ``&`` and no ``*``: no anchor and no alias, so not a second parse (a broken file is the load's to report)."""
    refuse_references("a: [unclosed\n")
    with pytest.raises(yaml.YAMLError):
        refuse_references("a: [unclosed, x&y\n")


def nested(depth: int) -> object:
    value: object = "leaf"
    for level in range(depth - 1):
        value = [value] if level % 2 else {"k": value}
    return value


def test_nesting_past_the_bound_is_refused_without_recursion() -> None:
    refuse_depth(nested(MAX_DEPTH + 1))  # the leaf is no level: MAX_DEPTH containers
    with pytest.raises(UnboundedCassette, match=f"nested more than {MAX_DEPTH} levels deep"):
        refuse_depth(nested(MAX_DEPTH + 2))
    with pytest.raises(UnboundedCassette):
        refuse_depth(nested(100_000))  # far past the interpreter's recursion limit
    with pytest.raises(UnboundedCassette):
        refuse_depth({nested_tuple(MAX_DEPTH + 1): 1})  # a key (vcrpy's python/tuple) counts


def nested_tuple(depth: int) -> tuple[object, ...]:
    value: tuple[object, ...] = ()
    for _ in range(depth):
        value = (value,)
    return value


def test_every_committed_cassette_is_within_the_bounds() -> None:
    root = Path(__file__).resolve().parents[3]
    files = sorted((root / "cassettes").rglob("*.yaml")) + sorted((root / "examples").rglob("rep-*.yaml"))
    assert files
    for path in files:
        _vcr.serializer("yaml").deserialize(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["yaml", "json"])
def test_deep_nesting_is_refused_in_either_format(name: str) -> None:
    text = '{"a": ' * 200 + "1" + "}" * 200
    with pytest.raises(UnboundedCassette, match="nested more than"):
        _vcr.serializer(name).deserialize(text)


def test_what_vcrpy_hands_a_persister_is_read_within_the_bounds(tmp_path: Path) -> None:
    """vcrpy passes its own serializer to ``load_cassette``: the persister reads with the bounded one all the same."""
    assert _vcr.bounded(yamlserializer) is _vcr.serializer("yaml")
    assert _vcr.bounded(jsonserializer) is _vcr.serializer("json")
    path = tmp_path / "rep-1.yaml"
    path.write_text(LAUGHS + "interactions: *l8\nversion: 1\n")
    with pytest.raises(CassetteError) as raised:
        Persister(Scrubber(None), "re-record").load_cassette(path, yamlserializer)
    message = str(raised.value)
    assert message.startswith(f"cassette {path} is refused: a YAML anchor ('&l0') at line 1"), message
    assert message.endswith("; re-record")


def test_a_value_is_quoted_in_bounded_time_and_size() -> None:
    """``repr()`` of the billion laughs runs to MemoryError; ``shown`` reads a few of its items."""
    laughs = yaml.load(LAUGHS + "bomb: *l8\n", Loader=yaml.SafeLoader)["bomb"]
    began = time.monotonic()
    for value in (laughs, "x" * 10_000_000, b"y" * 10_000_000, {str(i): i for i in range(1000)}, nested(500)):
        text = shown(value)
        assert len(text) <= 60, text
    assert time.monotonic() - began < 1.0
    assert shown(200) == "200" and shown("OK") == "'OK'"


def test_a_recording_never_writes_what_a_replay_refuses(tmp_path: Path) -> None:
    """vcrpy's dumper writes an object two exchanges share as an anchor and an alias; the persister writes it out
    twice, so the cassette it wrote replays."""
    shared = ["application/json"]
    assert "&id001" in yamlserializer.serialize({"a": {"h": shared}, "b": {"h": shared}})  # vcrpy's own
    requests = [_vcr.request("POST", f"http://127.0.0.1:9/v1/{i}", b"{}", {"content-type": shared}) for i in (1, 2)]
    response = {"status": {"code": 200, "message": "OK"}, "headers": {"content-type": shared}, "body": {"string": "{}"}}
    path = tmp_path / "rep-1.yaml"
    persister = Persister(Scrubber(None), "re-record")
    persister.save_cassette(path, {"requests": requests, "responses": [response, response]}, yamlserializer)
    text = path.read_text()
    assert "&" not in text and "*" not in text, text
    loaded = persister.load_cassette(path, yamlserializer)
    assert [(r["status"]["code"], r["headers"]) for r in loaded[1]] == [(200, {"content-type": shared})] * 2
    assert [r.uri for r in loaded[0]] == ["http://127.0.0.1:9/v1/1", "http://127.0.0.1:9/v1/2"]
