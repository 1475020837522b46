"""``formats.encodable``: surrogates written as their escapes, everything else untouched."""

from __future__ import annotations

import json

from pytest_consistency.report.encodable import needs_escape, visible, visible_in_json


def test_a_lone_surrogate_becomes_the_six_characters_json_writes_for_it() -> None:
    text = "caf\udcff and \ud800"
    assert visible(text) == "caf\\udcff and \\ud800"
    assert visible(text) == json.dumps(text)[1:-1]  # the JSON report's own escape
    assert visible(text).encode("utf-8")


def test_other_text_is_returned_unchanged() -> None:
    text = "café ✓ \U0001f600 \\udcff"
    assert visible(text) is text and not needs_escape(text)


def test_inside_json_the_escape_decodes_to_the_visible_text() -> None:
    raw = json.dumps({"answer": "caf\udcff"}, ensure_ascii=False)
    assert json.loads(visible_in_json(raw)) == {"answer": "caf\\udcff"}
