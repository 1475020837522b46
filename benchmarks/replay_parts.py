"""What serving one replayed pinned call costs, part by part, in instructions (figure 3's remainder).

Why: figure 3 compares whole pytest processes, so it says how much a replayed repetition costs beyond the same SDK
call on an in-memory transport (about 8 M instructions on top of 8 M), not where that goes. This script runs each
part of the replay path alone, on a cassette recorded by ``benchmarks/run.py``'s own suite and on the request the
SDK really sends, ``--count`` times in a loop. Under callgrind (``--callgrind``, the default when valgrind is on
the machine) only the loop is counted: collection is switched on inside ``functools.reduce``, which drives it, so
imports and set-up cost nothing and the figure is the same on a busy machine. Without valgrind it falls back to
CPU time per iteration (noisier; ratios between parts still hold within one run).

Parts (each builds what a repetition builds fresh, so no memo from an earlier iteration helps it):

- ``load``: read and parse the cassette file (the plugin's persister and vcrpy's YAML serializer, libyaml).
- ``load+filter``: ``Replay.interactions()``: ``load``, then the response filter over every recorded response.
- ``scrub``: the live request scrubbed by a fresh repetition's ``Scrubber`` (credentials out, digests in).
- ``build``: the recorded response rebuilt as an httpx ``Response`` (vcrpy's own function).
- ``serve``: ``Replay.response_for`` on a parsed cassette: scrub, match, build.
- ``patches``: vcrpy's prepared patches checked for staleness, entered and left (every cassette repetition does
  this, so that the agent's own clients are answered from the cassette too).
- ``sdk-call``: one ``chat.completions.create`` on a prebuilt client over an in-memory transport.
- ``sdk-rep``: what figure 3's baseline does per repetition: build that client, make the call, close it.

Run: ``python benchmarks/replay_parts.py`` (records a small suite first; about two minutes under callgrind).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

PARTS = ("load", "load+filter", "scrub", "build", "serve", "patches", "sdk-call", "sdk-rep")


def prepare(work: Path) -> tuple[Path, str]:
    """A recorded cassette of figure 3's suite, and the loopback URL it was recorded on (the server is gone)."""
    import run
    import synthetic

    server = run.start_server()
    try:
        suite = synthetic.call_suite(work / "suite", 2, 1)
        run.record_cassettes(suite, server.base_url, work)
        url = server.base_url
    finally:
        server.stop()
    return next((suite / "cassettes").glob("test_tasks/test_task_0-*/rep-1.yaml")), url


def parts(cassette: Path, base_url: str) -> dict[str, Callable[[], Any]]:
    """Each part as a function of no arguments that does it once (see the module docstring)."""
    import openai
    import run
    import yaml
    from vcr.serializers import yamlserializer

    from pytest_consistency.capture.wire import request_content
    from pytest_consistency.cassette._vcr import build_response, patches_for
    from pytest_consistency.cassette.persist import Persister
    from pytest_consistency.cassette.replay import Replay, Request
    from pytest_consistency.cassette.scrub import Scrubber

    http = __import__(run.http_module_name())
    recorded = yaml.safe_load(cassette.read_text())["interactions"][0]["response"]
    headers = {k: v[0] for k, v in recorded["headers"].items() if not k.lower().startswith("x-consistency-")}
    body = recorded["body"]["string"]
    body = body.encode() if isinstance(body, str) else body
    sent: list[Any] = []

    def handler(request: Any) -> Any:
        request.read()
        sent.append(request)
        return http.Response(recorded["status"]["code"], headers=headers, content=body)

    def client() -> Any:
        return openai.OpenAI(
            api_key="sk-benchmark",
            base_url=base_url,
            max_retries=0,
            http_client=openai.DefaultHttpxClient(transport=http.MockTransport(handler)),
        )

    # The prompt the suite's first task sent, so the live request matches the recording.
    messages = [{"role": "user", "content": "task 0"}]
    prebuilt = client()

    def sdk_call() -> Any:
        return prebuilt.chat.completions.create(model="fake-model", messages=messages)

    def sdk_rep() -> Any:
        c = client()
        try:
            return c.chat.completions.create(model="fake-model", messages=messages)
        finally:
            c.close()

    sdk_call()
    live = sent[-1]

    def scrubber() -> Scrubber:
        return Scrubber(None, (), {})

    def replay() -> Replay:
        s = scrubber()
        return Replay(cassette, s, Persister(s, "re-record"), match_key_fingerprint=False)

    parsed = replay()
    assert parsed.interactions(), f"{cassette} parsed to nothing"
    response = parsed.interactions()[0][1]

    def serve() -> Any:
        parsed.played.clear()
        parsed.scrubber = scrubber()
        answer = parsed.response_for(live)
        assert answer is not None, "the live request did not match its own recording"
        return answer

    def scrub() -> Any:
        return scrubber().filter(
            Request(str(live.method), str(live.url), request_content(live), dict(live.headers.items()))
        )

    from vcr.cassette import Cassette

    unloaded = Cassette(str(cassette), record_mode="none")  # what vcrpy's patch builder reads; never loaded here

    def patches() -> None:
        with patches_for(unloaded).applied(unloaded):
            pass

    return {
        "load": lambda: Persister(scrubber(), "re-record").load_cassette(cassette, yamlserializer),
        "load+filter": lambda: replay().interactions(),
        "scrub": scrub,
        "build": lambda: build_response(response, http),
        "serve": serve,
        "patches": patches,
        "sdk-call": sdk_call,
        "sdk-rep": sdk_rep,
    }


