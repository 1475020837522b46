"""A real OTLP/HTTP trace collector on 127.0.0.1, for the tests of the OpenTelemetry export (issue 29).

``POST /v1/traces`` takes ``application/x-protobuf`` (decoded with OpenTelemetry's own
``ExportTraceServiceRequest``) and ``application/json`` (the OTLP JSON encoding, read here by hand as the OTLP
specification writes it: ids hex, enums integers, 64-bit integers as strings or numbers), so a test sees both
encodings as the same flat span dicts. Every body byte received is kept (``bodies``, after a ``gzip`` content
encoding is undone; ``raw`` as sent) for a test to grep for a key, and every request's headers.

Modes: ``normal`` answers 200; ``hang`` reads the request and never answers (until :meth:`Collector.stop`);
``503`` answers 503 Service Unavailable every time (a status the OTLP exporter retries); ``refuse`` listens
nowhere: its endpoint is a :class:`ClosedPort` (a port bound and not listening, so a connection is refused and no
other process can take the port meanwhile).
"""

from __future__ import annotations

import base64
import gzip
import json
import socket
import threading
from collections import deque
from typing import Any

from loopback import LoopbackServer, QuietHandler

MODES = ("normal", "refuse", "hang", "503")
#: How long a hanging handler holds its connection at most (a test ends it sooner with ``stop``).
HANG_SECONDS = 60.0


class ClosedPort:
    """A TCP port on 127.0.0.1 that nobody listens on: bound (so it stays free of other listeners), never listening,
    so a connection to it is refused at once."""

    def __init__(self) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.bind(("127.0.0.1", 0))
        self.port: int = self.socket.getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.socket.close()


def closed_port() -> ClosedPort:
    """A port a connection is refused on (close it after the test)."""
    return ClosedPort()


class Collector(LoopbackServer):
    """The collector; ``endpoint`` is the base URL to give ``OTEL_EXPORTER_OTLP_ENDPOINT``."""

    def __init__(self, mode: str = "normal") -> None:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: one of {MODES}")
        self.mode = mode
        self.steps: deque[Any] = deque()
        self.lock = threading.Lock()
        #: Per request: path, headers (lower-case names), content type, status answered (None: never answered).
        self.requests: list[dict[str, Any]] = []
        #: Every request body as received, and decompressed (what a grep for a key reads).
        self.raw: list[bytes] = []
        self.bodies: list[bytes] = []
        #: The spans of every request answered 200, in the order they arrived, as flat dicts (see :func:`flat_spans`).
        self.spans: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.closed: ClosedPort | None = closed_port() if mode == "refuse" else None
        collector = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {name.lower(): value for name, value in self.headers.items()}
                body = gzip.decompress(raw) if headers.get("content-encoding") == "gzip" else raw
                content_type = headers.get("content-type", "").split(";")[0].strip()
                request: dict[str, Any] = {
                    "path": self.path,
                    "headers": headers,
                    "content_type": content_type,
                    "status": None,
                }
                with collector.lock:
                    collector.raw.append(raw)
                    collector.bodies.append(body)
                    collector.requests.append(request)
                if collector.mode == "hang":
                    collector.release.wait(HANG_SECONDS)
                    self.close_connection = True
                    return
                if collector.mode == "503":
                    return self._answer(request, 503, b"collector overloaded", "text/plain")
                if self.path != "/v1/traces":
                    return self._answer(request, 404, b"not found", "text/plain")
                try:
                    spans = decode(body, content_type)
                except Exception as exc:  # an undecodable body: the client's fault, as a collector says
                    return self._answer(request, 400, f"bad body: {exc}".encode(), "text/plain")
                with collector.lock:
                    collector.spans.extend(spans)
                if content_type == "application/json":
                    return self._answer(request, 200, b"{}", "application/json")
                return self._answer(request, 200, b"", "application/x-protobuf")

            def _answer(self, request: dict[str, Any], status: int, data: bytes, content_type: str) -> None:
                request["status"] = status
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.serve(Handler, 0)

    @property
    def endpoint(self) -> str:
        """The base URL (``OTEL_EXPORTER_OTLP_ENDPOINT``); the closed port's in ``refuse`` mode."""
        if self.closed is not None:
            return self.closed.url
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def traces_url(self) -> str:
        return self.endpoint + "/v1/traces"

    def received(self) -> bytes:
        """Every body byte received, decompressed, joined."""
        with self.lock:
            return b"".join(self.bodies)

    def stop(self) -> None:
        self.release.set()
        if self.closed is not None:
            self.closed.close()
        super().stop()

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.raw.clear()
            self.bodies.clear()
            self.spans.clear()


