"""Figure 7: time to the first streamed chunk through the pinned client vs a plain OpenAI client, same server.

Why in-process rather than through pytest: the quantity is a latency of a few milliseconds, which the start-up
of a pytest process would drown; the pinned client is built exactly as the ``pinned_client`` fixture builds it,
and each sample runs inside the same per-repetition scope a session enters (with ``--consistency-record=off``:
the transport observer, no cassette), with its own active repetition.

The loopback fake server sends the first SSE event at once and holds the rest for ``HOLD`` seconds. A client
that yields chunks as they arrive sees its first chunk long before that; one that buffers the whole body (as a
cassette recorder might) cannot be faster than ``HOLD``, so buffering shows as a ratio far above 1, not as noise.
A second, informational row records a cassette (mode ``all``) around each sample, for that reason.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

import openai  # noqa: E402
from fake_openai import GOOD_KEY, FakeOpenAI, Step  # noqa: E402

from pytest_consistency.capture.active import ActiveRepetition, activate  # noqa: E402
from pytest_consistency.capture.clients import build_client  # noqa: E402
from pytest_consistency.capture.observe import observe_transports  # noqa: E402
from pytest_consistency.cassette.scope import repetition_scope  # noqa: E402
from pytest_consistency.cassette.scrub import Scrubber  # noqa: E402
from pytest_consistency.route.route import Route  # noqa: E402

#: How long the server holds the stream after its first event.
HOLD = 0.03
MESSAGES: list[Any] = [{"role": "user", "content": "stream please"}]


def first_chunk(server: FakeOpenAI, client: openai.OpenAI) -> float:
    """Seconds from ``create(stream=True)`` to the first chunk; the rest of the stream is then drained."""
    release = threading.Event()
    server.script(Step(text="one two three four", hold=release))
    timer = threading.Timer(HOLD, release.set)
    timer.start()
    start = time.perf_counter()
    stream = client.chat.completions.create(model="fake-model", messages=MESSAGES, stream=True)
    chunks = iter(stream)
    next(chunks)
    elapsed = time.perf_counter() - start
    for _ in chunks:
        pass
    stream.close()
    timer.join()
    return elapsed


def repetition(scope: Callable[[int], AbstractContextManager[Any]], index: int) -> Iterator[None]:
    """One sample's active repetition and scope, as ``pytest_runtest_protocol``/``setup`` would enter them."""
    activate(ActiveRepetition(task_id="bench::stream", repeat=index, n=index, marked=True))
    try:
        with scope(index):
            yield
    finally:
        activate(None)


def measure(samples: int) -> dict[str, Any]:
    """Median first-chunk time of each client over ``samples`` alternated samples, in milliseconds."""
    server = FakeOpenAI().start()
    server.server.handle_error = lambda *args: None  # vcrpy's recorder drops connections: no tracebacks
    route = Route(base_url=server.base_url, api_key=GOOD_KEY, model="fake-model", timeout=30, max_retries=0)
    plain = openai.OpenAI(base_url=server.base_url, api_key=GOOD_KEY, max_retries=0)
    pinned = build_client(route, ledger=None)
    scrubber = Scrubber(GOOD_KEY)
    times: dict[str, list[float]] = {"plain": [], "pinned": [], "pinned+cassette": []}
    with tempfile.TemporaryDirectory() as tmp:

        def off(_: int) -> AbstractContextManager[Any]:
            return repetition_scope(None, "off", scrubber, "", lambda: True, lambda _: observe_transports(None))

        def recording(index: int) -> AbstractContextManager[Any]:
            path = Path(tmp) / f"rep-{index}.yaml"
            return repetition_scope(path, "all", scrubber, "", lambda: True, lambda _: observe_transports(None))

        def run(name: str, index: int) -> float:
            if name == "plain":
                return first_chunk(server, plain)
            scope = off if name == "pinned" else recording
            for _ in repetition(scope, index):
                return first_chunk(server, pinned)
            raise AssertionError("unreachable")

        for name in times:  # warm up connections and imports
            run(name, 0)
        order = list(times)
        for i in range(1, samples + 1):
            for name in order if i % 2 else reversed(order):
                times[name].append(run(name, i))
    plain.close()
    pinned.close()
    server.stop()
    return {
        name: {
            "median_ms": statistics.median(values) * 1000,
            "min_ms": min(values) * 1000,
            "max_ms": max(values) * 1000,
            "samples": len(values),
        }
        for name, values in times.items()
    }


if __name__ == "__main__":
    import json

    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 50), indent=2))
