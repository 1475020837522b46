"""Credential rules: what is a secret, what is not, and every encoding the pre-write scan must see through."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest

from pytest_consistency.secrets.keys import credential_of, key_problem
from pytest_consistency.secrets.redact import (
    find_secret,
    name_is_secret,
    redact_body,
    redact_strings,
    redact_text,
    redact_url,
)

KEY = "sk-test-unit-key-0123456789abcdef"


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "helicone-auth",
        "x-portkey-api-key",
        "x-goog-api-key",
        "X-Foo-Token",
        "api_key",
        "apiKey",
        "access_token",
        "client_secret",
        "cookie",
        "set-cookie",
        "openai-organization",
        "ocp-apim-subscription-key",
        "x-session",
        "password",
        "sig",
    ],
)
def test_credential_names_by_rule(name: str) -> None:
    assert name_is_secret(name)


@pytest.mark.parametrize(
    "name",
    [
        "content-type",
        "x-ratelimit-remaining-tokens",
        "max_tokens",
        "x-stainless-retry-count",
        "keep-alive",
        "x-consistency-key-fingerprint",
        "x-request-id",
        "model",
        "monkey",
    ],
)
def test_ordinary_names_are_not_credentials(name: str) -> None:
    assert not name_is_secret(name)


@pytest.mark.parametrize(
    "text",
    [
        "see the risk-assessment and disk-usage-report",
        "task-2024-0117",
        "task-9999-ZZZZ",
        "sk-learn-pipeline-step",
        "ask-2024-report-draft",
        "a desk-0123456789-abcdefghij note",
    ],
)
def test_words_that_merely_contain_sk_are_kept(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(
    "text", [KEY, f"key={KEY}.", "masked sk-te****cdef in an error", "Bearer abcdefgh12345678", "Basic dXNlcjpwYXNz"]
)
def test_key_shapes_are_redacted(text: str) -> None:
    assert "<redacted>" in redact_text(text)
    assert KEY not in redact_text(text)


def test_known_secret_in_every_encoding_is_redacted() -> None:
    secret = "plain-gateway-secret-value-42"  # no key shape: only known because it was sent
    for form in (secret, quote(secret, safe=""), base64.b64encode(secret.encode()).decode()):
        assert secret not in redact_text(f"x {form} y", [secret])
        assert form not in redact_text(f"x {form} y", [secret])


def test_url_credentials_and_query_parameters() -> None:
    url = "http://user:hunter2pass@h:8/v1/chat?key=abc123secret&x=1&access_token=zz9"
    cleaned = redact_url(url)
    assert "hunter2pass" not in cleaned and "abc123secret" not in cleaned and "zz9" not in cleaned
    assert cleaned.startswith("http://<redacted>@h:8/v1/chat?") and "x=1" in cleaned


def test_json_bodies_are_redacted_as_decoded_not_only_as_written() -> None:
    escaped = json.dumps({"messages": [{"content": f"my key is {KEY}"}]}, ensure_ascii=True).replace("s", "\\u0073")
    assert KEY not in json.loads(redact_body(escaped))["messages"][0]["content"]
    body = json.dumps({"api_key": "short-but-named", "token": "logprob-token"})
    assert json.loads(redact_body(body, fields=True))["api_key"] == "<redacted>"
    assert json.loads(redact_body(body))["token"] == "logprob-token"  # responses keep their fields


def test_redact_strings_is_iterative() -> None:
    deep: object = KEY
    for _ in range(5000):
        deep = [deep]
    out = redact_strings({"a": deep})
    for _ in range(5001):
        out = out[0] if isinstance(out, list) else out["a"]
    assert out == "<redacted>"


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


def test_credential_of_prefers_authorization_then_any_credential_header_then_the_url() -> None:
    assert credential_of({"authorization": f"Bearer {KEY}", "helicone-auth": "Bearer other-123456"}) == KEY
    assert credential_of({"x-portkey-api-key": "pk-secret-1"}) == "pk-secret-1"
    assert credential_of({}, "http://h/v1/x?key=from-query-1") == "from-query-1"


@pytest.mark.parametrize("key", [KEY + "\n", " " + KEY, KEY[:10] + " " + KEY[10:], KEY + "\u201d"])
def test_key_problems_never_show_the_key(key: str) -> None:
    problem = key_problem(key)
    assert problem and KEY[:12] not in problem
    assert key_problem(KEY) is None
