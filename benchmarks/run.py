"""pytest-consistency's benchmark suite: what the plugin costs, as ratios against a baseline in the same run.

    python benchmarks/run.py [--smoke] [--repeats 5] [--json out.json] [--only 1,3,6,8] [--profile DIR]

Not part of the test run: it builds synthetic suites in a temporary directory and runs each configuration as a
real pytest process, ``--repeats`` times, alternating with its baseline (ABAB..., the order flipped every round)
so that a change of machine load hits both sides alike; it prints the medians and their ratio per figure, the
spread of the samples (``(max - min) / median``, the noise this run saw) and whether each target is met, and
writes all samples to ``--json``. ``--smoke`` runs every figure at tiny sizes once, in seconds, so that CI keeps
the benchmark working; it reports times but never judges them. See benchmarks/README.md for the figures.

Why ratios and not seconds: the machines this runs on differ and are shared (CI, other tests); a ratio against a
baseline measured in the same minutes is the only figure that means something from one run to the next.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(HERE))

import synthetic  # noqa: E402
import yaml  # noqa: E402
from fake_openai import GOOD_KEY, FakeOpenAI, Step  # noqa: E402

from pytest_consistency.cassette.convert import convert  # noqa: E402

#: Options of every pytest process: quiet, and no cache directory written into the suite between samples.
COMMON = ["-q", "-p", "no:cacheprovider"]
#: With ``--autoload`` every installed pytest plugin loads, as in a developer's venv; by default none does and
#: each side names the plugins it uses, so that a second of unrelated plugin imports (respx, llmock, anyio,
#: pytest-asyncio... in this venv) does not dilute the ratios.
AUTOLOAD = False
#: Environment variables that would change what a session does (a key, a route, extra options, CI outputs).
SCRUBBED = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "PYTEST_ADDOPTS",
    "GITHUB_STEP_SUMMARY",
    "PYTEST_PLUGINS",
    "PYTHONPATH",
    # With it set (this workplace's machines set it), the plugin's modules are compiled from source in every
    # process while pytest and pytest-repeat, byte-compiled when pip installed them, are not: about 500 M
    # instructions of a figure 1 process were the plugin's compilation, which an installed plugin never pays. The
    # warm-up run writes the bytecode, as pip's install would have.
    "PYTHONDONTWRITEBYTECODE",
)
PACKAGES = ("pytest", "pytest-repeat", "pytest-xdist", "openai", "httpx", "httpx2", "vcrpy", "PyYAML", "pyinstrument")


@dataclass(frozen=True)
class Sizes:
    """Every size the figures use; ``--smoke`` shrinks them all."""

    tasks: int = 200
    n: int = 5
    scale_small: int = 50
    scale_large: int = 500
    end_small: int = 1_000
    end_large: int = 10_000
    end_n: int = 10
    xdist_tasks: int = 100
    delay: float = 0.05
    stream_samples: int = 200
    #: Figure 8: live calls (tasks x n) against a server answering after ``live_delay``, with these worker counts.
    live_tasks: int = 40
    live_delay: float = 0.2
    live_workers: tuple[int, ...] = (0, 4, 8)


SMOKE = Sizes(
    tasks=4,
    n=2,
    scale_small=2,
    scale_large=4,
    end_small=20,
    end_large=40,
    end_n=3,
    xdist_tasks=2,
    delay=0.05,
    stream_samples=3,
    live_tasks=2,
    live_delay=0.05,
    live_workers=(0, 2),
)

#: What the previous round measured for each figure (the performance issue's work, idle 2-core machine, 5
#: repeats; ranges over its runs), printed beside this run's ratio.
PREVIOUS = {
    "1": "1.63-1.68",
    "2": "1.51-1.57",
    "3": "2.30",
    "3j": "not measured (JSON cassettes are new)",
    "4": "0.74",
    "5": "10.4-12.0",
    "6": "1.80x faster, reports equal",
    "7": "1.015",
    "8": "serial 1.05 (42 s for a 40 s bound); -n 4/-n 8 not measured",
}


class BenchmarkError(RuntimeError):
    """A configuration did not run as intended (a failing test, a missing cassette): its times would lie."""


@dataclass
class Config:
    """One pytest command line to time: where it runs, its options and environment, what to do before each run."""

    key: str
    label: str
    cwd: Path
    args: list[str]
    repetitions: int
    env: dict[str, str] = field(default_factory=dict)
    before: Callable[[], None] | None = None


@dataclass
class Sample:
    """One run: the process's wall time, and its run-loop time when the suite's conftest wrote it."""

    wall: float
    loop: float | None


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    if not AUTOLOAD:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def ours(*args: str) -> list[str]:
    """Options of a session that uses pytest-consistency (and not pytest-repeat)."""
    return [*(["-p", "no:repeat"] if AUTOLOAD else ["-p", "pytest_consistency.plugin"]), *args]


def theirs(n: int) -> list[str]:
    """Options of a baseline session: pytest-repeat's ``--count``, pytest-consistency not loaded."""
    return [*([] if AUTOLOAD else ["-p", "pytest_repeat"]), "--count", str(n), "-p", "no:consistency"]


