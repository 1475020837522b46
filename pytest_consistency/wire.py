"""Turn one HTTP attempt into a ``CallRecord``, reading the response as it streams past.

Works on httpx and httpx2 objects alike (duck-typed). The response body is never buffered for the caller:
chunks are handed on as they arrive and parsed on the side — SSE line by line, JSON once complete.
"""

from __future__ import annotations

import json
import time
import zlib
from typing import Any
from urllib.parse import urlsplit

from .keys import credential_of, fingerprint
from .records import CallRecord

ENDPOINTS = ("/chat/completions", "/responses", "/completions", "/embeddings", "/models", "/moderations")
GATEWAY_HEADERS = (
    "x-litellm-model-id",
    "x-litellm-model-api-base",
    "x-litellm-attempted-fallbacks",
    "x-litellm-attempted-retries",
)
#: Response headers a cassette carries the recorded route facts in (see ``cassettes``).
RECORDED_KEY_HEADER = "x-consistency-key-fingerprint"
RECORDED_LATENCY_HEADER = "x-consistency-latency-ms"
MAX_JSON_BODY = 8 * 1024 * 1024


def split_url(url: str) -> tuple[str, str]:
    """``(scheme://host/path, base URL)``: query and credentials dropped (they can carry secrets), endpoint removed."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]  # never the user:password of a URL
    clean = f"{parts.scheme}://{netloc}{parts.path}"
    base = clean
    for endpoint in ENDPOINTS:
        index = parts.path.find(endpoint)
        if index >= 0:
            base = f"{parts.scheme}://{netloc}{parts.path[:index]}"
            break
    return clean, base.rstrip("/")


def json_body(content: bytes) -> dict[str, Any] | None:
    if not content or content[:1] not in (b"{", b" ", b"\n"):
        return None
    try:
        data = json.loads(content)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def request_content(request: Any) -> bytes:
    try:
        return bytes(request.content)
    except Exception:  # a streaming upload that was not read: nothing to learn from it
        return b""


def start_record(request: Any, pinned: bool, content: bytes | None = None) -> CallRecord:
    raw_url = str(request.url)
    url, base = split_url(raw_url)
    body = json_body(request_content(request) if content is None else content) or {}
    try:
        retry = int(request.headers.get("x-stainless-retry-count", "0"))
    except ValueError:
        retry = 0
    model = body.get("model")
    return CallRecord(
        method=str(request.method),
        url=url,
        base_url=base,
        key_fingerprint=fingerprint(credential_of(request.headers, raw_url)),
        model_requested=model if isinstance(model, str) else None,
        retry_index=retry,
        stream=bool(body.get("stream")),
        pinned=pinned,
    )


def _usage(record: CallRecord, usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    prompt = usage.get("prompt_tokens", usage.get("input_tokens")) or 0
    completion = usage.get("completion_tokens", usage.get("output_tokens")) or 0
    total = usage.get("total_tokens") or (prompt + completion)
    record.prompt_tokens, record.completion_tokens, record.total_tokens = int(prompt), int(completion), int(total)


def apply_payload(record: CallRecord, data: dict[str, Any]) -> None:
    """Pick served model, fingerprint and usage from a JSON body, an SSE chunk or a Responses API event."""
    response = data.get("response")
    inner: dict[str, Any] = response if isinstance(response, dict) else data
    model = inner.get("model")
    if isinstance(model, str) and model:
        record.model_served = model
    system_fingerprint = inner.get("system_fingerprint")
    if isinstance(system_fingerprint, str) and system_fingerprint:
        record.system_fingerprint = system_fingerprint
    if inner.get("usage"):
        _usage(record, inner["usage"])


class ResponseTap:
    """Receives the raw body chunks of one response and completes its record when the body ends."""

    def __init__(self, record: CallRecord, headers: Any, started: float, on_done: Any) -> None:
        self.record = record
        self.started = started
        self.on_done = on_done
        self.done = False
        content_type = str(headers.get("content-type", ""))
        self.sse = content_type.startswith("text/event-stream")
        encoding = str(headers.get("content-encoding", "")).lower().strip()
        self.decoder: Any = None
        self.readable = encoding in ("", "identity", "gzip", "deflate")
        if encoding in ("gzip", "deflate"):
            self.decoder = zlib.decompressobj(wbits=47)
        self.buffer = bytearray()
        self.pending = b""
        #: The body was read to its end (set by the stream wrapper), and how much of it arrived.
        self.complete = False
        self.events = 0
        self.received = 0

    def feed(self, chunk: bytes) -> None:
        self.received += len(chunk)
        if not self.readable or not chunk:
            return
        data = self.decoder.decompress(chunk) if self.decoder else chunk
        if not self.sse:
            if len(self.buffer) + len(data) <= MAX_JSON_BODY:
                self.buffer.extend(data)
            return
        lines = (self.pending + data).split(b"\n")
        self.pending = lines.pop()
        for line in lines:
            self._sse_line(line)

    def _sse_line(self, line: bytes) -> None:
        line = line.strip()
        if not line.startswith(b"data:"):
            return
        event = json_body(line[5:].strip())
        self.events += 1
        if event is not None:
            apply_payload(self.record, event)

    def close(self) -> None:
        if self.done:
            return
        self.done = True
        if self.readable:
            if self.sse and self.pending:
                self._sse_line(self.pending)
            elif not self.sse:
                data = json_body(bytes(self.buffer))
                if data is not None:
                    apply_payload(self.record, data)
        if self.record.latency_ms is None:
            self.record.latency_ms = round((time.perf_counter() - self.started) * 1000, 3)
        self.on_done(self.record)


def estimate_tokens(record: CallRecord, request_bytes: int, tap: ResponseTap) -> None:
    """Charge a response whose usage never arrived (a stream closed early, or one without usage) by size.

    About four bytes of JSON per prompt token, one SSE event (or four bytes) per completion token: rough, but a
    budget that counts an unread stream as free can be spent many times over.
    """
    record.prompt_tokens = request_bytes // 4
    record.completion_tokens = tap.events if tap.sse else tap.received // 4
    record.total_tokens = record.prompt_tokens + record.completion_tokens
    record.tokens_estimated = True
    record.detail = record.detail or (
        "usage estimated: the response was closed before it was read to the end"
        if not tap.complete
        else "usage estimated: the response carried no usage"
    )


def complete_headers(record: CallRecord, response: Any) -> None:
    """Facts known as soon as the status line and headers arrive."""
    record.status = int(response.status_code)
    headers = response.headers
    record.gateway = {name: str(headers[name]) for name in GATEWAY_HEADERS if name in headers}
    recorded_key = headers.get(RECORDED_KEY_HEADER)
    if recorded_key is not None:  # replayed from a cassette: report the route that was recorded
        record.replayed = True
        record.key_fingerprint = str(recorded_key) or None
        try:
            record.latency_ms = float(headers.get(RECORDED_LATENCY_HEADER, ""))
        except ValueError:
            record.latency_ms = None


def exception_kind(exc: BaseException) -> str:
    name = type(exc).__name__.lower()
    if "cannotoverwrite" in name:
        return "replay_mismatch"
    if "budget" in name:
        return "token_budget"
    if "timeout" in name:
        return "timeout"
    return "connection"
