"""A small Anthropic-compatible server on loopback, for tests: real HTTP, scripted faults and gateway headers.

The Messages API (``POST /v1/messages``, JSON and SSE streaming), ``POST /v1/messages/count_tokens`` and
``GET /v1/models``, with the real wire shapes, so the real ``anthropic`` SDK parses what it sends (usage with the
cache fields, ``request-id``, the ``anthropic-ratelimit-*`` headers, typed error bodies, ``retry-after``). What it
answers is scripted per test through ``FakeAnthropic.script(...)``; every request it received is in ``requests``.

It also counts how many requests it is handling at once (``in_flight``, ``max_in_flight``) and when each began and
ended, so a test can prove a client serialises or spaces its calls. Run as a script (``python
tests/support/fake_anthropic.py --port 0 --delay 0.05``) it prints ``READY <base_url>`` and serves until killed, so
several processes (pytest-xdist workers) can share one server and read its counters from ``GET /_stats``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from loopback import LoopbackServer, QuietHandler

GOOD_KEY = "sk-ant-test-good-key-0123456789abcdef"
#: The model ``GET /v1/models`` lists, and the one answered when a request names none.
MODEL = "claude-test-model"  # not a real one, so the SDK never warns that it is deprecated
#: The server a test in an inner (in-process) pytest session should talk to, when it needs the object itself.
ACTIVE: FakeAnthropic | None = None

#: The ``error.type`` the real API puts in the body of each status.
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class Step:
    """One scripted answer: an HTTP error, or a reply with a chosen served model, text, usage and headers."""

    status: int = 200
    text: str = "OK"
    served_model: str | None = None
    #: Extra or overriding response headers (e.g. ``anthropic-ratelimit-requests-remaining``).
    headers: dict[str, str] = field(default_factory=dict)
    #: Errors only: the ``retry-after`` header (seconds), left out when None.
    retry_after: str | None = None
    #: Usage; None means counted from the request (input) or from ``text`` (output), in words.
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    stop_reason: str = "end_turn"
    delay: float = 0.0
    #: Streaming only: after the first event, wait (up to 5 s) until this is set before sending the rest.
    hold: threading.Event | None = None


def words(text: str) -> int:
    return len(text.split())


def request_text(body: dict[str, Any]) -> str:
    """All the text a Messages request carries: the system prompt and every message's text blocks."""

    def text_of(content: Any) -> list[str]:
        if isinstance(content, str):
            return [content]
        if isinstance(content, list):
            return [block.get("text", "") for block in content if isinstance(block, dict)]
        return []

    parts = text_of(body.get("system"))
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            parts += text_of(message.get("content"))
    return " ".join(parts)


#: The plugin's preflight prompt (``route.providers.openai.PROMPT``; a test keeps them equal). Written out: this
#: server also runs as a process of its own, which imports nothing of the plugin (importing it there changed the
#: timing a rate-limit test measures).
PREFLIGHT_PROMPT = "reply OK"


