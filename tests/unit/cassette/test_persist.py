"""The persister reads a cassette once and deserialises the text itself: the same result as vcrpy's own
``FilesystemPersister.load_cassette`` (which reads the file in text mode), on the shapes where the two could part.

And a file that users commit and attackers can edit is read safely: YAML goes through vcrpy's serializer, whose loader
is libyaml's ``CSafeLoader`` (PyYAML's ``SafeLoader`` without libyaml); a tag that would run code is refused, so are
anchors and aliases and deep nesting (``cassette.bounds``, issue 41), and every file that does not load is a
``CassetteError`` naming it, never an error inside the agent's call. (Moved from the tests of the hand-written YAML
reader it replaced.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cassette_edits import CASES, rewrite
from vcr.persisters.filesystem import CassetteNotFoundError, FilesystemPersister
from vcr.serializers import yamlserializer

from pytest_consistency.cassette import _vcr
from pytest_consistency.cassette.messages import CassetteError
from pytest_consistency.cassette.persist import Persister
from pytest_consistency.cassette.scrub import Scrubber

CASSETTE = """interactions:
- request:
    body: '{"model": "m"}'
    headers:
      x-consistency-key-fingerprint:
      - sha256:0123abcd
    method: POST
    uri: http://127.0.0.1:9/v1/chat/completions
  response:
    body:
      string: '{"id": "x", "choices": []}'
    headers:
      content-type:
      - application/json
    status:
      code: 200
      message: OK