def xdist(workers: int) -> list[str]:
    """Options for pytest-xdist with ``workers`` workers (0: xdist loaded, nothing distributed)."""
    return [*([] if AUTOLOAD else ["-p", "xdist.plugin"]), "-n", str(workers)]


def run_pytest(config: Config, scratch: Path, index: int, expect_ok: bool = True) -> Sample:
    """One timed pytest process; wall time from the parent, run-loop time from the suite's conftest."""
    loop_file = scratch / f"{config.key}-{index}.loop"
    loop_file.unlink(missing_ok=True)
    env = {**base_env(), **config.env, "BENCH_LOOP_FILE": str(loop_file)}
    if config.before is not None:
        config.before()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *COMMON, *config.args],
        cwd=config.cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    wall = time.perf_counter() - start
    if expect_ok and done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-25:])
        raise BenchmarkError(f"{config.label}: pytest exited {done.returncode} in {config.cwd}\n{tail}")
    loop = float(loop_file.read_text()) if loop_file.is_file() else None
    return Sample(wall, loop)


def alternate(configs: list[Config], repeats: int, scratch: Path, warm_up: bool) -> dict[str, list[Sample]]:
    """Run every configuration ``repeats`` times, round-robin, the order reversed every other round.

    A warm-up round first (not kept) compiles the test modules and fills the OS caches for both sides alike.
    """
    samples: dict[str, list[Sample]] = {c.key: [] for c in configs}
    if warm_up:
        for config in configs:
            run_pytest(config, scratch, -1)
    for i in range(repeats):
        for config in configs if i % 2 == 0 else list(reversed(configs)):
            samples[config.key].append(run_pytest(config, scratch, i))
    return samples


def median(values: list[float]) -> float:
    return statistics.median(values)


def spread(values: list[float]) -> float:
    """(max - min) / median: how far apart this run's samples were."""
    mid = median(values)
    return (max(values) - min(values)) / mid if mid else 0.0


def describe(config: Config, samples: list[Sample]) -> dict[str, Any]:
    walls = [s.wall for s in samples]
    loops = [s.loop for s in samples if s.loop is not None]
    row: dict[str, Any] = {
        "key": config.key,
        "label": config.label,
        "command": ["python", "-m", "pytest", *COMMON, *config.args],
        "env": {
            k: v
            for k, v in {**base_env(), **config.env}.items()
            if k.startswith(("PYTEST_", "OPENAI_")) and "KEY" not in k
        },
        "repetitions": config.repetitions,
        "wall_s": walls,
        "wall_median_s": median(walls),
        "wall_spread": spread(walls),
    }
    if loops:
        row["loop_s"] = loops
        row["loop_median_s"] = median(loops)
        row["loop_per_repetition_ms"] = median(loops) / config.repetitions * 1000
    return row


# --- servers and cassettes -------------------------------------------------------------------------------


def start_server() -> FakeOpenAI:
    server = FakeOpenAI().start()
    server.server.handle_error = lambda *args: None  # a client that hangs up is no error worth a traceback
    return server


def route_args(base_url: str) -> list[str]:
    return [f"--consistency-base-url={base_url}", "--consistency-model=fake-model", "--consistency-max-retries=0"]


