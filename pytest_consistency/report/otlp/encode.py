"""Span records as the OpenTelemetry SDK's spans, and as OTLP JSON: the only module here that imports the SDK.

The SDK's :class:`ReadableSpan` is built directly (not through a tracer) because every id and time is already known:
the ids are derived (:mod:`.spans`) and the times are the recorded ones. The OTLP JSON encoding is the SDK's own
protobuf encoding (``encode_spans``) written in protobuf's JSON mapping, with the two changes the OTLP
specification makes to that mapping: trace and span ids are hex, not base64, and enums are integers.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_consistency.report.otlp.semconv import SCHEMA_URL, SCOPE
from pytest_consistency.report.otlp.spans import SpanRecord

if TYPE_CHECKING:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan

#: ``service.name`` when neither ``OTEL_SERVICE_NAME`` nor ``OTEL_RESOURCE_ATTRIBUTES`` names the service.
SERVICE_NAME = "pytest-consistency"
#: OTLP JSON fields that carry ids (bytes): hex in OTLP JSON.
ID_FIELDS = frozenset({"traceId", "spanId", "parentSpanId"})

Redact = Callable[[str], str]


def version() -> str:
    """The installed plugin's version (the scope's and the resource's), read from its metadata."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("pytest-consistency")
    except PackageNotFoundError:  # run from a source tree that was not installed
        return "unknown"


def resource_of(run_id: str, shard: str | None, redact: Redact) -> Resource:
    """The resource of every span: what ``OTEL_RESOURCE_ATTRIBUTES`` and ``OTEL_SERVICE_NAME`` say (read by the SDK),
    ``service.name`` pytest-consistency unless they name one, and the run; every text value redacted."""
    from opentelemetry.sdk.resources import OTELResourceDetector, Resource

    detected = Resource.create()
    given = OTELResourceDetector().detect().attributes  # what the environment names itself
    attributes = dict(detected.attributes)
    if "service.name" not in given:
        attributes["service.name"] = SERVICE_NAME
    if "service.instance.id" not in given:  # the SDK's is random: the run's keeps a report's spans the same
        attributes["service.instance.id"] = run_id if shard is None else f"{run_id}/{shard}"
    attributes["consistency.run.id"] = run_id
    attributes["consistency.version"] = version()
    if shard is not None:
        attributes["consistency.shard"] = shard
    return Resource(_redacted(attributes, redact), detected.schema_url)


def readable_spans(records: Iterable[SpanRecord], resource: Resource, redact: Redact) -> list[ReadableSpan]:
    """The SDK's spans for ``records``; every name, text attribute and status description redacted."""
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    scope = InstrumentationScope(SCOPE, version(), SCHEMA_URL)
    sampled = TraceFlags(TraceFlags.SAMPLED)
    kinds = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}
    spans = []
    for record in records:
        context = SpanContext(record.trace_id, record.span_id, is_remote=False, trace_flags=sampled)
        parent = (
            None
            if record.parent_id is None
            else SpanContext(record.trace_id, record.parent_id, is_remote=False, trace_flags=sampled)
        )
        status = Status(StatusCode.ERROR, redact(record.error)) if record.error is not None else Status()
        spans.append(
            ReadableSpan(
                name=redact(record.name),
                context=context,
                parent=parent,
                resource=resource,
                attributes=_redacted(record.attributes, redact),
                kind=kinds[record.kind],
                status=status,
                start_time=record.start_ns,
                end_time=record.end_ns,
                instrumentation_scope=scope,
            )
        )
    return spans


def _redacted(attributes: Mapping[str, Any], redact: Redact) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in attributes.items():
        if isinstance(value, str):
            value = redact(value)
        elif isinstance(value, (list, tuple)):
            value = [redact(item) if isinstance(item, str) else item for item in value]
        out[redact(name)] = value
    return out


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """The OTLP JSON encoding of ``spans`` (an ``ExportTraceServiceRequest``), as the OTLP/HTTP JSON body."""
    from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    data: dict[str, Any] = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource_spans in data.get("resourceSpans", ()):
        for scope_spans in resource_spans.get("scopeSpans", ()):
            for span in scope_spans.get("spans", ()):
                _hex_ids(span)
                for link in span.get("links", ()):
                    _hex_ids(link)
    return data


def _hex_ids(item: dict[str, Any]) -> None:
    for name in ID_FIELDS & set(item):
        item[name] = base64.b64decode(item[name]).hex()


def otlp_json_text(spans: Sequence[ReadableSpan]) -> str:
    return json.dumps(otlp_json(spans), ensure_ascii=False, indent=1) + "\n"
