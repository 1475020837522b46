"""Regenerate docs/traces-phoenix.png: one task of the example suite as Arize Phoenix shows its trace.

Why a script: the picture in docs/traces.md must show what the current code exports and what Phoenix makes of it,
so it is produced, never drawn. It starts Phoenix from .venv-phoenix on free loopback ports with its database in a
temporary directory (tests/support/phoenix.py, the same helper tests/integration/report/test_traces_in_phoenix.py
uses), replays the example suite's cause tasks from cassettes/ (offline, no key) with ``--consistency-otel``
pointed at it as a user would (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_RESOURCE_ATTRIBUTES``), waits until Phoenix
serves every span, opens Phoenix's page of the sampling task's trace in headless Chromium (Debian's /usr/bin/chromium
through Playwright; no browser download) once the trace tree is drawn, and saves it at 1400 x 900.

    .venv/bin/python scripts/phoenix_screenshot.py [--out docs/traces-phoenix.png] [--task test_cause_sampling]

Needs Phoenix: python3 -m venv .venv-phoenix && .venv-phoenix/bin/pip install 'arize-phoenix==20.26.1'
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from phoenix import CHROMIUM, MISSING, PHOENIX, phoenix_running, render_trace  # noqa: E402
from suites import replay_examples  # noqa: E402

from pytest_consistency.report.otlp.spans import trace_id_of  # noqa: E402

#: The project the spans go to; its name shows in Phoenix's breadcrumb.
PROJECT = "example-suite"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "traces-phoenix.png")
    parser.add_argument("--task", default="test_cause_sampling", help="the cause task whose trace is shown")
    parser.add_argument("--chromium", default=CHROMIUM)
    args = parser.parse_args()
    if not PHOENIX.exists():
        raise SystemExit(MISSING)
    task_id = f"examples/test_cause_tasks.py::{args.task}"
    with tempfile.TemporaryDirectory() as tmp, phoenix_running(Path(tmp) / "phoenix") as phoenix:
        print(f"phoenix up in {phoenix.started_in:.1f} s at {phoenix.url}")
        for name in [name for name in os.environ if name.startswith("OTEL_")]:
            del os.environ[name]
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = phoenix.url
        os.environ["OTEL_RESOURCE_ATTRIBUTES"] = f"openinference.project.name={PROJECT}"
        os.environ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"] = "30"
        report = Path(tmp) / "report.json"
        began = time.monotonic()
        result = replay_examples(report, "--consistency-otel", "-k", "cause")
        exported = [line for line in result.stdout.splitlines() if line.startswith("otel: ")]
        print(f"session: {time.monotonic() - began:.1f} s; {' '.join(exported)}")
        if not report.is_file() or not exported or not exported[0].startswith("otel: exported "):
            raise SystemExit(f"the example suite did not export its spans:\n{result.stdout[-3000:]}{result.stderr}")
        data = json.loads(report.read_text())
        if task_id not in {task["task_id"] for task in data["tasks"]}:
            raise SystemExit(f"{task_id} is not a task of the example suite")
        count = int(exported[0].split()[2])
        spans = phoenix.wait_for_spans(PROJECT, count)
        if len(spans) < count:
            raise SystemExit(f"Phoenix holds {len(spans)} of the {count} spans")
        trace = f"{trace_id_of(data['summary']['run']['run_id'], task_id):032x}"
        render_trace(phoenix.trace_page(trace), trace, f"task {task_id}", out=args.out, chromium=args.chromium)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