def record_cassettes(suite: Path, base_url: str, scratch: Path) -> None:
    """Record every repetition's cassette once (``--consistency-record=once``) against the loopback server."""
    config = Config(
        "record",
        f"recording cassettes in {suite.name}",
        suite,
        ours(*route_args(base_url), "--consistency-record=once"),
        0,
        env={"OPENAI_API_KEY": GOOD_KEY},
    )
    run_pytest(config, scratch, 0)


def copy_cassettes(source: Path, target: Path, tasks: int) -> None:
    """The cassettes of tasks ``0 .. tasks-1`` (directories ``test_task_<task>-<digest>``) into ``target``."""
    for folder in (source / "cassettes").rglob("test_task_*"):
        task = int(folder.name.removeprefix("test_task_").split("-")[0])
        if folder.is_dir() and task < tasks:
            shutil.copytree(folder, target / folder.relative_to(source))


def recorded_response(suite: Path) -> dict[str, Any]:
    """The response of one recorded cassette, for the in-memory baseline to serve the same bytes."""
    cassette = next(iter(sorted((suite / "cassettes").rglob("rep-1.yaml"))))
    response: dict[str, Any] = yaml.safe_load(cassette.read_text())["interactions"][0]["response"]
    return response


def http_module_name() -> str:
    """httpx or httpx2: whichever the installed openai builds its clients on (openai 3.x uses httpx2)."""
    import openai

    for cls in openai.DefaultHttpxClient.__mro__:
        name = cls.__module__.split(".")[0]
        if name in ("httpx", "httpx2"):
            return name
    raise BenchmarkError(f"cannot tell which HTTP library openai {openai.__version__} uses")


# --- the figures ---------------------------------------------------------------------------------------------


def ratio_row(
    figure: str, title: str, rows: list[dict[str, Any]], value: float, target: str, met: bool | None
) -> dict[str, Any]:
    return {"figure": figure, "title": title, "configs": rows, "ratio": value, "target": target, "met": met}


def figures_1_2(sizes: Sizes, work: Path, repeats: int, warm: bool) -> list[dict[str, Any]]:
    """Marked repetition without HTTP: the plugin (record mode none, then off) vs pytest-repeat."""
    t, n = sizes.tasks, sizes.n
    suite = synthetic.record_suite(work / "record", t, n)
    baseline = synthetic.record_baseline(work / "record-baseline", t)
    base = Config("repeat", f"pytest-repeat --count {n}, plugin off", baseline, theirs(n), t * n)
    none = Config("marked-none", f"repeat_consistency(n={n}), record none", suite, ours(), t * n)
    off = Config("marked-off", f"repeat_consistency(n={n}), record off", suite, ours("--consistency-record=off"), t * n)
    # The floor: the same marker, hooks and fixtures doing nothing (null_plugin.py), on the plugin's suite.
    floor_args = ["-p", "null_plugin", "-p", "no:consistency"]
    floor = Config("floor", "null plugin: the same hooks, no work", suite, floor_args, t * n, {"PYTHONPATH": str(HERE)})
    samples = alternate([base, none, off, floor], repeats, work, warm)
    rows = {c.key: describe(c, samples[c.key]) for c in (base, none, off, floor)}
    b = rows["repeat"]["wall_median_s"]
    r1 = rows["marked-none"]["wall_median_s"] / b
    r2 = rows["marked-off"]["wall_median_s"] / b
    figures = [
        ratio_row(
            "1",
            f"{t} tasks x {n}, no HTTP, record none",
            [rows["repeat"], rows["marked-none"], rows["floor"]],
            r1,
            "<= 1.15",
            r1 <= 1.15,
        ),
        ratio_row(
            "2",
            f"{t} tasks x {n}, no HTTP, record off",
            [rows["repeat"], rows["marked-off"]],
            r2,
            "<= 1.10",
            r2 <= 1.10,
        ),
    ]
    figures[0]["floor_ratio"] = rows["floor"]["wall_median_s"] / b
    return figures


