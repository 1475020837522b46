"""The OpenTelemetry names the traces use: the GenAI semantic conventions, and the plugin's own ``consistency.*``.

Followed: the GenAI semantic conventions of OpenTelemetry semantic conventions **v1.41.0** (status Development).
Their transition plan asks an instrumentation to keep what it emitted by default and to emit only the latest
experimental version when ``OTEL_SEMCONV_STABILITY_OPT_IN`` lists ``gen_ai_latest_experimental``. This plugin had
no earlier default, so it emits v1.41.0 either way; by default it also sets ``gen_ai.system`` (the v1.36.0 name of
``gen_ai.provider.name``) that tools written for v1.36.0 read, and with the opt-in it does not. Content (prompts and
completions, only with ``--consistency-otel-content``) is on the span as ``gen_ai.input.messages`` and
``gen_ai.output.messages``, JSON in v1.41.0's message shape.

Nothing here imports OpenTelemetry: these are names and a reading of the environment.
"""

from __future__ import annotations

from collections.abc import Mapping

SEMCONV_VERSION = "1.41.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
#: The value of ``OTEL_SEMCONV_STABILITY_OPT_IN`` that drops the v1.36.0 names.
LATEST_EXPERIMENTAL = "gen_ai_latest_experimental"
#: The instrumentation scope of every span.
SCOPE = "pytest_consistency"

#: Endpoint (the end of a call's URL) -> ``gen_ai.operation.name``; a call to any other endpoint (``/models``) is a
#: plain HTTP client span.
OPERATIONS = (
    ("/chat/completions", "chat"),
    ("/responses", "chat"),
    ("/v1/messages", "chat"),
    ("/completions", "text_completion"),
    ("/embeddings", "embeddings"),
)

#: Sampling parameter as sent -> its request attribute (the parameters a call record keeps, :mod:`.canonical`).
SAMPLING_ATTRIBUTES = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "seed": "gen_ai.request.seed",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "n": "gen_ai.request.choice.count",
}


def latest_only(environ: Mapping[str, str]) -> bool:
    """``OTEL_SEMCONV_STABILITY_OPT_IN`` asks for the latest experimental GenAI conventions only."""
    values = environ.get("OTEL_SEMCONV_STABILITY_OPT_IN", "")
    return LATEST_EXPERIMENTAL in {value.strip() for value in values.split(",")}


def operation_of(url: str) -> str | None:
    """The ``gen_ai.operation.name`` of a call to ``url``, or None for an endpoint that is not a model operation."""
    for endpoint, name in OPERATIONS:
        if url.endswith(endpoint):
            return name
    return None
