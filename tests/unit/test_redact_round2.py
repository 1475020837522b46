"""Credential rules, round two: names in any case, form bodies, short keys, every encoding of a known secret.

Each case here leaked before: a name rule that split ``X-TOKEN`` into letters, form bodies stored verbatim, keys
under 8 characters never searched for, base64 of a key not at the start of a blob, partly escaped keys in text.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qsl, quote, urlsplit

import pytest

from pytest_consistency.secrets.redact import (
    REDACTED,
    find_secret,
    name_is_secret,
    redact_body,
    redact_strings,
    redact_text,
    redact_url,
)

GATEWAY = "plain-gateway-secret-value-42"  # no key shape: known only because it was sent
SHORT = "sk-1234"  # LiteLLM's documented master key


@pytest.mark.parametrize(
    "name",
    [
        "x-masterkey",  # httpx lowercases X-MasterKey
        "X-MasterKey",
        "X-TOKEN",  # requests keeps the case as written
        "COOKIE",
        "TOKEN",
        "X-API-KEY",
        "API_KEY",
        "CLIENT_SECRET",
        "PASSWORD",
        "PRIVATE-TOKEN",
        "X-AUTH-TOKEN",
        "x-csrftoken",
        "XAUTHTOKEN",
        "x-apikey",
        "accesskeyid",
        "Proxy-Authorization",
        "SET-COOKIE",
        "OPENAI-ORGANIZATION",
        "x-admin-passphrase",
        "sessionid",
    ],
)
def test_credential_names_in_any_case(name: str) -> None:
    assert name_is_secret(name)


@pytest.mark.parametrize(
    "name",
    [
        "MAX_TOKENS",
        "X-RateLimit-Remaining-Tokens",
        "x-ratelimit-remaining-tokens",
        "MONKEY",
        "turnkey",
        "Keep-Alive",
        "Content-Type",
        "X-Request-ID",
        "X-Consistency-Key-Fingerprint",
        "tokenizer",
        "KEYBOARD",
        "maxTokens",
    ],
)
def test_ordinary_names_stay_ordinary_in_any_case(name: str) -> None:
    assert not name_is_secret(name)


def test_query_parameters_by_rule_whatever_their_case() -> None:
    cleaned = redact_url("http://h/v1/x?TOKEN=abc123zz&Api-Key=qq9&X-MasterKey=mk1&q=1")
    pairs = dict(parse_qsl(urlsplit(cleaned).query))
    assert pairs == {"TOKEN": REDACTED, "Api-Key": REDACTED, "X-MasterKey": REDACTED, "q": "1"}


def test_json_fields_by_rule_whatever_their_case() -> None:
    body = json.dumps({"API_KEY": "a1", "ClientSecret": "b2", "Password": "c3", "max_tokens": 5})
    assert json.loads(redact_body(body, fields=True)) == {
        "API_KEY": REDACTED,
        "ClientSecret": REDACTED,
        "Password": REDACTED,
        "max_tokens": 5,
    }


FORM = "grant_type=client_credentials&client_id=agent-app&client_secret=s3cr3t-v4lue&password=hunter2&scope=a+b"


@pytest.mark.parametrize("as_bytes", [False, True])
def test_form_bodies_lose_credential_values_and_keep_the_rest_verbatim(as_bytes: bool) -> None:
    body = FORM.encode() if as_bytes else FORM
    cleaned = redact_body(body, fields=True)
    text = cleaned.decode() if as_bytes else cleaned
    assert "s3cr3t-v4lue" not in text and "hunter2" not in text
    assert text == (
        f"grant_type=client_credentials&client_id=agent-app&client_secret={REDACTED}&password={REDACTED}&scope=a+b"
    )


@pytest.mark.parametrize(
    "form", ["CLIENT_SECRET=zz-top-9&x=1", "client%5Fsecret=zz-top-9&x=1", "x=1&Refresh_Token=zz-top-9"]
)
def test_form_names_by_rule_whatever_their_case_or_escapes(form: str) -> None:
    assert "zz-top-9" not in redact_body(form, fields=True)


def test_text_that_merely_has_an_equals_sign_is_not_a_form() -> None:
    text = "the answer is x=1, see https://example.com/?q=2"
    assert redact_body(text, fields=True) == text


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


def test_report_data_with_a_short_key_and_its_base64() -> None:
    data = {"answers": [f"the key is {SHORT}", base64.b64encode(SHORT.encode()).decode()], "model": "m-sk-1234x"}
    out = redact_strings(data, [SHORT])
    assert out["answers"][0] == f"the key is {REDACTED}" and SHORT not in json.dumps(out["answers"])
    assert out["model"] == "m-sk-1234x"


MULTIPART = (
    "--b0undary\r\n"
    'Content-Disposition: form-data; name="client_secret"\r\n\r\n'
    "mp-secret-1q1q\r\n"
    "--b0undary\r\n"
    'Content-Disposition: form-data; name="PASSWORD"\r\nContent-Type: text/plain\r\n\r\n'
    "mp-pw-2w2w\r\n"
    "--b0undary\r\n"
    'Content-Disposition: form-data; name="purpose"\r\n\r\n'
    "fine-tune\r\n"
    "--b0undary\r\n"
    'Content-Disposition: form-data; name="file"; filename="token.jsonl"\r\n\r\n'
    '{"prompt": "hi"}\r\n'
    "--b0undary--\r\n"
)


def test_multipart_form_fields_lose_credential_values_and_keep_files_and_the_rest() -> None:
    from pytest_consistency.secrets.redact import body_credentials

    cleaned = redact_body(MULTIPART.encode(), fields=True).decode()
    assert "mp-secret-1q1q" not in cleaned and "mp-pw-2w2w" not in cleaned
    assert cleaned.count(REDACTED) == 2
    assert cleaned == MULTIPART.replace("mp-secret-1q1q", REDACTED).replace("mp-pw-2w2w", REDACTED)
    assert body_credentials(MULTIPART) == ["mp-secret-1q1q", "mp-pw-2w2w"]
    assert body_credentials(FORM) == ["s3cr3t-v4lue", "hunter2"]
    assert body_credentials(json.dumps({"a": [{"Api_Key": "j1"}], "max_tokens": 3})) == ["j1"]


def test_every_credential_a_request_carries() -> None:
    from pytest_consistency.secrets.keys import credentials_in

    headers = {
        "Authorization": "Bearer sk-1234",
        "X-TOKEN": "tok-1",
        "COOKIE": "sid=ck-2; theme=dark",
        "content-type": "application/x-www-form-urlencoded",
        "x-ratelimit-remaining-tokens": "99",
    }
    found = credentials_in(headers, "http://u:pw-3@h/v1?TOKEN=q-4", "client_secret=f-5&scope=read")
    assert found == ["sk-1234", "tok-1", "sid=ck-2; theme=dark", "ck-2", "dark", "pw-3", "q-4", "f-5"]


@pytest.mark.parametrize("value", ["bearer lower-tok-1a", "BEARER upper-tok-2b", "basic dXNlcjpsb3ctcHctM2M="])
def test_an_auth_scheme_in_any_case_makes_any_header_a_credential(value: str) -> None:
    from pytest_consistency.secrets.redact import header_credential

    secret = header_credential("X-Upstream", value)
    assert secret in ("lower-tok-1a", "upper-tok-2b", "low-pw-3c")


def test_a_known_secret_with_json_escaped_slashes_is_redacted() -> None:
    secret = "AbCdEf/GhIjKl+MnOp/QrSt"  # base64-like keys hold slashes; some JSON writers escape them
    assert redact_text("x " + secret.replace("/", "\\/") + " y", [secret]) == f"x {REDACTED} y"


def test_a_urls_fragment_loses_its_credential_pairs() -> None:
    cleaned = redact_url("https://app/cb#access_token=frag-tok-1&token_type=bearer&state=s1")
    # token_type has a credential word too: by rule, its value goes as well
    assert cleaned == f"https://app/cb#access_token={REDACTED}&token_type={REDACTED}&state=s1"
    assert redact_url("https://h/docs#section-2") == "https://h/docs#section-2"


@pytest.mark.parametrize("secret", ['pä-"-777abcdef', "naïve\\back12345", 'qu"ote-only-12345'])
def test_a_secret_json_escaped_without_ascii_escapes_is_found_and_redacted(secret: str) -> None:
    """An echo of a request body written with ``ensure_ascii=False`` (quotes and backslashes escaped, ``ä`` as it
    is), inside a response body: found by the pre-write scan and redacted (found missing by an adversarial review)."""
    import json

    from pytest_consistency.secrets.redact import find_secret, redact_body

    inner = json.dumps({"password": secret}, ensure_ascii=False, separators=(",", ":"))
    body = json.dumps({"body": inner})
    assert json.loads(json.loads(body)["body"])["password"] == secret
    assert find_secret(json.loads(body)["body"], [secret])
    redacted = redact_body(body, [secret])
    assert secret not in json.loads(json.loads(redacted)["body"]).get("password", "")
    assert not find_secret(redacted, [secret]) and not find_secret(json.loads(redacted)["body"], [secret])
