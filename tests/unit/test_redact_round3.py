"""Names written as one word in lower case, as httpx records them: ``X-VaultToken`` arrives as ``x-vaulttoken``.

A credential word at the end of a one-word part makes the name a credential (``x-vaulttoken``, ``x-tenantkey``);
a plural does not (``tokens`` counts them), nor an ordinary word that happens to end like one (``monkey``). The
headers the SDKs, providers and gateways send on every call stay as they are.
"""

from __future__ import annotations

import pytest

from pytest_consistency.secrets.redact import header_credential, name_is_secret


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
