"""Turn one HTTP attempt into a ``CallRecord``, reading the response as it streams past.

Works on httpx and httpx2 objects alike (duck-typed). The response body is never buffered for the caller:
chunks are handed on as they arrive and parsed on the side — SSE line by line, JSON once complete.
"""

from __future__ import annotations

import json
import time
import zlib
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pytest_consistency.model.records import CallRecord
from pytest_consistency.route.providers import DecisionReader, Provider, builtin
from pytest_consistency.secrets.keys import REPLAY_KEY, credential_of, fingerprint

if TYPE_CHECKING:
    from pytest_consistency.capture.canonical import Normalizer

#: Paths that end a base URL. Anthropic's SDK appends ``/v1/messages`` to a base URL without ``/v1``, so that
#: whole suffix is its endpoint; it comes first, before ``/models`` could take ``/v1/models`` of another API.
ENDPOINTS = (
    "/v1/messages",
    "/chat/completions",
    "/responses",
    "/completions",
    "/embeddings",
    "/models",
    "/moderations",
)
#: Response headers kept on the record as the rate-limit facts of an attempt (prefixes, lower case).
RATE_LIMIT_PREFIXES = ("anthropic-ratelimit-", "x-ratelimit-", "retry-after")
GATEWAY_HEADERS = (
    "x-litellm-model-id",
    "x-litellm-model-api-base",
    "x-litellm-attempted-fallbacks",
    "x-litellm-attempted-retries",
)
#: Response headers a cassette carries the recorded route facts in (see ``cassette.scrub``).
RECORDED_KEY_HEADER = "x-consistency-key-fingerprint"
RECORDED_LATENCY_HEADER = "x-consistency-latency-ms"
#: On a response replayed for a request sent to another host (``--consistency-replay-any-host``): the URL the
#: exchange was recorded at, which the call's record keeps.
RECORDED_URL_HEADER = "x-consistency-recorded-url"
#: When the recorded attempt was sent, wall-clock seconds since the epoch: a replay's trace shows the recording's times.
RECORDED_STARTED_HEADER = "x-consistency-started-at"
#: The pinned route's key fingerprint when the exchange was recorded: a replay, which has no key, compares with it.
ROUTE_KEY_HEADER = "x-consistency-route-key"
#: Set on a replayed response whose ``retry-after`` was shortened for the replay: the values the server sent.
RECORDED_RETRY_HEADER = "x-consistency-recorded-retry-after"
MAX_JSON_BODY = 8 * 1024 * 1024

#: Request header the recording transport adds while recording (``perf_counter time``, :func:`sent_at`); read and
#: removed before anything is stored.
SENT_AT_HEADER = "x-consistency-sent-at"
#: Request header the recording transport adds to a call that is not the agent's (``CallRecord.role``: ``judge``,
#: ``user``), while recording: the cassette keeps it, so each exchange says whose it was (never matched on).
ROLE_HEADER = "x-consistency-role"
#: Digest of the request body as it was sent, before any redaction: what replays are matched on.
BODY_DIGEST_HEADER = "x-consistency-body-digest"


def sent_at(perf: float, wall: float) -> str:
    """The :data:`SENT_AT_HEADER` value: the latency is measured from ``perf``; ``wall`` is the start it records."""
    return f"{perf!r} {wall:.6f}"


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


def start_record(
    request: Any, pinned: bool, content: bytes | None = None, normalize: Normalizer | None = None
) -> CallRecord:
    raw_url = str(request.url)
    url, base = split_url(raw_url)
    body = json_body(request_content(request) if content is None else content) or {}
    try:
        retry = int(request.headers.get("x-stainless-retry-count", "0"))
    except ValueError:
        retry = 0
    model = body.get("model")
    headers = request.headers
    credential = credential_of(headers, raw_url)
    record = CallRecord(
        method=str(request.method),
        url=url,
        base_url=base,
        key_fingerprint=None if credential == REPLAY_KEY else fingerprint(credential),
        model_requested=model if isinstance(model, str) else None,
        retry_index=retry,
        stream=bool(body.get("stream")),
        pinned=pinned,
        provider=provider_of(headers, url),
    )
    if body:
        capture_asked(record, body, normalize)
    return record


