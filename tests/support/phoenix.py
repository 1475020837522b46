"""Arize Phoenix, the tool the OpenTelemetry export is tested against (issue 29, docs/traces.md).

- :func:`start_phoenix` starts ``phoenix serve`` from ``.venv-phoenix`` (its own venv: Phoenix pins versions of
  its own) on free loopback ports with its database in a working directory of its own, and waits for ``/healthz``;
  :class:`Phoenix` reads the spans back through Phoenix's REST API and names the page of a trace.
- :class:`OtlpTap` sits between a session and Phoenix and forwards every OTLP/HTTP request byte for byte, keeping
  a copy: Phoenix stores a span id once however often it is sent (a second export of the same spans leaves the
  count unchanged), so only the wire can show that every span was sent exactly once, and only the wire holds every
  byte a grep for a key must search.
- :func:`render_trace` opens a page in headless Chromium (Debian's, through Playwright) once the trace tree is
  drawn, for the test and for ``scripts/phoenix_screenshot.py``.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopback import LoopbackServer, QuietHandler

ROOT = Path(__file__).resolve().parents[2]
PHOENIX = ROOT / ".venv-phoenix" / "bin" / "phoenix"
#: The README's command that installs it.
INSTALL = "python3 -m venv .venv-phoenix && .venv-phoenix/bin/pip install 'arize-phoenix==20.26.1'"
MISSING = f"Arize Phoenix is not installed in .venv-phoenix (install it with: {INSTALL})"
CHROMIUM = "/usr/bin/chromium"
#: Seconds Phoenix may take to answer /healthz (about 12 s on an idle machine; generous beside a busy one).
START_DEADLINE = 180.0
#: Seconds the spans of a session may take to show in Phoenix's API (it inserts them in batches, off the request).
SPANS_DEADLINE = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Phoenix:
    """A running ``phoenix serve``; its HTTP port takes OTLP (``/v1/traces``) and serves the UI and REST API."""

    process: subprocess.Popen[bytes]
    url: str
    workdir: Path
    log: Path
    #: Seconds from the start of the process until /healthz answered.
    started_in: float

    def get(self, path: str, **query: Any) -> Any:
        address = f"{self.url}{path}"
        if query:
            address += "?" + urllib.parse.urlencode(query, doseq=True)
        with urllib.request.urlopen(address, timeout=30) as response:
            return json.load(response)

    def spans(self, project: str) -> list[dict[str, Any]]:
        """Every span of ``project`` as Phoenix's REST API gives it (all pages); none for a project not made yet."""
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        path = f"/v1/projects/{urllib.parse.quote(project, safe='')}/spans"
        while True:
            query: dict[str, Any] = {"limit": 1000}
            if cursor is not None:
                query["cursor"] = cursor
            try:
                page = self.get(path, **query)
            except urllib.error.HTTPError as exc:
                if exc.code == 404 and cursor is None:  # no span of the project stored yet
                    return []
                raise
            found.extend(page["data"])
            cursor = page.get("next_cursor")
            if not cursor:
                return found

    def wait_for_spans(self, project: str, count: int, deadline: float = SPANS_DEADLINE) -> list[dict[str, Any]]:
        """The spans of ``project`` once at least ``count`` are stored, or what is there after ``deadline`` s."""
        end = time.monotonic() + deadline
        while True:
            spans = self.spans(project)
            if len(spans) >= count or time.monotonic() > end:
                return spans
            time.sleep(0.2)

    def trace_page(self, trace_id: str) -> str:
        """The UI's address of a trace (Phoenix redirects it to the trace's page in its project)."""
        return f"{self.url}/redirects/traces/{trace_id}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def start_phoenix(workdir: Path, deadline: float = START_DEADLINE) -> Phoenix:
    """``phoenix serve`` on 127.0.0.1 (free HTTP and gRPC ports), its database under ``workdir``, once healthy.

    Nothing of the caller's environment configures it (no ``PHOENIX_*``, no ``OTEL_*``), and it sends no telemetry.
    """
    if not PHOENIX.exists():
        raise FileNotFoundError(MISSING)
    workdir.mkdir(parents=True, exist_ok=True)
    port, grpc = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
    env.update(
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(port),
        PHOENIX_GRPC_PORT=str(grpc),
        PHOENIX_WORKING_DIR=str(workdir),
        PHOENIX_TELEMETRY_ENABLED="false",
        PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
    )
    log = workdir / "phoenix.log"
    began = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(PHOENIX), "serve"],
            cwd=workdir,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    phoenix = Phoenix(process, f"http://127.0.0.1:{port}", workdir, log, 0.0)
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"phoenix serve exited ({process.returncode}):\n{_tail(log)}")
        try:
            with urllib.request.urlopen(f"{phoenix.url}/healthz", timeout=5) as response:
                if response.status == 200:
                    phoenix.started_in = time.monotonic() - began
                    return phoenix
        except (OSError, urllib.error.URLError):
            pass
        if time.monotonic() - began > deadline:
            phoenix.stop()
            raise RuntimeError(f"phoenix serve not healthy within {deadline:.0f} s:\n{_tail(log)}")
        time.sleep(0.25)


