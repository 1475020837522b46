"""An overloaded error in the middle of an Anthropic stream is a route error, never the agent's failure."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic
from suites import anthropic_suite as suite
from suites import load_report as report
from suites import report_calls as calls
from suites import run_mode as run


class MidStreamError:
    """A Messages API whose streams start, then fail with an ``overloaded_error`` event (HTTP status 200), as the
    real API does when it is overloaded mid-answer."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                outer.requests += 1
                message = {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 3, "output_tokens": 1},
                }
                events = [
                    ("message_start", {"type": "message_start", "message": message}),
                    ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
                ]
                data = b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


MID_STREAM_TASK = """
import anthropic
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_anthropic_client, consistency):
    try:
        with pinned_anthropic_client.messages.stream(
            model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            consistency.record("".join(stream.text_stream))
    except anthropic.APIStatusError as exc:
        consistency.record(type(exc).__name__)
"""


def test_an_overloaded_error_in_the_middle_of_a_stream_is_a_route_error(
    pytester: pytest.Pytester, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = MidStreamError()
    try:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        pytester.makepyfile(test_agent=suite(MID_STREAM_TASK))
        result = run(pytester, "off", "--route-drift-max=0")
        assert server.requests == 2
        assert report(pytester)["tasks"][0]["answers"] == ["APIStatusError"] * 2
        seen = calls(pytester)
        assert all(c["error"] for c in seen), seen
        assert "errors" in report(pytester)["tasks"][0]["drift"]["kinds"]
        assert result.ret == 1, result.stdout.str()
    finally:
        server.stop()
