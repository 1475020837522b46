"""Known secrets found by value (``secrets.literals``): every encoding the pre-write scan must see through, short keys.

Each case of round two here leaked before: keys under 8 characters never searched for, base64 of a key not at the
start of a blob, partly escaped keys in text.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest

from pytest_consistency.secrets.literals import find_secret, redact_text
from pytest_consistency.secrets.names import REDACTED
from pytest_consistency.secrets.structures import redact_body

KEY = "sk-test-unit-key-0123456789abcdef"


GATEWAY = "plain-gateway-secret-value-42"  # no key shape: known only because it was sent


SHORT = "sk-1234"  # LiteLLM's documented master key


def test_known_secret_in_every_encoding_is_redacted() -> None:
    secret = "plain-gateway-secret-value-42"  # no key shape: only known because it was sent
    for form in (secret, quote(secret, safe=""), base64.b64encode(secret.encode()).decode()):
        assert secret not in redact_text(f"x {form} y", [secret])
        assert form not in redact_text(f"x {form} y", [secret])


@pytest.mark.parametrize(
    "encoded",
    [
        KEY,
        json.dumps(KEY, ensure_ascii=True).replace("s", "\\u0073")[1:-1],
        "".join(f"%{ord(c):02X}" if c in "sk" else c for c in KEY),
        base64.b64encode(f":{KEY}".encode()).decode(),
        base64.b64encode(KEY.encode()).decode(),
    ],
)
def test_pre_write_scan_sees_every_encoding(encoded: str) -> None:
    assert find_secret({"interactions": [{"body": {"string": f"x{encoded}y"}}]}, [KEY])


def test_pre_write_scan_finds_nothing_in_clean_data() -> None:
    assert find_secret({"a": ["risk-assessment", b"bytes", 1]}, [KEY]) is None


@pytest.mark.parametrize(
    "text",
    [f"key {SHORT} here", f"Bearer {SHORT}", f'{{"k": "{SHORT}"}}', f"({SHORT}).", f"key={quote(SHORT)}"],
)
def test_a_short_known_key_is_redacted_as_a_whole_token(text: str) -> None:
    out = redact_text(text, [SHORT])
    assert SHORT not in out and REDACTED in out


@pytest.mark.parametrize("text", ["sk-12345 is another key", "task-sk-1234x", "sk-1234567", "xsk-1234"])
def test_a_short_key_is_not_found_inside_longer_tokens(text: str) -> None:
    assert redact_text(text, [SHORT]) == text


def test_base64_of_a_short_key_is_redacted() -> None:
    encoded = base64.b64encode(SHORT.encode()).decode()
    assert encoded.rstrip("=") not in redact_text(f"blob {encoded} end", [SHORT])


@pytest.mark.parametrize("word", ["dummy", "x", "1234", "none"])
def test_a_short_key_that_is_an_ordinary_word_is_redacted_only_where_it_stands_as_a_credential(word: str) -> None:
    prose = f"a {word} value, {word}; {word}"
    assert redact_text(prose, [word]) == prose
    for text in (f"Authorization: Bearer {word}", f"api_key={word}", f'"api_key": "{word}"', f"TOKEN: {word}"):
        out = redact_text(text, [word])
        assert REDACTED in out and not out.endswith(word) and not out.endswith(f'{word}"'), out


def test_the_pre_write_scan_sees_short_keys_as_tokens_only() -> None:
    assert find_secret({"body": f"Bearer {SHORT}"}, [SHORT])
    assert find_secret({"body": base64.b64encode(f":{SHORT}".encode()).decode()}, [SHORT])
    assert find_secret({"body": "sk-12345 and task-sk-1234x"}, [SHORT]) is None


def _decodes_to(text: str, secret: str) -> bool:
    """Whether any run of base64 characters in ``text``, read at any alignment, decodes to bytes holding ``secret``."""
    import re

    for run in re.findall(r"[A-Za-z0-9+/_\-]{4,}", text):
        for start in range(4):
            chunk = run[start:]
            chunk = chunk[: len(chunk) - len(chunk) % 4]
            for alt in (chunk, chunk.replace("-", "+").replace("_", "/")):
                try:
                    if secret.encode() in base64.b64decode(alt, validate=True):
                        return True
                except ValueError:
                    pass
    return False


@pytest.mark.parametrize("prefix", ["", "a", "ab", "my key is: "])
@pytest.mark.parametrize("urlsafe", [False, True])
def test_base64_of_a_key_anywhere_in_a_blob_is_redacted(prefix: str, urlsafe: bool) -> None:
    secret = "sk-ant-api03-Zx9_yW8-vU7tS6rQ5pO4nM3lK2jI1hG0"
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    blob = encode(f"{prefix}{secret} and more text".encode()).decode()
    assert _decodes_to(blob, secret)  # the check itself sees the key
    out = redact_text(f"answer: {blob}", [secret])
    assert not _decodes_to(out, secret), out


@pytest.mark.parametrize(
    "encoded",
    [
        "".join(f"%{ord(c):02X}" if c in "ae" else c for c in GATEWAY),  # partly URL-escaped
        "".join(f"\\u{ord(c):04x}" if c in "gs" else c for c in GATEWAY),  # partly JSON-escaped, in text
        "".join(f"&#{ord(c)};" if c == "-" else c for c in GATEWAY),  # HTML character references
        "".join(f"%{ord(c):02x}" for c in GATEWAY),  # every character, lowercase hex
        "".join(f"\\x{ord(c):02x}" if c in "pl" else c for c in GATEWAY),  # Python escapes
    ],
)
def test_a_known_secret_partly_escaped_in_text_is_redacted(encoded: str) -> None:
    out = redact_text(f"x {encoded} y", [GATEWAY])
    assert out == f"x {REDACTED} y", out


def test_a_known_secret_with_json_escaped_slashes_is_redacted() -> None:
    secret = "AbCdEf/GhIjKl+MnOp/QrSt"  # base64-like keys hold slashes; some JSON writers escape them
    assert redact_text("x " + secret.replace("/", "\\/") + " y", [secret]) == f"x {REDACTED} y"


@pytest.mark.parametrize("secret", ['pä-"-777abcdef', "naïve\\back12345", 'qu"ote-only-12345'])
def test_a_secret_json_escaped_without_ascii_escapes_is_found_and_redacted(secret: str) -> None:
    """An echo of a request body written with ``ensure_ascii=False`` (quotes and backslashes escaped, ``ä`` as it
    is), inside a response body: found by the pre-write scan and redacted (found missing by an adversarial review)."""
    import json

    from pytest_consistency.secrets.literals import find_secret

    inner = json.dumps({"password": secret}, ensure_ascii=False, separators=(",", ":"))
    body = json.dumps({"body": inner})
    assert json.loads(json.loads(body)["body"])["password"] == secret
    assert find_secret(json.loads(body)["body"], [secret])
    redacted = redact_body(body, [secret])
    assert secret not in json.loads(json.loads(redacted)["body"]).get("password", "")
    assert not find_secret(redacted, [secret]) and not find_secret(json.loads(redacted)["body"], [secret])
