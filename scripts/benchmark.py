"""Speed of pytest-consistency's moving parts, as ratios against a baseline measured in the same run.

1. Recording transport: N chat calls through the pinned client (every attempt recorded, body tapped) against
   N calls through a plain OpenAI client, both to the loopback fake server in tests/.
2. Replay layout: N calls replayed from N one-interaction cassettes (one per repetition, what the plugin does)
   against the same N calls replayed from one shared cassette (vcrpy matches each request against every
   interaction, so one big cassette is quadratic).

Run: python scripts/benchmark.py [N]   (prints a table; nothing here is a test)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

import openai  # noqa: E402
from fake_openai import GOOD_KEY, FakeOpenAI  # noqa: E402

from pytest_consistency.capture.active import ActiveRepetition, activate  # noqa: E402
from pytest_consistency.capture.clients import build_client  # noqa: E402
from pytest_consistency.cassette.scope import use_cassette  # noqa: E402
from pytest_consistency.cassette.scrub import Scrubber  # noqa: E402
from pytest_consistency.route.route import Route  # noqa: E402


def ask(client: openai.OpenAI, i: int) -> None:
    client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": f"task {i}"}])


def timed(fn: object, repeats: int = 3) -> float:
    """Median wall time of ``fn()`` over a few runs."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main(n: int) -> None:
    server = FakeOpenAI().start()
    route = Route(base_url=server.base_url, api_key=GOOD_KEY, model="fake-model", timeout=30, max_retries=0)
    plain = openai.OpenAI(base_url=server.base_url, api_key=GOOD_KEY, max_retries=0)
    pinned = build_client(route, ledger=None)
    activate(ActiveRepetition(task_id="bench", repeat=1, n=1, marked=True))
    ask(plain, 0), ask(pinned, 0)  # warm up connections
    base = timed(lambda: [ask(plain, i) for i in range(n)])
    recorded = timed(lambda: [ask(pinned, i) for i in range(n)])
    activate(None)

    with tempfile.TemporaryDirectory() as tmp:
        shared = Path(tmp) / "shared.yaml"
        with use_cassette(shared, "all", Scrubber(GOOD_KEY), "re-record", lambda: True):
            for i in range(n):
                ask(pinned, i)
        for i in range(n):
            with use_cassette(Path(tmp) / f"rep-{i}.yaml", "all", Scrubber(GOOD_KEY), "re-record", lambda: True):
                ask(pinned, i)
        server.stop()

        def replay_shared() -> None:
            with use_cassette(shared, "none", Scrubber(GOOD_KEY), "re-record", lambda: True):
                for i in range(n):
                    ask(pinned, i)

        def replay_split() -> None:
            for i in range(n):
                with use_cassette(Path(tmp) / f"rep-{i}.yaml", "none", Scrubber(GOOD_KEY), "re-record", lambda: True):
                    ask(pinned, i)

        split = timed(replay_split)
        one = timed(replay_shared)

    print(f"{'measurement':<52} {'seconds':>9} {'per call':>10} {'ratio':>7}")
    print(f"{'plain OpenAI client, live loopback (baseline)':<52} {base:9.3f} {base / n * 1000:8.2f}ms {1:7.2f}")
    print(
        f"{'pinned client, every attempt recorded':<52} {recorded:9.3f} {recorded / n * 1000:8.2f}ms "
        f"{recorded / base:7.2f}"
    )
    print(f"{'replay: one cassette per repetition (baseline)':<52} {split:9.3f} {split / n * 1000:8.2f}ms {1:7.2f}")
    print(f"{'replay: one shared cassette':<52} {one:9.3f} {one / n * 1000:8.2f}ms {one / split:7.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
