"""Credentials inside structures (``secrets.structures``): URLs, form and multipart bodies, JSON fields, report data.

Each case of round two here leaked before: query and JSON names in upper case, form bodies stored verbatim.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qsl, urlsplit

import pytest

from pytest_consistency.secrets.names import REDACTED
from pytest_consistency.secrets.structures import redact_body, redact_strings, redact_url

KEY = "sk-test-unit-key-0123456789abcdef"


SHORT = "sk-1234"  # LiteLLM's documented master key


def test_url_credentials_and_query_parameters() -> None:
    url = "http://user:hunter2pass@h:8/v1/chat?key=abc123secret&x=1&access_token=zz9"
    cleaned = redact_url(url)
    assert "hunter2pass" not in cleaned and "abc123secret" not in cleaned and "zz9" not in cleaned
    assert cleaned.startswith("http://<redacted>@h:8/v1/chat?") and "x=1" in cleaned


def test_query_parameters_by_rule_whatever_their_case() -> None:
    cleaned = redact_url("http://h/v1/x?TOKEN=abc123zz&Api-Key=qq9&X-MasterKey=mk1&q=1")
    pairs = dict(parse_qsl(urlsplit(cleaned).query))
    assert pairs == {"TOKEN": REDACTED, "Api-Key": REDACTED, "X-MasterKey": REDACTED, "q": "1"}


def test_a_urls_fragment_loses_its_credential_pairs() -> None:
    cleaned = redact_url("https://app/cb#access_token=frag-tok-1&token_type=bearer&state=s1")
    # token_type has a credential word too: by rule, its value goes as well
    assert cleaned == f"https://app/cb#access_token={REDACTED}&token_type={REDACTED}&state=s1"
    assert redact_url("https://h/docs#section-2") == "https://h/docs#section-2"


def test_json_bodies_are_redacted_as_decoded_not_only_as_written() -> None:
    escaped = json.dumps({"messages": [{"content": f"my key is {KEY}"}]}, ensure_ascii=True).replace("s", "\\u0073")
    assert KEY not in json.loads(redact_body(escaped))["messages"][0]["content"]
    body = json.dumps({"api_key": "short-but-named", "token": "logprob-token"})
    assert json.loads(redact_body(body, fields=True))["api_key"] == "<redacted>"
    assert json.loads(redact_body(body))["token"] == "logprob-token"  # responses keep their fields


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
    from pytest_consistency.secrets.structures import body_credentials

    cleaned = redact_body(MULTIPART.encode(), fields=True).decode()
    assert "mp-secret-1q1q" not in cleaned and "mp-pw-2w2w" not in cleaned
    assert cleaned.count(REDACTED) == 2
    assert cleaned == MULTIPART.replace("mp-secret-1q1q", REDACTED).replace("mp-pw-2w2w", REDACTED)
    assert body_credentials(MULTIPART) == ["mp-secret-1q1q", "mp-pw-2w2w"]
    assert body_credentials(FORM) == ["s3cr3t-v4lue", "hunter2"]
    assert body_credentials(json.dumps({"a": [{"Api_Key": "j1"}], "max_tokens": 3})) == ["j1"]


def test_redact_strings_is_iterative() -> None:
    deep: object = KEY
    for _ in range(5000):
        deep = [deep]
    out = redact_strings({"a": deep})
    for _ in range(5001):
        out = out[0] if isinstance(out, list) else out["a"]
    assert out == "<redacted>"


def test_report_data_with_a_short_key_and_its_base64() -> None:
    data = {"answers": [f"the key is {SHORT}", base64.b64encode(SHORT.encode()).decode()], "model": "m-sk-1234x"}
    out = redact_strings(data, [SHORT])
    assert out["answers"][0] == f"the key is {REDACTED}" and SHORT not in json.dumps(out["answers"])
    assert out["model"] == "m-sk-1234x"
