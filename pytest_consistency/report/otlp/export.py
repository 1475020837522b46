"""Send the session's spans to an OTLP collector at the end of the session, within a bounded flush.

Configured the way every OpenTelemetry exporter is (the SDK reads most of it itself):
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT`` (default ``http://localhost:4318``),
``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` / ``OTEL_EXPORTER_OTLP_PROTOCOL`` (``http/protobuf``, the default, or
``http/json``), ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``;
``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` / ``OTEL_EXPORTER_OTLP_TIMEOUT`` (seconds, as the Python SDK reads them) sets
the flush budget, :data:`FLUSH_SECONDS` by default.

Why a budget and a thread: a collector that is down, slow or hanging must not fail the session nor hold it for the
SDK's ten-second timeout and its retries. The spans are sent in batches on a daemon thread, a small one first; each
request may take the budget, and the session waits at most the budget plus the encoding time the spans need
(:attr:`Exporter.encoding_per_span`), then says in one line what was sent and what was not. A batch that fails ends
the export (the next would fail the same way), so a dead collector costs the budget and the first batch's encoding.

Each protocol is an exporter factory in :data:`EXPORTERS`; the SDK's OTLP/HTTP exporter
sends both, the JSON one through a subclass (see :class:`JsonSpanExporter`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from pytest_consistency.report.otlp.environment import (
    ENDPOINT_VARIABLES,
    PROTOCOL_VARIABLES,
    TIMEOUT_VARIABLES,
    OtelSetupError,
    check_compression,
    check_detectors,
    check_files,
    check_headers,
    check_resource,
    checked_endpoint,
    sdk_disabled,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

#: The default flush budget: what a collector that is down or hangs may cost the session (with the encoding of the
#: first, small batch, which finds out).
FLUSH_SECONDS = 1.5
#: Spans per OTLP request: a small first one, so a dead collector is found before much is encoded, then larger ones.
FIRST_BATCH = 256
BATCH = 2048
DEFAULT_ENDPOINT = "http://localhost:4318"


class SpanSink(Protocol):
    """What an exporter of the family does: the SDK's ``SpanExporter`` interface, as far as it is used here."""

    def export(self, spans: Sequence[ReadableSpan]) -> Any: ...

    def shutdown(self) -> None: ...


def protobuf_exporter(endpoint: str, timeout: float) -> SpanSink:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=endpoint, timeout=timeout)


def json_exporter(endpoint: str, timeout: float) -> SpanSink:
    exporter: SpanSink = _json_exporter_class()(
        endpoint=endpoint, timeout=timeout, headers={"content-type": "application/json"}
    )
    return exporter


def _json_exporter_class() -> type:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    from pytest_consistency.report.otlp.encode import otlp_json_text

    class JsonSpanExporter(OTLPSpanExporter):  # type: ignore[misc]
        """The SDK's OTLP/HTTP exporter sending the OTLP JSON encoding: the SDK has no released http/json exporter
        (open-telemetry/opentelemetry-python#1003). It keeps the SDK's transport, headers, retries and deadline
        (its ``_client``) and changes only the body and its content type."""

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            result = self._client.export(otlp_json_text(spans).encode("utf-8"))
            return SpanExportResult.SUCCESS if result.success else SpanExportResult.FAILURE

    return JsonSpanExporter


@dataclass(frozen=True)
class Exporter:
    """A protocol's exporter factory ``(endpoint, timeout) -> SpanSink``, and the seconds of encoding allowed per
    span beyond the budget: a collector that answers is sent the whole session, one that answers slowly is cut off
    after the budget plus this (about twice what ``benchmarks/traces.py`` measures per span)."""

    make: Callable[[str, float], SpanSink]
    encoding_per_span: float


#: Protocol (``OTEL_EXPORTER_OTLP_PROTOCOL``) -> its exporter.
EXPORTERS: dict[str, Exporter] = {
    "http/protobuf": Exporter(protobuf_exporter, 150e-6),
    "http/json": Exporter(json_exporter, 800e-6),
}


@dataclass(frozen=True)
class Target:
    """Where and how the spans go, from the environment."""

    endpoint: str
    protocol: str
    budget: float

    @property
    def shown(self) -> str:
        """The endpoint without a user or password, for the closing line."""
        parts = urlsplit(self.endpoint)
        return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2], query="", fragment=""))


def target_of(environ: Mapping[str, str]) -> Target:
    """The export's target, or :class:`OtelSetupError` naming the variable that is wrong and how to fix it (the
    rest of what the export reads is checked by ``environment.check_environment``)."""
    protocol, variable = "http/protobuf", None
    for name in PROTOCOL_VARIABLES:
        if environ.get(name, "").strip():
            protocol, variable = environ[name].strip(), name
            break
    if protocol not in EXPORTERS:
        raise OtelSetupError(
            f"{variable}={protocol!r}: --consistency-otel exports over {' or '.join(EXPORTERS)}; set {variable} to "
            "one of them and point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP port (4318)"
        )
    traces, base = ENDPOINT_VARIABLES
    if environ.get(traces, "").strip():
        endpoint = checked_endpoint(traces, environ[traces])
    else:
        given = environ.get(base, "")
        endpoint = checked_endpoint(base, given) if given.strip() else DEFAULT_ENDPOINT
        endpoint = f"{endpoint.removesuffix('/')}/v1/traces"
    budget = FLUSH_SECONDS
    for name in TIMEOUT_VARIABLES:
        raw = environ.get(name, "").strip()
        if raw:
            try:
                budget = float(raw)
            except ValueError:
                raise OtelSetupError(f"{name}={raw!r} is not a number of seconds; set it to e.g. 2") from None
            if not 0 < budget < float("inf"):
                raise OtelSetupError(
                    f"{name}={raw!r}: the timeout must be a positive number of seconds; set it to e.g. 2"
                )
            break
    return Target(endpoint, protocol, budget)