def _tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


@contextmanager
def phoenix_running(workdir: Path) -> Iterator[Phoenix]:
    phoenix = start_phoenix(workdir)
    try:
        yield phoenix
    finally:
        phoenix.stop()


@dataclass(frozen=True)
class Sent:
    """One OTLP/HTTP request the tap forwarded: its raw body, and per resource its attributes and spans."""

    body: bytes
    status: int
    resources: list[tuple[dict[str, Any], list[dict[str, Any]]]] = field(default_factory=list)


def decoded(body: bytes) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """An ``ExportTraceServiceRequest`` (protobuf): per resource its attributes and its spans (ids in hex, times
    in nanoseconds, the parent None for a root)."""
    from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    out = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        spans = []
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    {
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_id": span.parent_span_id.hex() or None,
                        "name": span.name,
                        "kind": span.kind,
                        "start_ns": span.start_time_unix_nano,
                        "end_ns": span.end_time_unix_nano,
                        "attributes": {a.key: _value(a.value) for a in span.attributes},
                        "status": MessageToDict(span.status),
                    }
                )
        out.append((resource, spans))
    return out


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


class OtlpTap(LoopbackServer):
    """A loopback OTLP/HTTP endpoint that forwards each request to ``upstream`` unchanged (body, content type and
    encoding) and answers what the upstream answered; ``sent`` keeps every request, in order."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.removesuffix("/")
        self.sent: list[Sent] = []
        self.steps: deque[Any] = deque()
        self.lock = threading.Lock()
        tap = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {
                    name: value
                    for name in ("content-type", "content-encoding")
                    if (value := self.headers.get(name)) is not None
                }
                forward = urllib.request.Request(f"{tap.upstream}{self.path}", data=body, headers=headers)
                try:
                    with urllib.request.urlopen(forward, timeout=60) as response:
                        status, answer = response.status, response.read()
                        kind = response.headers.get("content-type", "application/x-protobuf")
                except urllib.error.HTTPError as exc:
                    status, answer, kind = exc.code, exc.read(), exc.headers.get("content-type", "text/plain")
                raw = gzip.decompress(body) if headers.get("content-encoding") == "gzip" else body
                with tap.lock:
                    tap.sent.append(Sent(body, status, decoded(raw) if self.path == "/v1/traces" else []))
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.serve(Handler, 0)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self, project: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Every span sent for ``project`` (the resource's ``openinference.project.name``), with its resource, in
        the order sent; a span sent twice is here twice."""
        with self.lock:
            return [
                (resource, span)
                for request in self.sent
                for resource, spans in request.resources
                if resource.get("openinference.project.name") == project
                for span in spans
            ]

    def bodies(self) -> list[bytes]:
        with self.lock:
            return [request.body for request in self.sent]


def render_trace(
    url: str,
    trace_id: str,
    expect: str,
    out: Path | None = None,
    chromium: str = CHROMIUM,
    size: tuple[int, int] = (1400, 900),
    deadline: float = SPANS_DEADLINE,
) -> str:
    """Open Phoenix's page ``url`` of a trace in headless Chromium and wait until its trace view is drawn: the
    trace's id in the drawer's header, ``expect`` and the tree's first repetition shown, no spinner left; then save
    a screenshot to ``out`` (when given). The page's visible text is returned."""
    from playwright.sync_api import sync_playwright

    timeout = deadline * 1000
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": size[0], "height": size[1]})
            page.set_default_timeout(timeout)
            page.goto(url)
            page.get_by_role("button", name=f"Copy ID {trace_id}").wait_for(state="visible")
            page.get_by_text("repetition 1", exact=True).first.wait_for(state="visible")
            page.get_by_text(expect, exact=True).first.wait_for(state="visible")
            page.wait_for_load_state("networkidle")
            page.wait_for_function("!document.querySelector('[role=progressbar]')")
            text = page.inner_text("body")
            if out is not None:
                out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out))
            return text
        finally:
            browser.close()