def is_preflight(body: Any) -> bool:
    """Whether a request body is the plugin's preflight: one user message asking for ``PREFLIGHT_PROMPT``."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return (
        isinstance(messages, list)
        and len(messages) == 1
        and isinstance(messages[0], dict)
        and messages[0].get("content") == PREFLIGHT_PROMPT
    )


class FakeAnthropic(LoopbackServer):
    def __init__(self, port: int = 0, delay: float = 0.0) -> None:
        self.steps: deque[Step] = deque()
        self.requests: list[dict[str, Any]] = []
        #: The plugin's preflight requests: answered OK (or 401/404), never from the script.
        self.preflights: list[dict[str, Any]] = []
        self.keys = {GOOD_KEY}
        #: Seconds every ``/v1/messages`` answer takes when the script is empty.
        self.delay = delay
        #: Seconds a JSON answer pauses between its headers (with all but the last byte of its body) and its last
        #: byte; the request counts as in flight until just before that byte, so a client that frees its slot
        #: when the headers arrive, not when the body ends, overlaps the next request with this one.
        self.body_delay = 0.0
        #: Seconds at most a ``/v1/messages`` request waits, before answering, until two requests have been in
        #: flight at once (once that happened nobody waits): makes "an uncapped session overlaps" certain.
        self.await_overlap = 0.0
        self.overlapped = threading.Event()
        #: Answer 400 to a request without the ``anthropic-version`` header, as the real API does.
        self.require_version = True
        self.holding = False
        self.release: threading.Event | None = None
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.ratelimit_requests = 50
        self.ratelimit_tokens = 40_000
        self.ids = itertools.count(1)
        fake = self

        class Handler(QuietHandler):
            request_id = ""
            record: dict[str, Any] | None = None

            def setup(self) -> None:
                super().setup()
                # Unbuffered header writes plus Nagle's algorithm would add ~40 ms to every response.
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def _handle(self, method: str) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.path.startswith("/_"):
                    return self._control(method)
                if method == "POST" and is_preflight(json.loads(raw or b"{}")):
                    return self._preflight(json.loads(raw))
                record: dict[str, Any] = {
                    "method": method,
                    "path": self.path,
                    "headers": {name.lower(): value for name, value in self.headers.items()},
                    "body": None,
                    "auth": None,
                    "start": time.time(),
                    "end": None,
                }
                with fake.lock:
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                    if fake.in_flight >= 2:
                        fake.overlapped.set()
                    fake.starts.append(record["start"])
                    fake.requests.append(record)
                    self.request_id = f"req_fake{next(fake.ids):020d}"
                    self.record = record
                try:
                    self._route(method, raw, record)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client hung up mid-answer, e.g. a stream closed early
                finally:
                    self._done()

            def _done(self) -> None:
                """The request no longer counts as in flight: called just before its last bytes leave, since a
                strictly sequential client (on another connection, say another process) may send its next request
                the moment it has read them."""
                with fake.lock:
                    if self.record is None:
                        return
                    fake.in_flight -= 1
                    self.record["end"] = time.time()
                    fake.ends.append(self.record["end"])
                    self.record = None

            def _route(self, method: str, raw: bytes, record: dict[str, Any]) -> None:
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    return self._error(400, "There was an error parsing the body of your request.")
                record["body"] = body
                key, record["auth"] = self._key()
                if key not in fake.keys:
                    return self._error(401, "invalid x-api-key")
                if fake.require_version and not self.headers.get("anthropic-version"):
                    return self._error(400, "anthropic-version: header is required")
                path = self.path.split("?")[0]
                if method == "GET" and path == "/v1/models":
                    created = "2025-01-01T00:00:00Z"
                    model = {"type": "model", "id": MODEL, "display_name": "Claude (fake)", "created_at": created}
                    return self._send(200, {"data": [model], "has_more": False, "first_id": MODEL, "last_id": MODEL})
                if method == "POST" and path == "/v1/messages/count_tokens":
                    return self._send(200, {"input_tokens": words(request_text(body))})
                if method == "POST" and path == "/v1/messages":
                    return self._messages(body)
                return self._error(404, f"Not found: {method} {path}")

            def _preflight(self, body: dict[str, Any]) -> None:
                """The plugin's preflight: answered as a route would (401 for a bad key, 404 for a wrong path),
                kept in ``preflights``, never from the script nor counted in ``requests``."""
                fake.preflights.append({"path": self.path, "body": body})
                if self._key()[0] not in fake.keys:
                    return self._error(401, "invalid x-api-key")
                if self.path.split("?")[0] != "/v1/messages":
                    return self._error(404, f"Not found: POST {self.path}")
                usage = {"input_tokens": 2, "output_tokens": 1}
                content = [{"type": "text", "text": "OK"}]
                reply = {"id": "msg_preflight", "type": "message", "role": "assistant", "model": body.get("model")}
                reply.update(content=content, stop_reason="end_turn", stop_sequence=None, usage=usage)
                return self._send(200, reply)

            def _key(self) -> tuple[str, str | None]:
                """The key and the header that carried it: ``x-api-key`` if present, else a bearer token."""
                if self.headers.get("x-api-key") is not None:
                    return self.headers["x-api-key"], "x-api-key"
                authorization = self.headers.get("authorization") or ""
                if authorization.lower().startswith("bearer "):
                    return authorization[7:], "authorization"
                return "", None

            def _messages(self, body: dict[str, Any]) -> None:
                with fake.lock:
                    step = fake.steps.popleft() if fake.steps else Step(delay=fake.delay)
                time.sleep(step.delay)
                if fake.await_overlap:
                    fake.overlapped.wait(fake.await_overlap)
                if step.status != 200:
                    headers = dict(step.headers)
                    if step.retry_after is not None:
                        headers["retry-after"] = step.retry_after
                    return self._error(step.status, f"scripted {step.status}", headers)
                model = step.served_model or body.get("model") or MODEL
                input_tokens = words(request_text(body)) if step.input_tokens is None else step.input_tokens
                output_tokens = words(step.text) if step.output_tokens is None else step.output_tokens
                cache = {
                    "cache_creation_input_tokens": step.cache_creation_input_tokens,
                    "cache_read_input_tokens": step.cache_read_input_tokens,
                }
                message: dict[str, Any] = {
                    "id": f"msg_fake{next(fake.ids):020d}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "text", "text": step.text}],
                    "stop_reason": step.stop_reason,
                    "stop_sequence": None,
                    "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, **cache},
                }
                if not body.get("stream"):
                    return self._send(200, message, step.headers)
                start = {
                    **message,
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": input_tokens, "output_tokens": 1, **cache},
                }
                # Pieces that join back to the exact text: each word with the whitespace after it.
                pieces = [piece for piece in re.split(r"(?<=\s)(?=\S)", step.text) if piece] or [""]
                events: list[tuple[str, dict[str, Any]]] = [
                    ("message_start", {"type": "message_start", "message": start}),
                    (
                        "content_block_start",
                        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                    ),
                    ("ping", {"type": "ping"}),
                    *(
                        (
                            "content_block_delta",
                            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}},
                        )
                        for p in pieces
                    ),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": step.stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": output_tokens},
                        },
                    ),
                    ("message_stop", {"type": "message_stop"}),
                ]
                self._stream(events, step.headers, step.hold)

            def _control(self, method: str) -> None:
                """``GET /_stats`` (counters, for other processes) and ``POST /_reset``; no key needed."""
                if method == "POST" and self.path == "/_reset":
                    fake.reset()
                    return self._send(200, {"reset": True}, api=False)
                if self.path != "/_stats":
                    return self._send(404, {"type": "error", "error": {"type": "not_found_error"}}, api=False)
                with fake.lock:
                    stats = {
                        "requests": len(fake.requests),
                        "in_flight": fake.in_flight,
                        "max_in_flight": fake.max_in_flight,
                        "starts": list(fake.starts),
                        "ends": list(fake.ends),
                    }
                self._send(200, stats, api=False)

            def _api_headers(self, extra: dict[str, str]) -> dict[str, str]:
                """The headers every API response carries, with the scripted ones replacing same-named defaults."""
                reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 60))
                with fake.lock:
                    remaining = max(fake.ratelimit_requests - len(fake.requests), 0)
                headers = {
                    "request-id": self.request_id,
                    "anthropic-ratelimit-requests-limit": str(fake.ratelimit_requests),
                    "anthropic-ratelimit-requests-remaining": str(remaining),
                    "anthropic-ratelimit-requests-reset": reset,
                    "anthropic-ratelimit-tokens-limit": str(fake.ratelimit_tokens),
                    "anthropic-ratelimit-tokens-remaining": str(fake.ratelimit_tokens),
                    "anthropic-ratelimit-tokens-reset": reset,
                    "anthropic-organization-id": "org-secret-organization",
                    "set-cookie": "session=cookie-secret-value; Path=/",
                }
                headers.update({name.lower(): value for name, value in extra.items()})
                return headers

            def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
                error = {"type": ERROR_TYPES.get(status, "api_error"), "message": message}
                self._send(status, {"type": "error", "error": error}, headers)

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None, api: bool = True
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in (self._api_headers(headers or {}) if api else {}).items():
                    self.send_header(name, value)
                self.end_headers()
                if api and fake.body_delay:
                    self.wfile.write(data[:-1])
                    time.sleep(fake.body_delay)
                    data = data[-1:]
                self._done()
                self.wfile.write(data)

            def _stream(
                self, events: list[tuple[str, dict[str, Any]]], headers: dict[str, str], hold: threading.Event | None
            ) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream; charset=utf-8")
                self.send_header("cache-control", "no-cache")
                self.send_header("transfer-encoding", "chunked")
                for name, value in self._api_headers(headers).items():
                    self.send_header(name, value)
                self.end_headers()
                fake.holding = hold is not None  # set before the first event leaves, so a reader never races it
                for index, (name, data) in enumerate(events):
                    chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                    last = index == len(events) - 1
                    if last:
                        self._done()
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" + (b"0\r\n\r\n" if last else b""))
                    self.wfile.flush()
                    if index == 0 and hold is not None:
                        hold.wait(5)
                        fake.holding = False

        self.serve(Handler, port)

    @property
    def base_url(self) -> str:
        """Without ``/v1``: the SDK appends ``/v1/messages`` itself."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def reset(self) -> None:
        """Empty the script, the requests and the counters (not ``in_flight``, which counts live requests)."""
        self.script()
        with self.lock:
            self.requests.clear()
            self.preflights.clear()
            self.starts.clear()
            self.ends.clear()
            self.max_in_flight = self.in_flight


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a fake Anthropic API on loopback until killed.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds every /v1/messages answer takes")
    parser.add_argument("--body-delay", type=float, default=0.0, help="seconds before a JSON body's last byte")
    parser.add_argument("--await-overlap", type=float, default=0.0, help="wait up to this for 2 requests at once")
    parser.add_argument("--key", action="append", default=[], help="accept this key too (repeatable)")
    args = parser.parse_args(argv)
    server = FakeAnthropic(port=args.port, delay=args.delay)
    server.keys.update(args.key)
    server.body_delay, server.await_overlap = args.body_delay, args.await_overlap
    print(f"READY {server.base_url}", flush=True)
    try:
        server.server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server.server_close()


if __name__ == "__main__":
    main()