def figures_3_4(sizes: Sizes, work: Path, repeats: int, warm: bool, which: set[str]) -> list[dict[str, Any]]:
    """Replayed SDK calls: the plugin replaying cassettes vs the same call on an in-memory transport (3), and
    replay time per repetition at two suite sizes (4). Cassettes are recorded first, then the server stops, so a
    replay that reached the network would fail the benchmark rather than time it."""
    n = sizes.n
    server = start_server()
    suites = {}
    try:
        wanted = []
        if "3" in which:
            wanted.append(("replay", sizes.tasks))
        if "4" in which:
            wanted += [("replay-small", sizes.scale_small), ("replay-large", sizes.scale_large)]
        for name, tasks in wanted:
            suites[name] = synthetic.call_suite(work / name, tasks, n)
        # The largest suite records every cassette once; the others (same file, same task ids) get a copy.
        largest = max(wanted, key=lambda item: item[1])[0]
        record_cassettes(suites[largest], server.base_url, work)
        for name, tasks in wanted:
            if name != largest:
                copy_cassettes(suites[largest], suites[name], tasks)
        url = server.base_url
    finally:
        server.stop()
    replay_args = ours(*route_args(url))
    figures: list[dict[str, Any]] = []
    if "3" in which:
        t = sizes.tasks
        baseline = synthetic.call_baseline(
            work / "replay-baseline", t, http_module_name(), url, recorded_response(suites["replay"])
        )
        base = Config("mock", f"in-memory transport, pytest-repeat --count {n}", baseline, theirs(n), t * n)
        replay = Config(
            "replay", f"repeat_consistency(n={n}), replayed cassettes", suites["replay"], replay_args, t * n
        )
        # The same suite and recordings as JSON cassettes (--consistency-cassette-format=json), converted as users
        # migrate, alternated with the two above.
        json_suite = work / "replay-json"
        shutil.copytree(suites["replay"], json_suite)
        converted = convert([json_suite / "cassettes"], "json")
        if converted.left or not converted.converted:
            raise BenchmarkError(f"the JSON conversion left {converted.left} of {len(converted.converted)} converted")
        replay_json = Config(
            "replay-json",
            f"repeat_consistency(n={n}), replayed JSON cassettes",
            json_suite,
            [*replay_args, "--consistency-cassette-format=json"],
            t * n,
        )
        samples = alternate([base, replay, replay_json], repeats, work, warm)
        rows = [describe(base, samples["mock"]), describe(replay, samples["replay"])]
        value = rows[1]["wall_median_s"] / rows[0]["wall_median_s"]
        figures.append(ratio_row("3", f"{t} tasks x {n}, one SDK call, replayed", rows, value, "<= 1.5", value <= 1.5))
        rows = [rows[0], describe(replay_json, samples["replay-json"])]
        value = rows[1]["wall_median_s"] / rows[0]["wall_median_s"]
        title = f"{t} tasks x {n}, one SDK call, replayed from JSON cassettes"
        figures.append(ratio_row("3j", title, rows, value, "<= 1.5", value <= 1.5))
    if "4" in which:
        small, large = sizes.scale_small, sizes.scale_large
        a = Config("replay-small", f"replay {small} tasks x {n}", suites["replay-small"], replay_args, small * n)
        b = Config("replay-large", f"replay {large} tasks x {n}", suites["replay-large"], replay_args, large * n)
        samples = alternate([a, b], repeats, work, warm)
        rows = [describe(a, samples["replay-small"]), describe(b, samples["replay-large"])]
        value = rows[1]["loop_per_repetition_ms"] / rows[0]["loop_per_repetition_ms"]
        figures.append(
            ratio_row(
                "4",
                f"replay scaling, run-loop time per repetition, {large} vs {small} tasks",
                rows,
                value,
                "<= 1.2",
                value <= 1.2,
            )
        )
    return figures


