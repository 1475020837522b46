"""Credential names and shapes (``secrets.names``): what is a secret by its name or its look, and what is not.

Names are judged in any case (``X-TOKEN``, ``x-masterkey``: a name rule once split ``X-TOKEN`` into letters) and
written as one word in lower case, as httpx records them: ``X-VaultToken`` arrives as ``x-vaulttoken``. A credential
word at the end of a one-word part makes the name a credential (``x-vaulttoken``, ``x-tenantkey``); a plural does not
(``tokens`` counts them), nor an ordinary word that happens to end like one (``monkey``). The headers the SDKs,
providers and gateways send on every call stay as they are.

``redact_shapes`` skips ``KEY_LIKE`` for a text that holds none of the shapes' first letters: it must redact exactly
what ``KEY_LIKE`` redacts, on every text (a missed key here is a key in a cassette or a report).
"""

from __future__ import annotations

import random

import pytest

from pytest_consistency.secrets import names
from pytest_consistency.secrets.literals import redact_text
from pytest_consistency.secrets.names import KEY_LIKE, REDACTED, header_credential, name_is_secret, redact_shapes

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


@pytest.mark.parametrize(
    "name",
    [
        "x-vaulttoken",  # httpx lowercases X-VaultToken
        "X-VaultToken",
        "x-vaulttoken2",
        "x-gatewaytoken",
        "x-tenantkey",
        "x-dbpassword",
        "x-vaultsecret",
        "x-vaultauth",
        "x-basicauth",
        "x-hubsignature",
        "x-usersession",
        "x-tenantcredentials",
        "x-authcookie",
        "vaulttoken",  # a JSON field or query parameter
    ],
)
def test_a_credential_word_ending_a_one_word_name_makes_it_a_credential(name: str) -> None:
    assert name_is_secret(name)


def test_the_value_of_such_a_header_is_a_known_secret() -> None:
    assert header_credential("x-vaulttoken", "hvs.CAESIJ7x2") == "hvs.CAESIJ7x2"


#: What the OpenAI and Anthropic SDKs, the providers, LiteLLM and the usual proxies send or answer on every call.
ORDINARY = [
    "content-type",
    "content-length",
    "content-encoding",
    "accept",
    "accept-encoding",
    "user-agent",
    "host",
    "connection",
    "keep-alive",
    "date",
    "server",
    "vary",
    "etag",
    "cache-control",
    "transfer-encoding",
    "strict-transport-security",
    "alt-svc",
    "cf-ray",
    "cf-cache-status",
    "x-request-id",
    "request-id",
    "x-stainless-arch",
    "x-stainless-async",
    "x-stainless-lang",
    "x-stainless-os",
    "x-stainless-package-version",
    "x-stainless-read-timeout",
    "x-stainless-retry-count",
    "x-stainless-runtime",
    "x-stainless-runtime-version",
    "x-stainless-timeout",
    "x-stainless-raw-response",
    "x-stainless-helper-method",
    "openai-processing-ms",
    "openai-version",
    "openai-model",
    "openai-beta",
    "x-envoy-upstream-service-time",
    "x-should-retry",
    "retry-after",
    "retry-after-ms",
    "x-ratelimit-limit-requests",
    "x-ratelimit-limit-tokens",
    "x-ratelimit-remaining-requests",
    "x-ratelimit-remaining-tokens",
    "x-ratelimit-reset-requests",
    "x-ratelimit-reset-tokens",
    "X-RateLimit-Remaining-Tokens",
    "anthropic-version",
    "anthropic-beta",
    "anthropic-ratelimit-requests-limit",
    "anthropic-ratelimit-requests-remaining",
    "anthropic-ratelimit-tokens-limit",
    "anthropic-ratelimit-tokens-remaining",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-input-tokens-limit",
    "anthropic-ratelimit-input-tokens-remaining",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-limit",
    "anthropic-ratelimit-output-tokens-remaining",
    "anthropic-ratelimit-output-tokens-reset",
    "llm_provider-x-ratelimit-remaining-tokens",
    "x-litellm-model-id",
    "x-litellm-response-cost",
    "x-litellm-attempted-retries",
    "helicone-id",
    "x-portkey-trace-id",
    "x-portkey-config",
    "x-portkey-provider",
    "x-portkey-cache-status",
    "traceparent",
    "tracestate",
    "x-amzn-trace-id",
    "access-control-expose-headers",
    "x-consistency-key-fingerprint",
    "x-consistency-body-digest",
    # Request fields a body carries on every call (JSON field names are judged by the same rule).
    "max_tokens",
    "max_completion_tokens",
    "max_output_tokens",
    "budget_tokens",
    "maxtokens",
    "monkey",
    "turnkey",
    "tokenizer",
]


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_header_and_field_names_stay_ordinary(name: str) -> None:
    assert not name_is_secret(name)
    assert header_credential(name, "0.25") is None


@pytest.mark.parametrize("value", ["bearer lower-tok-1a", "BEARER upper-tok-2b", "basic dXNlcjpsb3ctcHctM2M="])
def test_an_auth_scheme_in_any_case_makes_any_header_a_credential(value: str) -> None:
    from pytest_consistency.secrets.names import header_credential

    secret = header_credential("X-Upstream", value)
    assert secret in ("lower-tok-1a", "upper-tok-2b", "low-pw-3c")


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
    assert len(EXAMPLES) == len(names._KEY_SHAPES) + 4, "a shape was added: give it an example here"
    for example in (*EXAMPLES, *VARIANTS):
        assert KEY_LIKE.fullmatch(example), example
        assert names._KEY_START.match(example), f"{example!r}: the prefilter would miss this shape"


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
    assert len(body) >= names._PREFILTER_FROM and redact_shapes(body) is body
    leaked = body + ' "sk-proj-abcdefghij0123456789xyz"'
    assert "sk-proj" not in redact_shapes(leaked) and REDACTED in redact_shapes(leaked)
