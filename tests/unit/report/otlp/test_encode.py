"""The SDK's spans of a session (report/otlp/encode.py through ``report.otlp.sdk_spans``), as the OpenTelemetry SDK's
in-memory exporter receives them: the records' ids, parents, kinds, times and attributes, the semantic conventions'
opt-in, content only when asked, the resource, the redaction of every credential the session knows (in a name, an
attribute, a status, the resource), and the OTLP JSON encoding (ids hex, enums integers).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import otlp_records as records
import pytest
from collector import json_spans, protobuf_spans
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import RunFacts, SessionSummary
from pytest_consistency.model.trajectory import Decision, Message, ToolCall
from pytest_consistency.report.otlp import FORMAT, OtlpJsonFormat, sdk_spans
from pytest_consistency.report.otlp.encode import SERVICE_NAME, otlp_json, otlp_json_text
from pytest_consistency.report.otlp.semconv import SCHEMA_URL, SCOPE
from pytest_consistency.report.otlp.spans import session_spans

T0 = 1_750_000_000.0
#: A credential the session knows that no credential-shaped pattern would catch: only the known-secret list does.
SECRET = "zebraQuartz7761private"
OTEL_VARIABLES = ("OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_SEMCONV_STABILITY_OPT_IN")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK reads the resource from the environment: start from none of its variables."""
    for name in OTEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def call(**fields: Any) -> CallRecord:
    """A successful attempt to a loopback route, started at ``T0``."""
    local = {"url": "http://127.0.0.1:9/v1/chat/completions", "base_url": "http://127.0.0.1:9/v1"}
    defaults = {**local, "model_served": "gpt-test", "prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    return records.call(**{**defaults, "latency_ms": 120.0, "started_at": T0, **fields})


def rep(task: str, repeat: int, calls: list[CallRecord], n: int = 2, **fields: Any) -> RepetitionResult:
    """As :func:`otlp_records.rep`, the repetition started and stopped at times of its own."""
    return records.rep(task, repeat, calls, n=n, started=T0 + repeat, stopped=T0 + repeat + 1, **fields)


def small_summary(run_id: str = "run-7", shard: str | None = None) -> SessionSummary:
    reps = [
        rep("t", 1, [call(started_at=T0 + 1.1), call(started_at=T0 + 1.4, status=429, decision=None)]),
        rep("t", 2, [call(started_at=T0 + 2.1)], outcome="failed", message="AssertionError: blue"),
    ]
    return build_summary(reps, run=RunFacts(run_id=run_id, shard=shard))


def exported(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    """The spans as the SDK's in-memory exporter holds them after an export."""
    exporter = InMemorySpanExporter()
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    return list(exporter.get_finished_spans())


def tupled(attributes: Any) -> dict[str, Any]:
    return {k: (tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in attributes.items()}


def test_the_in_memory_exporter_receives_the_records_ids_parents_kinds_times_and_attributes() -> None:
    summary = small_summary()
    records = session_spans(summary)
    spans = exported(sdk_spans(summary))
    assert len(spans) == len(records) == 1 + 2 + 3
    for record, span in zip(records, spans, strict=True):
        assert span.name == record.name
        assert span.context is not None
        assert (span.context.trace_id, span.context.span_id) == (record.trace_id, record.span_id)
        assert (span.parent.span_id if span.parent else None) == record.parent_id
        assert span.parent is None or span.parent.trace_id == record.trace_id
        assert span.kind == {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}[record.kind]
        assert (span.start_time, span.end_time) == (record.start_ns, record.end_ns)
        assert tupled(span.attributes or {}) == tupled(record.attributes)
        if record.error is None:
            assert span.status.status_code == StatusCode.UNSET
        else:
            assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, record.error)
        assert span.context.trace_flags.sampled
        assert span.instrumentation_scope is not None
        assert (span.instrumentation_scope.name, span.instrumentation_scope.schema_url) == (SCOPE, SCHEMA_URL)
    limited = [s for s in spans if (s.attributes or {}).get("error.type") == "429"]
    assert len(limited) == 1 and limited[0].status.status_code == StatusCode.ERROR


def test_the_opt_in_to_the_latest_conventions_is_read_from_the_environment_given() -> None:
    summary = small_summary()
    default = [s for s in sdk_spans(summary, environ={}) if s.kind == SpanKind.CLIENT]
    latest = sdk_spans(summary, environ={"OTEL_SEMCONV_STABILITY_OPT_IN": "http, gen_ai_latest_experimental"})
    assert all((s.attributes or {}).get("gen_ai.system") == "openai" for s in default)
    assert not any("gen_ai.system" in (s.attributes or {}) for s in latest)
    other = sdk_spans(summary, environ={"OTEL_SEMCONV_STABILITY_OPT_IN": "http"})
    assert all("gen_ai.system" in (s.attributes or {}) for s in other if s.kind == SpanKind.CLIENT)


def test_the_opt_in_is_read_from_the_process_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    assert not any("gen_ai.system" in (s.attributes or {}) for s in sdk_spans(small_summary()))


def content_summary(secret: str = "") -> SessionSummary:
    """One repetition whose texts hold ``secret`` (when given): its model's name, what it asked, its answer, a tool
    call's arguments, a gateway header, a timeout's detail and the repetition's failure message."""
    tail = f" {secret}" if secret else ""
    record = call(
        model_requested=f"gpt-test{secret}",
        asked=(Message("system", f"You are a bookkeeper{tail}"), Message("tool", f"42 invoices{tail}", "c1")),
        decision=Decision.of(
            f"The total is 42{tail}", (ToolCall("search", json.dumps({"token": secret or "none"}), "c2"),), "stop"
        ),
        gateway={"x-litellm-key-alias": f"alias{tail}"},
    )
    failed = call(
        status=None, error="timeout", decision=None, detail=f"timed out talking to{tail}", started_at=T0 + 1.5
    )
    reps = [rep("t", 1, [record, failed], n=1, outcome="failed", message=f"AssertionError:{tail}")]
    return build_summary(reps, run=RunFacts(run_id="run-7"))


def all_text(spans: list[ReadableSpan]) -> str:
    """Every text a span carries: name, attribute names and values, status, events, the resource and scope."""
    parts: list[str] = []
    for span in spans:
        parts.append(span.name)
        parts.append(str(span.status.description))
        parts += [k + "=" + str(v) for k, v in (span.attributes or {}).items()]
        parts += [k + "=" + str(v) for k, v in span.resource.attributes.items()]
        for event in span.events:
            parts.append(event.name)
            parts += [k + "=" + str(v) for k, v in (event.attributes or {}).items()]
    return "\n".join(parts)


def test_content_is_off_by_default_and_on_when_asked() -> None:
    off = exported(sdk_spans(content_summary()))
    assert "bookkeeper" not in all_text(off) and "The total is 42" not in all_text(off)
    on = exported(sdk_spans(content_summary(), content=True))
    (first, _) = [s for s in on if s.kind == SpanKind.CLIENT]
    attributes = first.attributes or {}
    asked = json.loads(str(attributes["gen_ai.input.messages"]))
    assert asked[0] == {"role": "system", "parts": [{"type": "text", "content": "You are a bookkeeper"}]}
    assert asked[1] == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "response": "42 invoices", "id": "c1"}],
    }
    answered = json.loads(str(attributes["gen_ai.output.messages"]))
    assert answered[0]["role"] == "assistant" and answered[0]["finish_reason"] == "stop"
    assert answered[0]["parts"][0] == {"type": "text", "content": "The total is 42"}
    assert answered[0]["parts"][1] == {
        "type": "tool_call",
        "name": "search",
        "arguments": {"token": "none"},
        "id": "c2",
    }