def drive(cassette: Path, base_url: str, part: str, count: int) -> None:
    """Do ``part`` once (warm), then ``count`` times inside ``functools.reduce`` (what callgrind counts)."""
    work = parts(cassette, base_url)[part]
    work()
    started = time.process_time()
    functools.reduce(lambda _, __: work(), range(count), None)
    print(json.dumps({"cpu_s": time.process_time() - started}))


def drive_command(cassette: Path, base_url: str, part: str, count: int) -> list[str]:
    """This script, driving ``part`` ``count`` times (see ``drive``)."""
    return [
        sys.executable,
        __file__,
        "--drive",
        part,
        "--count",
        str(count),
        "--cassette",
        str(cassette),
        "--url",
        base_url,
    ]


def callgrind(cassette: Path, base_url: str, part: str, count: int, out: Path) -> int:
    """Instructions counted inside the loop of ``count`` iterations."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tool = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=functools_reduce"]
    command = [*tool, f"--callgrind-out-file={out}", *drive_command(cassette, base_url, part, count)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if not found:
        raise RuntimeError(f"callgrind printed no total for {part}:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=50, help="iterations per part (default %(default)s)")
    parser.add_argument("--parts", default=",".join(PARTS), help="parts to measure, comma-separated")
    parser.add_argument("--cpu", action="store_true", help="CPU time instead of callgrind instruction counts")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    parser.add_argument("--cassette", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive:
        drive(args.cassette, args.url, args.drive, args.count)
        return 0
    wanted = [p for p in args.parts.split(",") if p]
    unknown = sorted(set(wanted) - set(PARTS))
    if unknown:
        parser.error(f"--parts: unknown part(s) {', '.join(unknown)}; choose from {', '.join(PARTS)}")
    use_callgrind = not args.cpu and shutil.which("valgrind") is not None
    work = Path(tempfile.mkdtemp(prefix="replay-parts-"))
    try:
        cassette, url = prepare(work)
        figures: dict[str, float] = {}
        for part in wanted:
            if use_callgrind:
                total = callgrind(cassette, url, part, args.count, work / f"{part}.out")
                figures[part] = total / args.count
                print(f"{part:12s} {figures[part] / 1e6:8.3f} M instructions per iteration", flush=True)
            else:
                command = drive_command(cassette, url, part, args.count)
                done = subprocess.run(command, capture_output=True, text=True, check=True)
                figures[part] = json.loads(done.stdout)["cpu_s"] / args.count
                print(f"{part:12s} {figures[part] * 1e6:8.1f} us CPU per iteration", flush=True)
        if args.json:
            unit = "instructions" if use_callgrind else "cpu_seconds"
            args.json.write_text(json.dumps({"unit": unit, "count": args.count, "per_iteration": figures}, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
