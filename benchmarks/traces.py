"""What ``--consistency-otel`` costs at the end of a session, beside the end of session it follows.

Builds the records of a large agent session (``benchmarks/causes.py``'s: tasks x n repetitions of ``steps`` calls
each, a third of the tasks inconsistent), runs the end of session as the controller does (``session_end``: summary,
report, every format), then times, in the same process, each part of the export from the same summary: the span
records (``report.otlp.spans``), the SDK's spans from them, redacted (``report.otlp.sdk_spans``), the protobuf body the
OTLP exporter sends, the OTLP JSON body, and sending the protobuf body to a collector on loopback that answers 200
(``export.send``, with the SDK's exporter). Each figure is CPU seconds (median of ``--repeats``), and the ratio is
the export's share of the end of session: a figure of its own, paid only with the option.

    .venv/bin/python benchmarks/traces.py                      # 200 tasks x 10 x 20 steps, 3 repeats
    .venv/bin/python benchmarks/traces.py --tasks 20 --repeats 1   # smoke
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from causes import records
from session_end import SECRETS, end_of_session

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.result import RunFacts, SessionSummary


class Sink(BaseHTTPRequestHandler):
    """A collector that takes every request (200) without decoding it."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def cpu(action: Any) -> tuple[float, Any]:
    mark = time.process_time()
    value = action()
    return time.process_time() - mark, value


def one_round(reps: list[Any], endpoint: str) -> dict[str, float]:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from pytest_consistency.report.otlp import sdk_spans
    from pytest_consistency.report.otlp.encode import otlp_json_text
    from pytest_consistency.report.otlp.export import Target, send
    from pytest_consistency.report.otlp.spans import session_spans

    seconds = {"end_of_session": end_of_session(reps)["cpu"]}
    summary = build_summary(reps, run=RunFacts(record_mode="none", run_id="bench"))
    summary = SessionSummary.from_dict(summary.to_dict())  # as the export reads the redacted report back
    seconds["span_records"], _ = cpu(lambda: session_spans(summary))
    seconds["sdk_spans"], sdk = cpu(lambda: sdk_spans(summary, SECRETS))  # the records again, then redacted
    seconds["protobuf_body"], body = cpu(lambda: encode_spans(sdk).SerializePartialToString())
    seconds["otlp_json_body"], _ = cpu(lambda: otlp_json_text(sdk))
    wall = time.perf_counter()
    seconds["send_cpu"], outcome = cpu(lambda: send(sdk, Target(endpoint, "http/protobuf", 60.0)))
    seconds["send_wall"] = time.perf_counter() - wall
    assert outcome.failure is None and outcome.sent == len(sdk), outcome
    seconds["spans"] = len(sdk)
    seconds["bytes"] = len(body)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    reps = records(args.tasks, args.n, args.steps)
    rounds = [one_round(reps, endpoint) for _ in range(args.repeats)]
    server.shutdown()
    figures = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
    export = figures["sdk_spans"] + figures["protobuf_body"]
    figures["export_cpu"] = export
    figures["export_share_of_end"] = export / figures["end_of_session"]
    figures["us_per_span"] = export / figures["spans"] * 1e6
    print(json.dumps({"tasks": args.tasks, "n": args.n, "steps": args.steps, **figures}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