def test_a_known_secret_never_leaves_in_a_span_an_attribute_a_status_or_the_resource(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planted in an answer, a message asked, tool arguments, an error message, a repetition's failure, a gateway
    header, the model's name and ``OTEL_RESOURCE_ATTRIBUTES``: redacted everywhere, content on."""
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"deployment.environment=ci,team.token={SECRET}")
    summary = content_summary(SECRET)
    unredacted = sdk_spans(summary, content=True)
    assert SECRET in all_text(unredacted)  # planted where the test says: the redaction below is not vacuous
    spans = exported(sdk_spans(summary, secrets=[SECRET], content=True))
    text = all_text(spans)
    assert SECRET not in text
    assert text.count("<redacted>") >= 8
    first = next(s for s in spans if s.kind == SpanKind.CLIENT)
    assert first.name == "chat gpt-test<redacted>"
    assert first.resource.attributes["team.token"] == "<redacted>"
    assert first.resource.attributes["deployment.environment"] == "ci"
    timed_out = [s for s in spans if (s.attributes or {}).get("error.type") == "timeout"]
    assert timed_out[0].status.description == "timed out talking to <redacted>"
    encoded = encode_spans(spans).SerializeToString()
    assert SECRET.encode() not in encoded
    assert SECRET not in otlp_json_text(spans)


