"""A small OpenAI-compatible server on loopback, for tests: real HTTP, scripted faults and gateway headers.

Chat completions and the Responses API, JSON and SSE streaming, usage in both. What it answers is scripted
per test through ``FakeOpenAI.script(...)``; every request it received is in ``requests``.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loopback import LoopbackServer, QuietHandler

from pytest_consistency.route.providers.openai import PROMPT as PREFLIGHT_PROMPT

GOOD_KEY = "sk-test-good-key-0123456789abcdef"
#: The server a test in an inner (in-process) pytest session should talk to, when it needs the object itself.
ACTIVE: FakeOpenAI | None = None


@dataclass
class Step:
    """One scripted answer: an HTTP error, or a reply with a chosen served model, text and headers."""

    status: int = 200
    text: str = "OK"
    served_model: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    system_fingerprint: str = "fp_test"
    delay: float = 0.0
    #: Streaming only: after the first event, wait (up to 5 s) until this is set before sending the rest.
    hold: threading.Event | None = None
    #: Tool calls to answer with, as (name, arguments JSON text): the reply then has no text. Streamed, each call's
    #: arguments arrive in two deltas after a first delta with its id and name, as the OpenAI API sends them.
    tool_calls: tuple[tuple[str, str], ...] = ()
    #: With ``tool_calls``: the sentence the model writes before its calls (chat: the message's content; Responses: a
    #: message item before the function calls). Streamed in one delta before the calls'.
    words: str | None = None


def is_preflight(body: Any) -> bool:
    """Whether a request body is the plugin's preflight (``--consistency-preflight``, on by default when a session
    records live): one user message asking for ``PREFLIGHT_PROMPT``."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return (
        isinstance(messages, list)
        and len(messages) == 1
        and isinstance(messages[0], dict)
        and messages[0].get("content") == PREFLIGHT_PROMPT
    )


