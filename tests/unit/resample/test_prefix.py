from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.resample.prefix import PrefixError, first_difference, interactions, is_complete, write_prefix


def exchange(i: int, body: str | None = None) -> dict[str, Any]:
    return {
        "request": {"method": "POST", "uri": "http://h/v1/chat/completions", "body": body or f'{{"step":{i}}}'},
        "response": {"status": {"code": 200, "message": "OK"}, "body": {"string": f'{{"reply":{i}}}'}},
    }


def test_prefix_written_is_the_source_byte_for_byte_and_reads_back(tmp_path: Path) -> None:
    source = [exchange(1), exchange(2, "ünïcode \\u00e9 'quoted'"), exchange(3)]
    path = tmp_path / "resample" / "rep1@3" / "sample-1.yaml"
    write_prefix(source, 2, path)
    copied = interactions(path)
    assert copied == source[:2]
    assert first_difference(source, copied, 2) is None
    assert not is_complete(copied, 2) and is_complete([*copied, exchange(9)], 2)


def test_one_byte_off_in_a_request_or_response_names_the_step() -> None:
    source = [exchange(1), exchange(2), exchange(3)]
    changed = [exchange(1), exchange(2, '{"step":3}'), exchange(3)]
    assert first_difference(source, changed, 3) == 2
    answered = [exchange(1), exchange(2), exchange(3)]
    answered[0]["response"]["body"]["string"] = '{"reply":7}'
    assert first_difference(source, answered, 3) == 1
    assert first_difference(source, source[:1], 2) == 2  # shorter than the prefix


def test_not_a_cassette(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just\n- a list\n")
    with pytest.raises(PrefixError, match="is not a vcrpy cassette"):
        interactions(bad)
    bad.write_text("interactions: [\n")
    with pytest.raises(PrefixError, match="cannot read cassette"):
        interactions(bad)


def test_a_retried_failed_attempt_is_an_exchange_but_not_a_step() -> None:
    from pytest_consistency.resample.prefix import step_exchanges

    limited = exchange(1)
    limited["response"]["status"] = {"code": 429, "message": "Too Many Requests"}
    models = {"request": {"method": "GET", "uri": "http://h/v1/models"}, "response": {"status": {"code": 200}}}
    messages = exchange(4)
    messages["request"]["uri"] = "http://h/v1/messages?beta=true"
    source = [limited, exchange(1), models, exchange(2), messages]
    assert step_exchanges(source) == [1, 3, 4]  # step 1 is exchange 1 (after the 429), step 3 the Messages call


def test_a_json_source_is_read_as_json_with_characters_beyond_the_bmp_intact(tmp_path: Path) -> None:
    """vcrpy's JSON writer escapes an emoji as a surrogate pair, which PyYAML reads as two lone surrogates."""
    from vcr.serializers import jsonserializer

    source = [exchange(1, '{"content": "smile \U0001f600"}'), exchange(2)]
    path = tmp_path / "rep-1.json"
    path.write_text(jsonserializer.serialize({"interactions": source, "version": 1}))
    assert "\\ud83d\\ude00" in path.read_text()
    assert interactions(path) == source
    path.write_text("{not json")
    with pytest.raises(PrefixError, match="cannot read cassette"):
        interactions(path)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("l0: &l0 [lol, lol]\nl1: &l1 [*l0, *l0]\ninteractions: [{request: *l1}]\n", "a YAML anchor ('&l0')"),
        ("interactions:\n- request: &r {uri: x}\n", "a YAML anchor ('&r')"),
        ("interactions: [{request: " + "[" * 40 + "]" * 40 + "}]\n", "nested more than 32 levels"),
    ],
    ids=["billion laughs", "anchor alone", "deep"],
)
def test_a_hostile_source_is_refused_within_the_cassettes_bounds(tmp_path: Path, text: str, words: str) -> None:
    """A resample reads the source cassette with PyYAML itself: within the bounds every cassette is read in."""
    source = tmp_path / "rep-1.yaml"
    source.write_text(text)
    with pytest.raises(PrefixError, match="cannot read cassette") as raised:
        interactions(source)
    assert words in str(raised.value) and len(str(raised.value)) < 600, raised.value