def figure_5(sizes: Sizes, repeats: int) -> list[dict[str, Any]]:
    """End of session at two sizes, each measurement in a fresh process (see session_end.py)."""
    script = str(HERE / "session_end.py")

    def once(tasks: int, memory: bool = False) -> dict[str, Any]:
        command = [sys.executable, script, str(tasks), str(sizes.end_n), *(["--memory"] if memory else [])]
        done = subprocess.run(command, capture_output=True, text=True, env=base_env(), check=False, timeout=1800)
        if done.returncode != 0:
            raise BenchmarkError(f"session_end.py {tasks} {sizes.end_n}: {done.stderr[-2000:]}")
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    small, large = sizes.end_small, sizes.end_large
    runs: dict[int, list[dict[str, float]]] = {small: [], large: []}
    for i in range(repeats):
        for tasks in (small, large) if i % 2 == 0 else (large, small):
            runs[tasks].append(once(tasks)["seconds"])
    peaks = {tasks: once(tasks, memory=True)["peak_bytes"] for tasks in (small, large)}
    rows = []
    for tasks in (small, large):
        totals = [r["total"] for r in runs[tasks]]
        cpus = [r["cpu"] for r in runs[tasks]]
        steps = {step: median([r[step] for r in runs[tasks]]) for step in runs[tasks][0]}
        rows.append(
            {
                "key": f"end-{tasks}",
                "label": f"end of session, {tasks} tasks x {sizes.end_n}",
                "repetitions": tasks * sizes.end_n,
                "wall_s": totals,
                "wall_median_s": median(totals),
                "wall_spread": spread(totals),
                "cpu_s": cpus,
                "cpu_median_s": median(cpus),
                "steps_median_s": steps,
                "peak_bytes": peaks[tasks],
                "peak_kib_per_task": peaks[tasks] / tasks / 1024,
            }
        )
    # Judged on CPU seconds: how the work grows with the suite, which another process's load on a shared machine
    # does not stretch as it stretches the wall clock (its ratio is printed beside).
    value = rows[1]["cpu_median_s"] / rows[0]["cpu_median_s"]
    limit = 1.1 * large / small
    row = ratio_row(
        "5",
        f"end of session, {large} vs {small} tasks x {sizes.end_n}, CPU seconds",
        rows,
        value,
        f"<= {limit:g}",
        value <= limit,
    )
    row["wall_ratio"] = rows[1]["wall_median_s"] / rows[0]["wall_median_s"]
    return [row]


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The report without wall-clock figures (durations, latencies), which differ run to run."""
    for task in report.get("tasks", []):
        for rep in task.get("repetitions", []):
            rep.pop("duration", None)
            for call in rep.get("calls", []):
                call.pop("latency_ms", None)
    return report


def differences(left: Any, right: Any, path: str = "$") -> list[str]:
    """JSON paths where two documents differ (at most a few dozen)."""
    if isinstance(left, dict) and isinstance(right, dict):
        found = []
        for key in sorted(set(left) | set(right), key=str):
            if key not in left or key not in right:
                found.append(f"{path}.{key}")
            else:
                found += differences(left[key], right[key], f"{path}.{key}")
        return found[:40]
    if isinstance(left, list) and isinstance(right, list):
        if len(left) != len(right):
            return [f"{path} (length {len(left)} vs {len(right)})"]
        found = []
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            found += differences(a, b, f"{path}[{i}]")
        return found[:40]
    return [] if left == right else [path]


def figure_6(sizes: Sizes, work: Path, repeats: int, warm: bool) -> list[dict[str, Any]]:
    """xdist: the same live suite (each call answered after ``delay``) with ``-n 2`` and ``-n 0``."""
    t, n = sizes.xdist_tasks, sizes.n
    suite = synthetic.call_suite(work / "xdist", t, n)
    server = start_server()

    def script() -> None:
        server.reset()
        server.script(*[Step(delay=sizes.delay) for _ in range(t * n)])

    try:
        common = ours(*route_args(server.base_url), "--consistency-record=off")
        env = {"OPENAI_API_KEY": GOOD_KEY}
        what = f"{t} tasks x {n}, {sizes.delay * 1000:g} ms per call"
        serial = Config(
            "n0", f"-n 0, {what}", suite, [*common, *xdist(0), "--consistency-report=n0.json"], t * n, env, script
        )
        parallel = Config(
            "n2", f"-n 2, {what}", suite, [*common, *xdist(2), "--consistency-report=n2.json"], t * n, env, script
        )
        samples = alternate([serial, parallel], repeats, work, warm)
    finally:
        server.stop()
    rows = [describe(serial, samples["n0"]), describe(parallel, samples["n2"])]
    speedup = rows[0]["wall_median_s"] / rows[1]["wall_median_s"]
    left = comparable(json.loads((suite / "n0.json").read_text()))
    right = comparable(json.loads((suite / "n2.json").read_text()))
    diff = differences(left, right)
    figure = ratio_row(
        "6",
        "xdist speed-up (wall -n 0 / wall -n 2); reports equal but timings",
        rows,
        speedup,
        ">= 1.7 and identical reports",
        speedup >= 1.7 and not diff,
    )
    figure["report_differences"] = diff
    return [figure]


def figure_8(sizes: Sizes, work: Path, repeats: int, warm: bool) -> list[dict[str, Any]]:
    """A live run: tasks x n calls to a loopback server that answers each after ``live_delay``, serially and with
    xdist workers, each as a ratio to its latency bound (calls x latency / workers). A last configuration runs the
    most workers against a server that answers at once: its wall time is what start-up and collection cost, the
    part of the bound's excess that no plugin work explains."""
    t, n = sizes.live_tasks, sizes.n
    calls = t * n
    suite = synthetic.call_suite(work / "live", t, n)
    server = start_server()
    delay = sizes.live_delay

    def script(seconds: float) -> Callable[[], None]:
        def fill() -> None:
            server.reset()
            server.script(*[Step(delay=seconds) for _ in range(calls)])

        return fill

    configs = []
    try:
        common = ours(*route_args(server.base_url), "--consistency-record=off")
        env = {"OPENAI_API_KEY": GOOD_KEY}
        for workers in sizes.live_workers:
            what = f"{'serial' if not workers else f'-n {workers}'}, {calls} calls, {delay * 1000:g} ms each"
            args = [*common, *(xdist(workers) if workers else [])]
            configs.append(Config(f"live-{workers}", what, suite, args, calls, env, script(delay)))
        # The same calls without the plugin (pytest-repeat, a plain client), at the same worker counts: the bound's
        # excess that pytest, xdist and the SDK pay anyway, so that the plugin's part is the ratio of the two walls.
        baseline_suite = synthetic.live_baseline(work / "live-baseline", t)
        baseline_env = env | {"BENCH_BASE_URL": server.base_url}
        baselines = []
        for workers in sizes.live_workers:
            what = f"pytest-repeat, plugin off, {'serial' if not workers else f'-n {workers}'}, {calls} calls"
            args = [*theirs(n), *(xdist(workers) if workers else [])]
            key = f"live-base-{workers}"
            baselines.append(Config(key, what, baseline_suite, args, calls, baseline_env, script(delay)))
        most = max(sizes.live_workers)
        startup = Config(
            f"live-{most}-instant",
            f"-n {most}, {calls} calls answered at once",
            suite,
            [*common, *xdist(most)],
            calls,
            env,
            script(0.0),
        )
        samples = alternate([*configs, *baselines, startup], repeats, work, warm)
    finally:
        server.stop()
    figures = []
    start_up = describe(startup, samples[startup.key])
    for workers, config, baseline in zip(sizes.live_workers, configs, baselines, strict=True):
        row = describe(config, samples[config.key])
        base = describe(baseline, samples[baseline.key])
        bound = calls * delay / max(workers, 1)
        row["latency_bound_s"] = base["latency_bound_s"] = bound
        value = row["wall_median_s"] / bound
        figure = ratio_row(
            "8", f"live, {config.label}: wall / latency bound {bound:g} s", [row, base], value, "report", None
        )
        figure["baseline_ratio"] = base["wall_median_s"] / bound
        figure["plugin_over_baseline"] = row["wall_median_s"] / base["wall_median_s"]
        if workers == most:
            figure["configs"].append(start_up)
            figure["start_up_s"] = start_up["wall_median_s"]
        figures.append(figure)
    return figures


