"""analysis.cause.spans: the differing span a person reads, never cut inside a word (a key is shown whole)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_consistency.analysis.cause.spans import CONTEXT, differing, evidence, quoted
from pytest_consistency.model.cause import MAX_PART_TEXT


def test_a_clock_at_the_end_of_a_long_prompt_is_shown_with_its_context() -> None:
    prompt = "You are a careful assistant. " * 12
    a, b = differing(prompt + "now: 09:13", prompt + "now: 09:26")
    assert a.startswith("…") and a.endswith("09:13") and b.endswith("09:26")
    assert len(a) < 2 * CONTEXT + 20 and "now: 09:13" in a


def test_a_key_near_the_difference_is_shown_whole_or_not_at_all() -> None:
    key = "sk-" + "a1B2c3D4" * 5
    a, b = differing(f"Authorization {key} x" + " filler" * 3 + " A", f"Authorization {key} x" + " filler" * 3 + " B")
    for side in (a, b):
        assert key in side or ("sk-" not in side and "a1B2" not in side)


@settings(max_examples=200, derandomize=True, database=None)
@given(st.text("ab .:-", max_size=120), st.text("ab .:-", max_size=120), st.text("ab .:-", max_size=120))
def test_every_span_starts_and_ends_at_a_word_edge_and_keeps_the_difference(head: str, x: str, y: str) -> None:
    left, right = head + x, head + y
    if left == right:
        return
    a, b = differing(left, right)
    assert a != b  # the difference itself is always shown
    for side, text in ((a, left), (b, right)):
        body = side.removeprefix("…").removesuffix("…")
        assert body in text
        start = text.index(body) if side.startswith("…") else 0
        if start:  # not inside a word: the character before the span is not a word character or the span begins one
            assert not (text[start - 1].isalnum() and body[:1].isalnum())


def test_texts_equal_as_kept_say_the_difference_lies_beyond_them() -> None:
    kept = "x" * MAX_PART_TEXT
    sides = evidence((1, 2), kept, kept)
    assert all(side.beyond for side in sides)
    assert quoted(sides) == f"the first {MAX_PART_TEXT} characters are the same; the texts differ after them"
    assert evidence((1, 2), None, "a") == ()


def test_the_quote_names_each_repetition() -> None:
    assert quoted(evidence((1, 3), "at 09:13", "at 09:26")) == '"at 09:13" (repetition 1) vs "at 09:26" (repetition 3)'