class FakeOpenAI(LoopbackServer):
    def __init__(self) -> None:
        self.steps: deque[Step] = deque()
        self.requests: list[dict[str, Any]] = []
        #: The plugin's preflight requests (``is_preflight``): answered OK (or 401/404), never from the script.
        self.preflights: list[dict[str, Any]] = []
        self.keys = {GOOD_KEY}
        self.holding = False
        self.release: threading.Event | None = None
        #: While set, a tracing post (``/langsmith/...``) sets ``trace_arrived`` once its headers are read, and waits
        #: (up to 60 s) for this before reading its body.
        self.trace_release: threading.Event | None = None
        self.trace_arrived = threading.Event()
        self.lock = threading.Lock()
        #: While set, answers a request whose body it gives a step for (requests sent together, whichever arrives
        #: first), before the script is asked.
        self.answer: Callable[[dict[str, Any]], Step | None] | None = None
        fake = self

        class Handler(QuietHandler):
            def setup(self) -> None:
                super().setup()
                # Unbuffered header writes plus Nagle's algorithm would add ~40 ms to every response.
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

            def do_POST(self) -> None:
                if self.path.startswith("/langsmith/"):  # a tracing backend (LANGSMITH_ENDPOINT), multipart bodies
                    release = fake.trace_release
                    if release is not None:  # headers read, body not: a body larger than the socket buffers
                        fake.trace_arrived.set()  # keeps its sender inside its send until released
                        release.wait(60)  # generous: a busy machine; the test releases every post
                    self.rfile.read(int(self.headers.get("content-length", 0)))
                    fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": None})
                    return self._send(202, {})
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                preflight = is_preflight(body)  # the plugin's, before the first test: answered, no scripted step
                (fake.preflights if preflight else fake.requests).append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                key = (self.headers.get("authorization") or "")[7:]
                if key not in fake.keys:
                    msg = f"Incorrect API key provided: {key[:3]}****{key[-4:]}"
                    return self._send(401, {"error": {"message": msg, "type": "invalid_request_error"}})
                if not self.path.startswith("/v1/"):
                    return self._send(404, {"error": {"message": "not found"}})
                if self.path.endswith("/traces/ingest"):
                    return self._send(200, {})  # the Agents SDK's trace export: accepted, no scripted step used
                if self.path.endswith("/embeddings"):  # no scripted step used: a vector per input
                    inputs = body.get("input")
                    count = len(inputs) if isinstance(inputs, list) else 1
                    data = [{"object": "embedding", "index": i, "embedding": [0.1, 0.2, 0.3]} for i in range(count)]
                    usage = {"prompt_tokens": 2 * count, "total_tokens": 2 * count}
                    return self._send(200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage})
                if preflight:
                    return self._chat(body, Step(text="OK"), body.get("model", "fake-model"), 7, 3)
                chosen = fake.answer(body) if fake.answer is not None else None
                with fake.lock:
                    step = chosen or (fake.steps.popleft() if fake.steps else Step())
                time.sleep(step.delay)
                if step.status != 200:
                    headers = step.headers or {"retry-after-ms": "5"}
                    return self._send(step.status, {"error": {"message": f"scripted {step.status}"}}, headers)
                model = step.served_model or body.get("model", "fake-model")
                usage_in, usage_out = 7, 3
                if self.path.endswith("/responses"):
                    return self._responses(body, step, model, usage_in, usage_out)
                return self._chat(body, step, model, usage_in, usage_out)

            def _chat(self, body: dict[str, Any], step: Step, model: str, pin: int, pout: int) -> None:
                usage = {"prompt_tokens": pin, "completion_tokens": pout, "total_tokens": pin + pout}
                base = {"id": "chatcmpl-1", "created": 1, "model": model, "system_fingerprint": step.system_fingerprint}
                if step.tool_calls:
                    return self._chat_tools(body, step, base, usage)
                if not body.get("stream"):
                    message = {"role": "assistant", "content": step.text}
                    choice = {"index": 0, "message": message, "finish_reason": "stop"}
                    return self._send(
                        200, {**base, "object": "chat.completion", "choices": [choice], "usage": usage}, step.headers
                    )
                events = [
                    {
                        **base,
                        "object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}],
                    }
                    for word in step.text.split(" ")
                ]
                if (body.get("stream_options") or {}).get("include_usage"):
                    events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
                self._stream(events, step.headers, step.hold)

            def _chat_tools(
                self, body: dict[str, Any], step: Step, base: dict[str, Any], usage: dict[str, Any]
            ) -> None:
                calls = [
                    {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
                    for i, (name, arguments) in enumerate(step.tool_calls)
                ]
                if not body.get("stream"):
                    message = {"role": "assistant", "content": step.words, "tool_calls": calls}
                    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
                    payload = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
                    return self._send(200, payload, step.headers)
                deltas: list[dict[str, Any]] = []
                for i, call in enumerate(calls):
                    arguments = call["function"]["arguments"]
                    half = len(arguments) // 2
                    first = {"index": i, "id": call["id"], "type": "function"}
                    deltas.append({**first, "function": {"name": call["function"]["name"], "arguments": ""}})
                    deltas += [
                        {"index": i, "function": {"arguments": piece}} for piece in (arguments[:half], arguments[half:])
                    ]
                said = [{"content": step.words}] if step.words else []
                events = [
                    {**base, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
                    for delta in [*said, *({"tool_calls": [d]} for d in deltas)]
                ]
                events.append(
                    {
                        **base,
                        "object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                    }
                )
                if (body.get("stream_options") or {}).get("include_usage"):
                    events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
                self._stream(events, step.headers)

            def _responses(self, body: dict[str, Any], step: Step, model: str, pin: int, pout: int) -> None:
                usage = {"input_tokens": pin, "output_tokens": pout, "total_tokens": pin + pout}
                said = step.words if step.tool_calls else step.text
                text = {"type": "output_text", "text": said, "annotations": []}
                message = {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [text],
                }
                calls = [
                    {
                        "type": "function_call",
                        "id": f"fc_{i}",
                        "call_id": f"call_{i}",
                        "name": name,
                        "arguments": arguments,
                        "status": "completed",
                    }
                    for i, (name, arguments) in enumerate(step.tool_calls)
                ]
                response = {
                    "id": "resp_1",
                    "object": "response",
                    "created_at": 1,
                    "model": model,
                    "status": "completed",
                    "output": ([message] if said is not None else []) + calls,
                    "usage": usage,
                    "parallel_tool_calls": False,
                    "tool_choice": "auto",
                    "tools": [],
                }
                if not body.get("stream"):
                    return self._send(200, response, step.headers)
                events = [
                    {
                        "type": "response.output_text.delta",
                        "delta": said or "",
                        "item_id": "msg_1",
                        "output_index": 0,
                        "content_index": 0,
                        "sequence_number": 1,
                    },
                    {"type": "response.completed", "response": response, "sequence_number": 2},
                ]
                self._stream(events, step.headers)

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("set-cookie", "session=cookie-secret-value; Path=/")
                self.send_header("openai-organization", "org-secret-organization")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(
                self, events: list[dict[str, Any]], headers: dict[str, str], hold: threading.Event | None = None
            ) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                fake.holding = hold is not None  # set before the first event leaves, so a reader never races it
                for index, event in enumerate([*(f"data: {json.dumps(e)}\n\n" for e in events), "data: [DONE]\n\n"]):
                    chunk = event.encode()
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                    if index == 0 and hold is not None:
                        hold.wait(5)
                        fake.holding = False
                self.wfile.write(b"0\r\n\r\n")

        self.serve(Handler, 0)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reset(self) -> None:
        self.script()
        self.requests.clear()
        self.preflights.clear()
        self.answer = None