def figure_7(sizes: Sizes) -> list[dict[str, Any]]:
    """Time to the first streamed chunk, pinned client vs plain client (see streaming.py)."""
    import streaming

    result = streaming.measure(sizes.stream_samples)
    plain = result["plain"]["median_ms"]
    rows = [
        {"key": name, "label": name, "first_chunk_ms": values, "wall_median_s": values["median_ms"] / 1000}
        for name, values in result.items()
    ]
    value = result["pinned"]["median_ms"] / plain
    figure = ratio_row(
        "7", "time to first streamed chunk, pinned (record off) / plain", rows, value, "<= 1.05", value <= 1.05
    )
    figure["recording_cassette_ratio"] = result["pinned+cassette"]["median_ms"] / plain
    figure["hold_ms"] = streaming.HOLD * 1000
    return [figure]


# --- profiles ---------------------------------------------------------------------------------------------------


def profiles(sizes: Sizes, work: Path, out: Path) -> dict[str, Any]:
    """One pyinstrument-profiled pytest process each for figures 1, 2 and 3, ranked by profiling.ranked."""
    import profiling

    out.mkdir(parents=True, exist_ok=True)
    t, n = sizes.tasks, sizes.n
    record = synthetic.record_suite(work / "profile-record", t, n)
    server = start_server()
    try:
        replay = synthetic.call_suite(work / "profile-replay", t, n)
        record_cassettes(replay, server.base_url, work)
        url = server.base_url
    finally:
        server.stop()
    runs = {
        "1-record-none": (record, ours()),
        "2-record-off": (record, ours("--consistency-record=off")),
        "3-replay": (replay, ours(*route_args(url))),
    }
    found = {}
    for name, (cwd, args) in runs.items():
        session = out / f"{name}.pyisession"
        profiling.run_profiled(cwd, [*COMMON, *args], base_env(), session)
        found[name] = profiling.ranked(session)
        found[name]["session_file"] = str(session)
    return found


