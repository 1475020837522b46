"""The persister reads a cassette once and deserialises the text itself: the same result as vcrpy's own
``FilesystemPersister.load_cassette`` (which reads the file in text mode), on the shapes where the two could part."""

from __future__ import annotations

from pathlib import Path

import pytest
from vcr.persisters.filesystem import CassetteNotFoundError, FilesystemPersister
from vcr.serializers import yamlserializer

from pytest_consistency.cassette.cassettes import Persister, Scrubber

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