version: 1
"""


@pytest.mark.parametrize(
    "text",
    [CASSETTE, CASSETTE.replace("\n", "\r\n"), CASSETTE.replace("\n", "\r")],
    ids=["lf", "crlf", "cr"],
)
def test_loads_what_vcrpy_loads(tmp_path: Path, text: str) -> None:
    path = tmp_path / "rep-1.yaml"
    path.write_bytes(text.encode())
    ours = Persister(Scrubber(None), "re-record").load_cassette(path, yamlserializer)
    theirs = FilesystemPersister.load_cassette(path, yamlserializer)
    assert [r._to_dict() for r in ours[0]] == [r._to_dict() for r in theirs[0]]
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("text", ["", "\n", "  \r\n  "], ids=["empty", "newline", "blank"])
def test_an_empty_file_is_a_missing_cassette_as_in_vcrpy(tmp_path: Path, text: str) -> None:
    path = tmp_path / "rep-1.yaml"
    path.write_bytes(text.encode())
    with pytest.raises(CassetteNotFoundError):
        FilesystemPersister.load_cassette(path, yamlserializer)
    with pytest.raises(CassetteNotFoundError):
        Persister(Scrubber(None), "re-record").load_cassette(path, yamlserializer)


ROOT = Path(__file__).resolve().parents[3]


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, dicts in the same key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def committed_yaml() -> list[Path]:
    files = [*sorted((ROOT / "cassettes").rglob("*.yaml")), *sorted((ROOT / "examples").rglob("*.yaml"))]
    assert len(files) > 10
    return files


def test_yaml_is_read_by_libyamls_safe_loader_where_libyaml_is_installed() -> None:
    loader = _vcr.serializer("yaml").loader
    assert loader is yamlserializer._CassetteLoader
    assert issubclass(loader, yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)
    assert not issubclass(loader, (yaml.FullLoader, yaml.UnsafeLoader))


@pytest.mark.parametrize("path", committed_yaml(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_committed_yaml_file_loads_as_the_pure_python_safe_loader_reads_it(path: Path) -> None:
    """libyaml's C loader and PyYAML's own safe loader give the same values, types and key order."""
    text = path.read_text(encoding="utf-8")
    assert same(_vcr.serializer("yaml").deserialize(text), yaml.load(text, Loader=yaml.SafeLoader))
    if path.name.startswith(("rep-", "sample-")):
        Persister(Scrubber(None), "re-record").load_cassette(path, _vcr.serializer("yaml"))


BASE = (
    "interactions:\n- request:\n    body: null\n    headers:\n      accept:\n      - application/json\n"
    "    method: POST\n    uri: http://127.0.0.1:1/v1/chat/completions\n  response:\n    body:\n"
    "      string: '{\"a\": 1}'\n    headers: {}\n    status:\n      code: 200\n      message: OK\nversion: 1\n"
)

#: Hostile or unusual YAML, each as a whole cassette file: read as the safe loader reads it, or refused by name.
HOSTILE = {
    "anchor and alias": "a: &x 1\nb: *x\n",
    "merge key": "base: &b\n  k: v\nother:\n  <<: *b\n",
    "alias bomb": "a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\nd: [*c, *c, *c]\n",
    "anchor alone": BASE.replace("message: OK", "message: &m OK"),
    "alias in a status code": "s: &s 200\n" + BASE.replace("code: 200", "code: *s"),
    "binary body": "body:\n  string: !!binary |\n    aGVsbG8=\nversion: 1\n",
    "python tag": "interactions: !!python/object/apply:os.system ['echo pwned']\nversion: 1\n",
    "python name": "interactions: !!python/name:os.system\nversion: 1\n",
    "python new": "interactions: !!python/object/new:subprocess.Popen [['echo', 'pwned']]\nversion: 1\n",
    "unknown tag": "interactions: !custom 1\nversion: 1\n",
    "python tuple": "a: !!python/tuple [1, 2]\n",
    "literal block": "a: |\n  line one\n  line two\n",
    "comment line": "# a comment\na: 1\n",
    "document marker": "---\na: 1\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "flow mapping": "a: {b: 1}\n",
    "tab indent": "a:\n\tb: 1\n",
    "control character": "a: 'x\x01y'\n",
    "float and timestamp": "a: 1.5\nb: 2026-12-02\n",
    "int key": "1: a\n",
    "duplicate keys": "a: 1\na: 2\n",
    "bad escape": 'a: "\\q"\n',
    "unterminated single": "interactions:\n- request:\n    body: '{\"a\n",
    "unterminated double": 'a: "abc\n',
    "mis-indented entry": "a:\n  b: 1\n   c: 2\n",
    "a list": "- 1\n- 2\n",
    "a scalar": "just text\n",
    "conflict markers": "<<<<<<< HEAD\ninteractions: []\n=======\ninteractions: []\n>>>>>>> branch\nversion: 1\n",
    "long plain key": "a" * 1025 + ": b\n",
    "deep sequences": "a:\n" + "- " * 300 + "x\n",
    "deep mappings": "".join(" " * i + "k:\n" for i in range(300)) + " " * 300 + "z: 1\n",
    "cassette with a tag in a body": BASE.replace("string: '{\"a\": 1}'", "string: !!python/object/apply:os.getpid []"),
    "cassette": BASE,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_yaml_is_read_safely_or_is_a_cassette_error_naming_the_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / "rep-1.yaml"
    path.write_text(HOSTILE[name], encoding="utf-8")
    try:
        loaded = Persister(Scrubber(None), "re-record").load_cassette(path, _vcr.serializer("yaml"))
    except CassetteError as exc:
        assert str(path) in str(exc) and "re-record" in str(exc)
        assert "pwned" not in str(exc)
        return
    assert name == "cassette", f"{name} loaded as a cassette: {loaded}"


@pytest.mark.parametrize(
    "name", ["anchor and alias", "merge key", "alias bomb", "anchor alone", "alias in a status code"]
)
def test_an_anchor_or_alias_is_refused_naming_the_file_and_where(tmp_path: Path, name: str) -> None:
    """vcrpy never writes one; the safe loader would read them, so they are refused before it does (issue 41)."""
    path = tmp_path / "rep-1.yaml"
    path.write_text(HOSTILE[name], encoding="utf-8")
    with pytest.raises(CassetteError) as raised:
        Persister(Scrubber(None), "re-record").load_cassette(path, _vcr.serializer("yaml"))
    assert str(raised.value).startswith(f"cassette {path} is refused: a YAML anchor ("), raised.value
    assert " at line " in str(raised.value) and "a cassette holds no anchors or aliases" in str(raised.value)


def test_a_field_of_the_wrong_type_is_quoted_within_bounds(tmp_path: Path) -> None:
    """A message names the field with the beginning of its value, however large the value is."""
    path = tmp_path / "rep-1.yaml"
    path.write_text(BASE.replace("code: 200", "code: [" + ", ".join(["'" + "x" * 1000 + "'"] * 1000) + "]"))
    with pytest.raises(CassetteError) as raised:
        Persister(Scrubber(None), "re-record").load_cassette(path, _vcr.serializer("yaml"))
    assert "interactions[0].response.status.code is ['xxx" in str(raised.value)
    assert len(str(raised.value)) < 300, raised.value


@pytest.mark.parametrize("name", ["python tag", "python name", "python new", "unknown tag"])
def test_a_tag_that_would_build_an_object_is_refused_by_the_loader_itself(name: str) -> None:
    with pytest.raises(yaml.constructor.ConstructorError):
        _vcr.serializer("yaml").deserialize(HOSTILE[name])


@pytest.mark.parametrize("name", ["python tuple", "binary body"])
def test_what_the_safe_loader_can_build_is_built_as_it_builds_it(name: str) -> None:
    """Binary is YAML's own (the safe loader reads it); vcrpy adds the benign ``python/tuple`` (and ``python/str``)
    its old cassettes hold. Anchors and aliases, which it would read too, are refused (above)."""
    text = HOSTILE[name]
    value = _vcr.serializer("yaml").deserialize(text)
    if name == "python tuple":
        assert value == {"a": (1, 2)}
    else:
        assert same(value, yaml.load(text, Loader=yaml.SafeLoader))


@pytest.mark.parametrize(
    "text", ['{"interactions": [1]', "[]", '{"version": 1}', "\u0000"], ids=["cut", "list", "none", "nul"]
)
def test_a_broken_json_cassette_is_a_cassette_error_naming_the_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "rep-1.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CassetteError, match=r"rep-1\.json"):
        Persister(Scrubber(None), "re-record").load_cassette(path, _vcr.serializer("json"))


@pytest.mark.parametrize("fmt", ["yaml", "json"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_field_of_the_wrong_type_is_a_cassette_error_naming_file_and_field(
    tmp_path: Path, case: str, fmt: str
) -> None:
    """Every hand edit that gives a field the wrong type (``code: 'OK'``, a header that is not a list of strings, a
    body that is not text) is refused when the file loads, naming the file, the field and the fix; the replay's end
    to end case (tests/integration/cassette/test_corrupt_cassette_fields.py) shows the repetition erring in setup,
    never tolerated."""
    path = tmp_path / f"rep-2.{fmt}"
    data = yaml.safe_load(BASE)
    path.write_text(json.dumps(data, indent=4) if fmt == "json" else BASE, encoding="utf-8")
    persister = Persister(Scrubber(None), "to fix it, re-record")
    persister.load_cassette(path, _vcr.serializer(fmt))  # untouched, it loads
    edit, field = CASES[case]
    rewrite(path, edit)
    with pytest.raises(CassetteError) as raised:
        persister.load_cassette(path, _vcr.serializer(fmt))
    message = str(raised.value)
    assert message.startswith(f"cassette {path} is not a valid cassette"), message
    assert f"interactions[0].{field} " in message and message.endswith("; to fix it, re-record"), message