# --- output -----------------------------------------------------------------------------------------------------


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def print_head() -> None:
    head = f"{'fig':<4}{'configuration':<58}{'median':>10}{'spread':>8}{'loop/rep':>10}"
    print(head)
    print("-" * len(head))


def print_figures(figures: list[dict[str, Any]], smoke: bool) -> None:
    """The rows of figures just measured; stdout is line-buffered (see :func:`main`), so they show at once."""
    for fig in figures:
        for row in fig["configs"]:
            if "first_chunk_ms" in row:
                stats = row["first_chunk_ms"]
                print(
                    f"{fig['figure']:<4}{row['label']:<58}{stats['median_ms']:8.2f}ms"
                    f"{(stats['max_ms'] - stats['min_ms']) / stats['median_ms']:8.0%}{'':>10}"
                )
                continue
            per_rep = f"{row['loop_per_repetition_ms']:8.2f}ms" if "loop_per_repetition_ms" in row else ""
            if "peak_kib_per_task" in row:
                per_rep = f"{row['peak_kib_per_task']:6.1f}KiB/t"
            print(
                f"{fig['figure']:<4}{row['label']:<58}{row['wall_median_s']:9.3f}s{row['wall_spread']:8.0%}{per_rep:>10}"
            )
        verdict = "(smoke: not judged)" if smoke else ("MET" if fig["met"] else "NOT MET")
        if fig["met"] is None:
            verdict = "(reported, no target)"
        print(f"{'':<4}=> {fig['title']}: ratio {fig['ratio']:.3f}, target {fig['target']} {verdict}")
        print(f"{'':<4}   previous round: {PREVIOUS.get(fig['figure'], 'not measured')}")
        if "floor_ratio" in fig:
            print(f"{'':<4}   the floor (null plugin: these hooks doing nothing) reads {fig['floor_ratio']:.3f}")
        if "wall_ratio" in fig:
            cpu = ", ".join(f"{row['cpu_median_s']:.3f}s" for row in fig["configs"])
            print(f"{'':<4}   CPU medians {cpu}; the same ratio in wall-clock time: {fig['wall_ratio']:.3f}")
        if "baseline_ratio" in fig:
            print(
                f"{'':<4}   without the plugin (pytest-repeat, a plain client): {fig['baseline_ratio']:.3f} of the "
                "bound; "
                f"the plugin's wall over it: {fig['plugin_over_baseline']:.3f}"
            )
        if "start_up_s" in fig:
            share = fig["start_up_s"] / fig["configs"][0]["wall_median_s"]
            print(
                f"{'':<4}   start-up and collection alone (no latency): {fig['start_up_s']:.2f}s, "
                f"{share:.0%} of this wall time{' (dominates)' if share >= 0.5 else ''}"
            )
        if fig.get("report_differences"):
            print(f"{'':<4}   reports differ at: {', '.join(fig['report_differences'][:8])}")
        if "recording_cassette_ratio" in fig:
            print(
                f"{'':<4}   (informational) recording a cassette: {fig['recording_cassette_ratio']:.2f}x "
                f"(the server holds the rest of the stream {fig['hold_ms']:g} ms)"
            )
        print()