def sampling_provider(record: CallRecord) -> Provider | None:
    """The built-in provider whose sampling endpoint ``record`` called (a POST), else None: only those are steps."""
    if record.method != "POST":
        return None
    provider = builtin(record.provider)
    return provider if provider is not None and record.url.endswith(provider.sampling_endpoints) else None


def capture_asked(record: CallRecord, body: dict[str, Any], normalize: Normalizer | None = None) -> None:
    """Store what a sampling request asked that is new since the model's previous turn (the provider parses it),
    and the digests and texts of what it sent, canonicalised (:mod:`.canonical`)."""
    provider = sampling_provider(record)
    if provider is not None:
        # The canonical form and the cause and trajectory types load with the first sampling call, not when the
        # transports are wrapped (an HTTP library imported by a suite that calls no model; issue 30).
        from pytest_consistency.capture.canonical import sent_of

        record.asked = provider.asked(record.url, body)
        try:
            record.sent, record.texts = sent_of(provider, record.url, body, normalize, record.url)
        except Exception as exc:  # a normalize_request hook that raised: the cassette matcher names it too
            record.detail = f"the request could not be canonicalised ({type(exc).__name__}): its cause is not compared"


def decision_reader(record: CallRecord) -> DecisionReader | None:
    """A reader of the decision in the response of a sampling call that succeeded, else None (nothing to read)."""
    if record.status is None or record.status >= 400:
        return None
    provider = sampling_provider(record)
    return provider.decision_reader(record.url) if provider is not None else None


def provider_of(headers: Any, url: str) -> str:
    """``anthropic`` for a request of the Messages API (its SDKs always send ``anthropic-version``), else ``openai``."""
    return "anthropic" if "anthropic-version" in headers or url.endswith("/v1/messages") else "openai"


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def _usage(record: CallRecord, usage: Any) -> None:
    """Merge a usage object into the record: only the counts it carries change.

    A streamed Anthropic message reports input tokens in ``message_start`` and the final output count in
    ``message_delta``, whose usage may omit ``input_tokens``: what an event leaves out keeps its earlier value.
    """
    if not isinstance(usage, dict):
        return
    prompt = _count(usage.get("prompt_tokens", usage.get("input_tokens")))
    completion = _count(usage.get("completion_tokens", usage.get("output_tokens")))
    cache_read = _count(usage.get("cache_read_input_tokens"))
    cache_creation = _count(usage.get("cache_creation_input_tokens"))
    # OpenAI: the part of the prompt tokens read from the cache (chat completions, then the Responses API)
    details = usage.get("prompt_tokens_details", usage.get("input_tokens_details"))
    cached_prompt = _count(details.get("cached_tokens")) if isinstance(details, dict) else None
    if cached_prompt is not None:
        record.cached_prompt_tokens = cached_prompt
    if prompt is not None:
        record.prompt_tokens = prompt
    if completion is not None:
        record.completion_tokens = completion
    if cache_read is not None:
        record.cache_read_tokens = cache_read
    if cache_creation is not None:
        record.cache_creation_tokens = cache_creation
    total = _count(usage.get("total_tokens"))
    record.total_tokens = total or (
        record.prompt_tokens + record.completion_tokens + record.cache_read_tokens + record.cache_creation_tokens
    )


#: Error events inside a 200 stream (Anthropic's ``event: error``), as the drift kind their status would give.
STREAM_ERRORS = {"overloaded_error": "5xx", "api_error": "5xx", "rate_limit_error": "429"}


