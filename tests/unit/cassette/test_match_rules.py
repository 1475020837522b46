"""Match rules: JSON paths and patterns left out of replay matching, and where two bodies first differ."""

from __future__ import annotations

from pytest_consistency.cassette.match_rules import compile_rules, first_difference, normalise

BODY = {
    "model": "m",
    "messages": [
        {"role": "system", "content": "now is 2026-12-01T20:00:00Z", "name": "a1b2"},
        {"role": "user", "content": "find items under 20"},
    ],
    "metadata": {"request_id": "r-123", "team": "x"},
}


def test_a_path_leaves_a_field_out_wherever_it_reaches() -> None:
    rules = compile_rules(("metadata.request_id", "messages.*.name"))
    out = normalise(BODY, rules)
    assert out["metadata"] == {"team": "x"}
    assert all("name" not in message for message in out["messages"])
    assert BODY["metadata"]["request_id"] == "r-123"  # the input is not changed


def test_an_index_path_and_a_missing_path_are_fine() -> None:
    assert normalise(BODY, compile_rules(("messages.0",)))["messages"] == [BODY["messages"][1]]
    assert normalise(BODY, compile_rules(("messages.7.content", "nope.deeper"))) == BODY


def test_a_pattern_masks_every_match_in_every_string() -> None:
    out = normalise(BODY, compile_rules((r"re:\d{4}-\d\d-\d\dT[0-9:]+Z",)))
    assert out["messages"][0]["content"] == "now is <ignored>"
    assert out["messages"][1]["content"] == "find items under 20"


def test_the_hook_has_the_last_word_and_none_leaves_the_body() -> None:
    assert normalise({"a": 1}, compile_rules((), lambda body, url: {"b": 2})) == {"b": 2}
    assert normalise({"a": 1}, compile_rules((), lambda body, url: None)) == {"a": 1}


def test_the_first_difference_names_the_path_and_both_values() -> None:
    other = {**BODY, "messages": [BODY["messages"][0], {"role": "user", "content": "find items under 30"}]}
    assert first_difference(BODY, other) == (
        "messages[1].content: recorded 'find items under 20', sent 'find items under 30'"
    )
    assert first_difference(BODY, BODY) is None
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == "b: not recorded, sent 2"
    assert first_difference([1, 2], [1]) == "body: 2 items recorded, 1 sent"
    assert first_difference({"a": 1}, {"a": 1.0}) == "a: recorded 1, sent 1.0"
    long = first_difference("x" * 500, "y")
    assert long is not None and len(long) < 300