def print_profiles(found: dict[str, Any]) -> None:
    for name, result in found.items():
        print(f"profile {name}: {result['total_s']:.2f}s profiled ({result['session_file']})")
        for item in result["top"]:
            print(f"    {item['cumulative_s']:7.3f}s {item['share']:6.1%}  {item['function']}")
        print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, 1 repeat, no warm-up; times are not judged")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per configuration (default %(default)s)")
    parser.add_argument("--json", type=Path, help="write every sample, median and ratio to this file")
    parser.add_argument("--only", default="1,2,3,4,5,6,7,8", help="figures to run, comma-separated (default: all)")
    parser.add_argument("--autoload", action="store_true", help="let every installed pytest plugin load (diluted)")
    parser.add_argument(
        "--live-workers",
        help="figure 8's xdist worker counts, comma-separated, 0 for serial (default 0,4,8); the most workers also "
        "run against an instant server, which measures their start-up and collection",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="also profile figures 1-3 with pyinstrument, saving the sessions in DIR",
    )
    args = parser.parse_args(argv)
    global AUTOLOAD
    AUTOLOAD = args.autoload
    sizes = SMOKE if args.smoke else Sizes()
    if args.live_workers:
        sizes = replace(sizes, live_workers=tuple(int(w) for w in args.live_workers.split(",")))
    repeats = 1 if args.smoke else args.repeats
    warm = not args.smoke
    which = set(args.only.split(","))
    # A full run takes many minutes: every figure is printed as soon as it is measured, also into a pipe or a CI log.
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
    started = time.perf_counter()
    load_before = os.getloadavg()
    figures: list[dict[str, Any]] = []
    found: dict[str, Any] = {}
    print(
        f"pytest-consistency benchmarks ({'smoke' if args.smoke else f'{repeats} repeats'}), "
        f"{os.cpu_count()} cpus, load average {load_before[0]:.1f}; figures {','.join(sorted(which))}"
    )
    print(", ".join(f"{k} {v}" for k, v in versions().items() if v))
    print()
    print_head()
    with tempfile.TemporaryDirectory(prefix="consistency-bench-") as tmp:
        work = Path(tmp)
        try:
            groups: list[Callable[[], list[dict[str, Any]]]] = []
            if which & {"1", "2"}:
                groups.append(lambda: [f for f in figures_1_2(sizes, work, repeats, warm) if f["figure"] in which])
            if which & {"3", "4"}:
                groups.append(lambda: figures_3_4(sizes, work, repeats, warm, which))
            if "5" in which:
                groups.append(lambda: figure_5(sizes, repeats))
            if "6" in which:
                groups.append(lambda: figure_6(sizes, work, repeats, warm))
            if "7" in which:
                groups.append(lambda: figure_7(sizes))
            if "8" in which:
                groups.append(lambda: figure_8(sizes, work, repeats, warm))
            if args.smoke:
                # Times are not judged in smoke mode, so the groups may share the machine to finish sooner.
                with ThreadPoolExecutor(max_workers=2) as pool:
                    for result in pool.map(lambda group: group(), groups):
                        print_figures(result, args.smoke)
                        figures += result
            else:
                for group in groups:
                    result = group()
                    print_figures(result, args.smoke)
                    figures += result
            if args.profile is not None:
                found = profiles(sizes, work, args.profile)
        except BenchmarkError as exc:
            print(f"benchmark failed: {exc}", file=sys.stderr)
            return 1
    load_after = os.getloadavg()
    machine = {
        "cpus": os.cpu_count(),
        "load_before": load_before,
        "load_after": load_after,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    print(
        f"done: {len(figures)} figure(s) in {time.perf_counter() - started:.0f}s, "
        f"load average {load_before[0]:.1f} -> {load_after[0]:.1f}"
    )
    if found:
        print_profiles(found)
    if args.json is not None:
        document = {
            "smoke": args.smoke,
            "repeats": repeats,
            "sizes": sizes.__dict__,
            "machine": machine,
            "versions": versions(),
            "figures": figures,
            "profiles": found,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