def test_the_resource_names_the_service_and_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    (span, *_) = sdk_spans(small_summary())
    resource = dict(span.resource.attributes)
    assert resource["service.name"] == SERVICE_NAME == "pytest-consistency"
    assert resource["service.instance.id"] == "run-7"
    assert resource["consistency.run.id"] == "run-7"
    assert resource["telemetry.sdk.name"] == "opentelemetry"
    assert isinstance(resource["consistency.version"], str) and resource["consistency.version"]
    again = dict(sdk_spans(small_summary())[0].resource.attributes)
    assert again == resource  # stable: the SDK's own service.instance.id would be random
    sharded = dict(sdk_spans(small_summary(shard="2/3"))[0].resource.attributes)
    assert sharded["service.instance.id"] == "run-7/2/3" and sharded["consistency.shard"] == "2/3"


def test_otel_service_name_and_resource_attributes_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes,service.instance.id=i-1,team=agents")
    resource = dict(sdk_spans(small_summary())[0].resource.attributes)
    assert (resource["service.name"], resource["service.instance.id"], resource["team"]) == (
        "from-attributes",
        "i-1",
        "agents",
    )
    assert resource["consistency.run.id"] == "run-7"
    monkeypatch.setenv("OTEL_SERVICE_NAME", "my-agent-evals")
    resource = dict(sdk_spans(small_summary())[0].resource.attributes)
    assert resource["service.name"] == "my-agent-evals"  # OTEL_SERVICE_NAME wins over the attributes' service.name


def test_every_span_of_a_session_shares_one_resource() -> None:
    spans = sdk_spans(small_summary())
    assert len({id(s.resource) for s in spans}) == 1


# --- OTLP JSON --------------------------------------------------------------------------------------------------


def walk_spans(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for resource_spans in data["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            yield from scope_spans["spans"]


def test_otlp_json_ids_are_hex_and_enums_integers() -> None:
    spans = sdk_spans(small_summary())
    data = otlp_json(spans)
    found = list(walk_spans(data))
    assert len(found) == len(spans)
    for span, sdk in zip(found, spans, strict=True):
        assert len(span["traceId"]) == 32 and int(span["traceId"], 16) == sdk.context.trace_id  # type: ignore[union-attr]
        assert len(span["spanId"]) == 16 and int(span["spanId"], 16) == sdk.context.span_id  # type: ignore[union-attr]
        if sdk.parent is None:
            assert "parentSpanId" not in span
        else:
            assert len(span["parentSpanId"]) == 16 and int(span["parentSpanId"], 16) == sdk.parent.span_id
        assert span["kind"] in (1, 3) and isinstance(span["kind"], int)
        assert isinstance(span.get("status", {}).get("code", 0), int)
        assert int(span["startTimeUnixNano"]) == sdk.start_time
    codes = {s["name"]: s.get("status", {}).get("code", 0) for s in found}
    assert codes["task t"] == 2 and codes["repetition 1"] == 0 and codes["repetition 2"] == 2
    assert data["resourceSpans"][0]["scopeSpans"][0]["schemaUrl"] == SCHEMA_URL


def test_otlp_json_decodes_to_the_spans_the_protobuf_encoding_carries() -> None:
    """The JSON file and the collector's protobuf body are the same spans (decoded by the test collector's two
    readers, the JSON one written from the OTLP specification)."""
    spans = sdk_spans(content_summary(), content=True)
    text = otlp_json_text(spans)
    assert text.endswith("\n")
    from_json = json_spans(json.loads(text))
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from_protobuf = protobuf_spans(ExportTraceServiceRequest.FromString(encode_spans(spans).SerializeToString()))
    assert from_json == from_protobuf
    assert {s["name"] for s in from_json} == {"task t", "repetition 1", "chat gpt-test"}


def test_the_otlp_json_format_renders_a_summary() -> None:
    summary = small_summary()
    assert (FORMAT.name, FORMAT.suffix) == ("otlp-json", ".otlp.json")
    plain = json.loads(FORMAT.render(summary))
    assert len(list(walk_spans(plain))) == 6
    assert FORMAT.render(summary) == FORMAT.render(summary)  # the same bytes every time
    with_content = json.loads(OtlpJsonFormat(content=True).render(content_summary()))
    keys = {a["key"] for s in walk_spans(with_content) for a in s.get("attributes", [])}
    assert "gen_ai.input.messages" in keys and "gen_ai.output.messages" in keys
    keys = {a["key"] for s in walk_spans(json.loads(FORMAT.render(content_summary()))) for a in s.get("attributes", [])}
    assert "gen_ai.input.messages" not in keys