def check_environment(environ: Mapping[str, str], export: bool) -> None:
    """Every ``OTEL_*`` value a session reads, checked before it starts (``environment``): the spans' (the
    resource), and with ``export`` the collector's too, unless ``OTEL_SDK_DISABLED`` turns the export off. Raises
    :class:`OtelSetupError` for the first that cannot be used."""
    check_resource(environ)
    check_detectors(environ)
    if not export or sdk_disabled(environ):
        return
    target_of(environ)
    check_headers(environ)
    check_compression(environ)
    check_files(environ)


@dataclass
class Outcome:
    sent: int = 0
    total: int = 0
    failure: str | None = None
    finished: bool = False


class _Captured(logging.Handler):
    """The SDK's log lines while it exports: the reason of a failure, kept for the closing line, not printed."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.messages.append(record.getMessage())
        except Exception:  # a log call whose arguments do not format: nothing to keep
            pass


def send(
    spans: Sequence[ReadableSpan],
    target: Target,
    exporters: Mapping[str, Exporter] = EXPORTERS,
) -> Outcome:
    """Send ``spans`` in batches, waiting at most ``target.budget`` seconds; never raises."""
    outcome = Outcome(total=len(spans))
    captured = _Captured()
    logger = logging.getLogger("opentelemetry")
    propagate = logger.propagate
    logger.addHandler(captured)
    logger.propagate = False

    def run() -> None:
        exporter: SpanSink | None = None
        try:
            exporter = exporters[target.protocol].make(target.endpoint, target.budget)
            for batch in batches(spans):
                result = exporter.export(batch)
                if getattr(result, "name", str(result)) != "SUCCESS":
                    outcome.failure = reason_of(captured.messages)
                    return
                outcome.sent += len(batch)
        except Exception as exc:
            outcome.failure = f"{type(exc).__name__}: {exc}"
        finally:
            outcome.finished = True
            if exporter is not None:
                try:
                    exporter.shutdown()
                except Exception:  # pragma: no cover - nothing more to do for a collector that is gone
                    pass

    thread = threading.Thread(target=run, name="consistency-otel-export", daemon=True)
    began = time.monotonic()
    thread.start()
    thread.join(target.budget + 0.25 + len(spans) * exporters[target.protocol].encoding_per_span)
    logger.removeHandler(captured)
    logger.propagate = propagate
    if not outcome.finished:
        outcome.failure = f"no answer within {time.monotonic() - began:.1f} s"
    return outcome


def batches(spans: Sequence[ReadableSpan]) -> list[Sequence[ReadableSpan]]:
    """The requests: :data:`FIRST_BATCH` spans, then :data:`BATCH` at a time."""
    first = list(spans[:FIRST_BATCH])
    rest = spans[FIRST_BATCH:]
    return ([first] if first else []) + [rest[start : start + BATCH] for start in range(0, len(rest), BATCH)]


#: What the SDK's log lines say, in the words of the closing line (first match wins).
REASONS = (
    ("refused", "the connection was refused"),
    ("timed out", "no answer in time"),
    ("timeout", "no answer in time"),
)


def reason_of(messages: Sequence[str]) -> str:
    """Why the collector did not take the spans, from the SDK's log lines (an HTTP status when it answered: looked for
    first, as the SDK's last line after retried statuses says "due to timeout, max retries or shutdown")."""
    for message in reversed(messages):
        status = _status_of(message)
        if status is not None:
            return f"the collector answered HTTP {status}"
    text = " ".join(messages).lower()
    for needle, reason in REASONS:
        if needle in text:
            return reason
    return messages[-1] if messages else "the collector did not take them"


def _status_of(message: str) -> int | None:
    """The HTTP status a log line of the SDK names: ``code: 400`` (not retried) or the reason phrase of a status it
    retried (``Transient error Service Unavailable encountered ...``)."""
    from http import HTTPStatus

    if "code: " in message:
        code = message.split("code: ", 1)[1].split(",", 1)[0].strip()
        return int(code) if code.isdigit() else None
    if message.startswith("Transient error "):
        phrase = message.removeprefix("Transient error ").split(" encountered while ", 1)[0]
        return next((status.value for status in HTTPStatus if status.phrase == phrase), None)
    return None


def line_of(outcome: Outcome, target: Target, traces: int) -> str:
    """The one line the session prints about its export."""
    where = f"{target.shown} ({target.protocol})"
    if outcome.failure is None:
        return f"otel: exported {outcome.sent} spans in {traces} traces to {where}"
    reason = " ".join(outcome.failure.split())
    if len(reason) > 200:
        reason = reason[:199] + "…"
    return (
        f"otel: {outcome.total - outcome.sent} of {outcome.total} spans not exported to {where}: {reason} "
        "(the session's verdict is unchanged; check OTEL_EXPORTER_OTLP_ENDPOINT and that the collector is up)"
    )
