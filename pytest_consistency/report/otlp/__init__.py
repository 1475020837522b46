"""OpenTelemetry traces of a session: its tasks, repetitions and model calls as GenAI spans (docs/traces.md).

Data flows one way: the typed session result -> span records (:mod:`.spans`, pure) -> the SDK's spans
(:mod:`.encode`) -> an OTLP collector (:mod:`.export`, ``--consistency-otel``) or the OTLP JSON file (the
``otlp-json`` format below: ``pytest-consistency show REPORT --format otlp-json``, ``--consistency-output
otlp-json=FILE``). Both paths build the same spans from the same result, so a report exported later gives the ids,
times and attributes the session sent. Nothing of OpenTelemetry is imported until a span is encoded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from pytest_consistency.report.otlp.semconv import latest_only
from pytest_consistency.report.otlp.spans import run_id_of, session_spans

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

    from pytest_consistency.model.result import SessionSummary

#: What is missing without the ``otel`` extra, and how to get it.
NEEDS_EXTRA = "the OpenTelemetry SDK is not installed; install it with pip install 'pytest-consistency[otel]'"


class OtelUnavailable(RuntimeError):
    """The ``otel`` extra is not installed."""


def sdk_missing() -> bool:
    """The SDK or its OTLP exporter cannot be imported (checked without importing them)."""
    from importlib.util import find_spec

    try:
        return any(
            find_spec(name) is None
            for name in ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http", "google.protobuf")
        )
    except (ImportError, ValueError):  # a parent package that is missing
        return True


def _redactor(secrets: Iterable[str]) -> Callable[[str], str]:
    """The redaction of every other output (known secrets in every encoding, credential shapes), compiled once and
    remembered per text: most texts of a session's spans (attribute names, URLs, models, fingerprints) repeat."""
    from pytest_consistency.secrets.literals import redactor
    from pytest_consistency.secrets.structures import memoised

    return memoised(redactor(secrets))


def sdk_spans(
    summary: SessionSummary,
    secrets: Iterable[str] = (),
    content: bool = False,
    environ: Mapping[str, str] | None = None,
) -> list[ReadableSpan]:
    """The session's spans as the SDK's ``ReadableSpan`` objects, redacted of ``secrets``."""
    if sdk_missing():
        raise OtelUnavailable(NEEDS_EXTRA)
    from pytest_consistency.report.otlp.encode import readable_spans, resource_of

    env = os.environ if environ is None else environ
    redact = _redactor(secrets)
    records = session_spans(summary, content=content, latest_only=latest_only(env))
    resource = resource_of(run_id_of(summary), summary.run.shard, redact)
    return readable_spans(records, resource, redact)


def export_session(
    summary: SessionSummary,
    secrets: Iterable[str] = (),
    content: bool = False,
    environ: Mapping[str, str] | None = None,
) -> str:
    """Send the session's spans to the collector the environment names; the one line to print about it."""
    from pytest_consistency.report.otlp.environment import sdk_disabled
    from pytest_consistency.report.otlp.export import line_of, send, target_of

    env = os.environ if environ is None else environ
    if sdk_disabled(env):  # the SDK's own switch, honoured as it would be
        return "otel: OTEL_SDK_DISABLED=true: nothing exported"
    target = target_of(env)
    spans = sdk_spans(summary, secrets, content, env)
    if not spans:
        return "otel: no task ran: nothing to export"
    outcome = send(spans, target)
    return line_of(outcome, target, len({span.context.trace_id for span in spans}))


class OtlpJsonFormat:
    """The ``otlp-json`` report format: the session's spans in the OTLP JSON encoding (one export request);
    ``content`` puts the prompts and completions on the model-call spans."""

    name = "otlp-json"
    suffix = ".otlp.json"

    def __init__(self, content: bool = False) -> None:
        self.content = content

    def render(self, summary: SessionSummary) -> str:
        from pytest_consistency.report.otlp.encode import otlp_json_text

        return otlp_json_text(sdk_spans(summary, content=self.content))


FORMAT = OtlpJsonFormat()
