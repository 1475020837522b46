"""``redact_shapes`` skips ``KEY_LIKE`` for a text that holds none of the shapes' first letters: it must redact
exactly what ``KEY_LIKE`` redacts, on every text (a missed key here is a key in a cassette or a report)."""

from __future__ import annotations

import random

import pytest

from pytest_consistency.secrets import redact
from pytest_consistency.secrets.redact import KEY_LIKE, REDACTED, redact_shapes

#: One credential per shape of ``_KEY_SHAPES``, in its order, then one per scheme of ``_SCHEMES``.
EXAMPLES = (
    "sk-proj-abcdefghij0123456789xyz",
    "sk-te****cdef",
    "AIza" + "B1" * 17 + "c",
    "ghp_" + "a1" * 18,
    "hf_" + "Z9" * 15,
    "AKIA" + "ABCDEFGH12345678",
    "xoxb-1234567890ab",
    "Bearer abcdefgh123",
    "Basic dXNlcjpwYXNzd29yZA==",
    "Token 0123456789abcdef",
    "Bot AbCdEfGh.IjKl",
)
#: Every letter a shape's first characters may take (``gh[pousr]_``, ``AKIA|ASIA``, ``xox[abprs]-``).
VARIANTS = (
    *(f"gh{c}_" + "a1" * 18 for c in "pousr"),
    "ASIA" + "ABCDEFGH12345678",
    *(f"xox{c}-1234567890ab" for c in "abprs"),
    "sk-ant-api03-abcdefghij0123456789",
)
PIECES = [
    *EXAMPLES,
    *VARIANTS,
    *(e[:4] for e in EXAMPLES),  # beginnings without the rest
    "sk-",
    "risk-assessment",
    "gh",
    "Bo",
    "Tok",
    " ",
    "\n",
    '"',
    ":",
    "-",
    "_",
    "*",
    "=",
    "/",
    "é",
]
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/ \n\"'{}[],*=+~é"


def test_every_shape_begins_as_the_prefilter_expects() -> None:
    assert len(EXAMPLES) == len(redact._KEY_SHAPES) + 4, "a shape was added: give it an example here"
    for example in (*EXAMPLES, *VARIANTS):
        assert KEY_LIKE.fullmatch(example), example
        assert redact._KEY_START.match(example), f"{example!r}: the prefilter would miss this shape"


@pytest.mark.parametrize("seed", range(4))
def test_redact_shapes_equals_key_like_on_random_texts(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(5000):
        parts = []
        for _ in range(rng.randrange(0, 40)):
            if rng.random() < 0.2:
                parts.append(rng.choice(PIECES))
            else:
                parts.append("".join(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 12))))
        text = "".join(parts)
        assert redact_shapes(text) == KEY_LIKE.sub(REDACTED, text), text


def test_a_long_text_without_a_shape_is_returned_as_it_is_and_one_with_a_key_is_redacted() -> None:
    body = '{"id": "chatcmpl-1", "choices": [{"message": {"role": "assistant", "content": "OK"}}]}' * 3
    assert len(body) >= redact._PREFILTER_FROM and redact_shapes(body) is body
    leaked = body + ' "sk-proj-abcdefghij0123456789xyz"'
    assert "sk-proj" not in redact_shapes(leaked) and REDACTED in redact_shapes(leaked)
