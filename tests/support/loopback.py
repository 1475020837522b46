"""What the loopback test servers (``fake_openai``, ``fake_anthropic``) share: a threaded HTTP server on 127.0.0.1
serving a script of steps, started and stopped around the tests that use it."""

from __future__ import annotations

import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

Server = TypeVar("Server", bound="LoopbackServer")


class QuietHandler(BaseHTTPRequestHandler):
    """The request handler every loopback server builds on: HTTP/1.1 (keep-alive, as the SDKs expect) and no
    access log on stderr."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass


class LoopbackServer:
    steps: deque[Any]
    lock: threading.Lock

    def serve(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self: Server) -> Server:
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.thread.is_alive():
            self.server.shutdown()
        self.server.server_close()

    def script(self, *steps: Any) -> None:
        """Answer the next requests with ``steps``, in order (then with the default answer)."""
        with self.lock:
            self.steps.clear()
            self.steps.extend(steps)