def apply_payload(record: CallRecord, data: dict[str, Any]) -> None:
    """Pick served model, fingerprint and usage from a JSON body, an SSE chunk or a Responses API event.

    Anthropic's ``message_start`` event nests the message (model and input usage) under ``message``. An error event
    inside a stream (the status line said 200 before the API was overloaded) is the call's error.
    """
    if data.get("type") == "error" and record.stream:
        nested = data.get("error")
        error: dict[str, Any] = nested if isinstance(nested, dict) else data
        kind = str(error.get("type") or error.get("code") or "error")
        record.error = STREAM_ERRORS.get(kind, "stream_error")
        record.detail = f"the stream ended with an error event ({kind})"
        return
    response = data.get("response")
    if not isinstance(response, dict):
        response = data.get("message") if data.get("type") == "message_start" else None
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
        #: Reads the model's decision from the same bytes (sampling calls only): see :mod:`.trajectory`.
        self.reader = decision_reader(record)

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
        data = line[5:].strip()
        if data == b"[DONE]":  # the SDK stops reading here and closes the response: the stream is complete
            self.complete = True
            return
        event = json_body(data)
        self.events += 1
        if event is not None:
            apply_payload(self.record, event)
            if self.reader is not None:
                self.reader.event(event)
            if event.get("type") in FINAL_EVENTS:
                self.complete = True

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
                    if self.reader is not None:
                        self.reader.body(data)
            if self.reader is not None:
                self.record.decision = self.reader.result()
        if self.record.latency_ms is None:
            self.record.latency_ms = round((time.perf_counter() - self.started) * 1000, 3)
        self.on_done(self.record)


#: Stream events after which nothing more is sent (Messages API, Responses API): a stream closed after one was read
#: to its end, though its byte iterator was not exhausted.
FINAL_EVENTS = frozenset({"message_stop", "response.completed", "response.failed", "response.incomplete"})


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
    record.rate_limit = {
        name.lower(): str(value)
        for name, value in headers.items()
        if name.lower().removeprefix("llm_provider-").startswith(RATE_LIMIT_PREFIXES)  # LiteLLM forwards them so
    }
    recorded_key = headers.get(RECORDED_KEY_HEADER)
    if recorded_key is not None:  # replayed from a cassette: report the route that was recorded
        record.replayed = True
        record.route_key = str(headers.get(ROUTE_KEY_HEADER) or "") or None
        recorded_retry = headers.get(RECORDED_RETRY_HEADER)
        if recorded_retry is not None:  # the replay waits 1 ms; the record keeps what the server asked for
            record.rate_limit = {k: v for k, v in record.rate_limit.items() if not k.startswith("retry-after")}
            try:
                sent = json.loads(str(recorded_retry))
            except ValueError:
                sent = {}
            if isinstance(sent, dict):
                record.rate_limit.update({str(k): str(v) for k, v in sent.items()})
        record.key_fingerprint = str(recorded_key) or None
        recorded_url = headers.get(RECORDED_URL_HEADER)
        if recorded_url:  # replayed at another host: the call's URL is the recorded one (its base URL, the route's
            record.url = str(recorded_url)  # now: the host is what this replay was told to leave out)
        try:
            record.latency_ms = float(headers.get(RECORDED_LATENCY_HEADER, ""))
        except ValueError:
            record.latency_ms = None
        try:  # the recording's start, not the replay's (None for a cassette that did not keep it)
            record.started_at = float(headers.get(RECORDED_STARTED_HEADER, ""))
        except ValueError:
            record.started_at = None


class NotRecorded(Exception):
    """A replay-only repetition sent a request and it has no cassette at all: nothing can answer it.

    Raised by the plugin's own transports without loading vcrpy (which would raise its
    ``CannotOverwriteExistingCassetteException`` for the same request); ``reason`` reads like vcrpy's.
    """

    reason = "cassette_not_found"
    similar_requests: tuple[Any, ...] = ()


#: Exception classes that say no connection was made: httpx's (and httpx2's) ``ConnectError``, the OS's refusals.
_CONNECT_FAILURES = ("ConnectError", "ConnectionRefusedError", "gaierror")


def cannot_connect(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) says no connection could be made to the host."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if any(cls.__name__ in _CONNECT_FAILURES for cls in type(link).__mro__):
            return True
        link = link.__cause__ or link.__context__
    return False


def exception_kind(exc: BaseException) -> str:
    name = type(exc).__name__.lower()
    if isinstance(exc, NotRecorded) or "cannotoverwrite" in name:
        return "replay_mismatch"
    if "costbudget" in name:
        return "cost_budget"
    if "budget" in name:
        return "token_budget"
    if "standinkey" in name:
        return "stand_in_key"
    if "timeout" in name:
        return "timeout"
    return "connection"
