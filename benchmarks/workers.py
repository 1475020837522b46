"""What an xdist worker pays for the plugin at start-up, in instructions of the worker alone (issue 30).

A session of ``-n 1`` whose one worker is started under callgrind (the controller runs at full speed: the worker's
interpreter is ``valgrind --tool=callgrind ... python``, given to xdist as ``--tx popen//python=...``), every installed
plugin autoloaded as in a developer's venv. Two sessions, each with the plugin and without it:

- unmarked: one unmarked test, with the plugin installed vs ``-p no:consistency`` (issue 30: ``<= 1.05``, "an xdist
  worker start pays the same");
- marked: figures 1 and 2's synthetic task (one marked task of five repetitions that records an answer) vs the same
  body repeated by pytest-repeat with ``-p no:consistency``: what a worker that does use the plugin pays.

Two counts of one configuration agree to about 0.1 %, on a busy machine as on an idle one. It also lists the
plugin's modules the unmarked session's worker imports.

    .venv/bin/python benchmarks/workers.py               # about four minutes on two busy cores
    .venv/bin/python benchmarks/workers.py --smoke       # each session once without valgrind; nothing judged
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synthetic  # noqa: E402

TARGET = 1.05
N = 5
#: Written beside the unmarked test: the worker writes the plugin's modules it imported.
MODULES_PROBE = """
import json
import sys


def pytest_unconfigure(config):
    if hasattr(config, "workerinput"):
        with open("worker-modules.json", "w") as handle:
            json.dump(sorted(m for m in sys.modules if m.startswith("pytest_consistency")), handle)
"""


def env() -> dict[str, str]:
    """Every installed plugin autoloaded (as ``benchmarks/slope.py``'s unmarked session), bytecode cached."""
    found = {k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    return found | {"PYTHONDONTWRITEBYTECODE": ""}


def session(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args]


def worker_instructions(cmd: list[str], cwd: Path, smoke: bool) -> int:
    """Instructions of the one xdist worker of ``cmd`` (which must not name ``-n``), counted under callgrind."""
    if smoke:
        subprocess.run(
            [*cmd, "-n", "1"], cwd=cwd, env=env(), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        return 0
    out = cwd / "cg"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    python = f"valgrind --tool=callgrind --callgrind-out-file={out}/worker.%p {sys.executable}"
    subprocess.run(
        [*cmd, "--dist", "load", "--tx", f"popen//python={python}"],
        cwd=cwd,
        env=env(),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # The controller may exit before the worker's valgrind has written its counts: wait for them.
    deadline = time.monotonic() + 120
    while True:
        files = list(out.iterdir())
        match = re.search(r"^summary:\s*(\d+)", files[0].read_text(), re.M) if len(files) == 1 else None
        if match or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    shutil.rmtree(out)
    assert match, "callgrind wrote no summary"
    return int(match.group(1))


def unmarked_root(work: Path) -> Path:
    root = work / "unmarked"
    root.mkdir()
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "conftest.py").write_text(MODULES_PROBE)
    (root / "test_plain.py").write_text("def test_plain():\n    assert 1 + 1 == 2\n")
    return root


def measure(work: Path, smoke: bool, repeats: int) -> dict[str, Any]:
    unmarked = unmarked_root(work)
    suite = synthetic.record_suite(work / "marked", 1, N)
    baseline = synthetic.record_baseline(work / "baseline", 1)
    sides = {
        "unmarked plugin": (unmarked, session("test_plain.py")),
        "unmarked no:consistency": (unmarked, session("test_plain.py", "-p", "no:consistency")),
        "marked plugin": (suite, session("-p", "no:repeat")),
        "marked pytest-repeat": (baseline, session("--count", str(N), "-p", "no:consistency")),
    }
    counts: dict[str, list[int]] = {side: [] for side in sides}
    modules: list[str] = []
    for side, (root, cmd) in sides.items():  # warm the bytecode caches
        subprocess.run(
            [*cmd, "-n", "1"], cwd=root, env=env(), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        if side == "unmarked plugin":
            modules = json.loads((unmarked / "worker-modules.json").read_text())
    for _ in range(repeats):  # alternated
        for side, (root, cmd) in sides.items():
            counts[side].append(worker_instructions(cmd, root, smoke))
    return {"counts": counts, "unmarked_worker_modules": modules}


def show(found: dict[str, Any], smoke: bool) -> None:
    modules = found["unmarked_worker_modules"]
    print(f"an unmarked session's worker imports {len(modules)} of the plugin's modules")
    if smoke:
        print("worker benchmark ran each session once (smoke: nothing counted or judged)")
        return
    best = {side: min(values) for side, values in found["counts"].items()}
    m = 1e6
    for kind, other in (("unmarked", "no:consistency"), ("marked", "pytest-repeat")):
        ours, theirs = best[f"{kind} plugin"], best[f"{kind} {other}"]
        print(
            f"{kind} session, the worker alone: plugin {ours / m:,.1f} M, {other} {theirs / m:,.1f} M,"
            f" +{(ours - theirs) / m:,.1f} M, ratio {ours / theirs:.3f}"
        )
    ratio = best["unmarked plugin"] / best["unmarked no:consistency"]
    print(f"  unmarked worker ratio {ratio:.3f} (target <= {TARGET})  {'met' if ratio <= TARGET else 'NOT MET'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=1, help="counts of each session (alternated; least kept)")
    parser.add_argument("--smoke", action="store_true", help="run each session once without valgrind; judge nothing")
    parser.add_argument("--json", type=Path, help="write the counts here")
    args = parser.parse_args(argv)
    smoke = args.smoke or shutil.which("valgrind") is None
    with tempfile.TemporaryDirectory() as scratch:
        found = measure(Path(scratch), smoke, 1 if smoke else args.repeats)
    show(found, smoke)
    if args.json:
        args.json.write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