def decode(body: bytes, content_type: str) -> list[dict[str, Any]]:
    """The flat spans of an OTLP/HTTP trace export body in either encoding."""
    if content_type == "application/json":
        return json_spans(json.loads(body.decode("utf-8")))
    if content_type == "application/x-protobuf":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        return protobuf_spans(ExportTraceServiceRequest.FromString(body))
    raise ValueError(f"content type {content_type!r} is not an OTLP encoding")


def _any_value(value: Any) -> Any:
    """A protobuf ``AnyValue`` as a Python value."""
    which = value.WhichOneof("value")
    if which == "array_value":
        return [_any_value(item) for item in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _any_value(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return bytes(value.bytes_value)
    return None if which is None else getattr(value, which)


def protobuf_spans(request: Any) -> list[dict[str, Any]]:
    spans = []
    for resource_spans in request.resource_spans:
        resource = {kv.key: _any_value(kv.value) for kv in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            scope = {"name": scope_spans.scope.name, "version": scope_spans.scope.version}
            for span in scope_spans.spans:
                spans.append(
                    {
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": int(span.kind),
                        "start_ns": int(span.start_time_unix_nano),
                        "end_ns": int(span.end_time_unix_nano),
                        "attributes": {kv.key: _any_value(kv.value) for kv in span.attributes},
                        "status": {"code": int(span.status.code), "message": span.status.message},
                        "resource": resource,
                        "scope": scope,
                        "schema_url": scope_spans.schema_url,
                    }
                )
    return spans


def _json_value(value: dict[str, Any]) -> Any:
    """An OTLP JSON ``AnyValue`` as a Python value (a 64-bit integer may be a string or a number)."""
    if not value:
        return None
    (which, inner), *_ = value.items()
    if which == "intValue":
        return int(inner)
    if which == "doubleValue":
        return float(inner)
    if which == "arrayValue":
        return [_json_value(item) for item in inner.get("values", [])]
    if which == "kvlistValue":
        return {kv["key"]: _json_value(kv.get("value", {})) for kv in inner.get("values", [])}
    if which == "bytesValue":
        return base64.b64decode(inner)
    return inner


def _hex_id(text: str | None, length: int) -> str:
    """An id of OTLP JSON, which must be hex (not protobuf's base64): checked, lower case."""
    if not text:
        return ""
    if len(text) != length or any(c not in "0123456789abcdefABCDEF" for c in text):
        raise ValueError(f"id {text!r} is not {length} hex characters")
    return text.lower()


def json_spans(data: dict[str, Any]) -> list[dict[str, Any]]:
    spans = []
    for resource_spans in data.get("resourceSpans", []):
        resource_data = resource_spans.get("resource", {}).get("attributes", [])
        resource = {kv["key"]: _json_value(kv.get("value", {})) for kv in resource_data}
        for scope_spans in resource_spans.get("scopeSpans", []):
            scope_data = scope_spans.get("scope", {})
            scope = {"name": scope_data.get("name", ""), "version": scope_data.get("version", "")}
            for span in scope_spans.get("spans", []):
                kind = span.get("kind", 0)
                code = span.get("status", {}).get("code", 0)
                if not isinstance(kind, int) or not isinstance(code, int):
                    raise ValueError(f"enums must be integers in OTLP JSON: kind {kind!r}, status code {code!r}")
                spans.append(
                    {
                        "trace_id": _hex_id(span.get("traceId"), 32),
                        "span_id": _hex_id(span.get("spanId"), 16),
                        "parent_span_id": _hex_id(span.get("parentSpanId"), 16),
                        "name": span.get("name", ""),
                        "kind": kind,
                        "start_ns": int(span.get("startTimeUnixNano", 0)),
                        "end_ns": int(span.get("endTimeUnixNano", 0)),
                        "attributes": {
                            kv["key"]: _json_value(kv.get("value", {})) for kv in span.get("attributes", [])
                        },
                        "status": {"code": code, "message": span.get("status", {}).get("message", "")},
                        "resource": resource,
                        "scope": scope,
                        "schema_url": scope_spans.get("schemaUrl", ""),
                    }
                )
    return spans
