"""Figure 0: what the plugin costs a session that does not use it.

A pytest session of one unmarked test, run with the plugin installed (its ``pytest11`` entry point loads, its
options are registered, ``pytest_configure`` runs) and with ``-p no:consistency``, alternated in the same minutes.
Counted in instructions under callgrind when valgrind is there (``--instructions``; two counts of one
configuration agree to about 0.1 %), else in CPU seconds of the whole process (user + system, medians). The target
is a ratio of at most 1.05.

It also says which of the plugin's modules importing the entry point loads (at most eight) and whether any
third-party package beyond pytest and pluggy comes with them.

The plugin is counted as users install it: a wheel of this checkout installed into a scratch directory put first
on ``PYTHONPATH`` (both sides), not this checkout's editable install. pytest marks every module of an installed
plugin's distribution for assertion rewriting and imports it through its rewrite hook (about 2.3 M instructions a
module here), and a wheel's recorded files are those modules; an editable install records a ``.pth`` and a finder,
and its modules were imported without the hook: one unmarked test counted 100 M fewer for the same code.

    .venv/bin/python benchmarks/startup.py                  # CPU time, 15 alternations
    .venv/bin/python benchmarks/startup.py --instructions   # callgrind, 3 counts each
    .venv/bin/python benchmarks/startup.py --bare           # against pytest alone (no plugin autoloaded)
    .venv/bin/python benchmarks/startup.py --smoke          # one of each, nothing judged (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET = 1.05
PYTHON = sys.executable
ROOT = Path(__file__).resolve().parent.parent
#: ``--bare``: no other plugin autoloaded, so the ratio is against pytest alone (stricter than the target's).
BARE = "--bare" in sys.argv
ENV = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"} if BARE else dict(os.environ)

TEST = "def test_plain():\n    assert 1 + 1 == 2\n"

PROBE = """
import json, sys
before = set(sys.modules)
import pytest  # what the entry point may take for granted
baseline = set(sys.modules)
import importlib
importlib.import_module("pytest_consistency.plugin")
loaded = set(sys.modules) - baseline
own = sorted(m for m in loaded if m == "pytest_consistency" or m.startswith("pytest_consistency."))
third = sorted({m.split(".")[0] for m in loaded if not m.startswith("pytest_consistency")} - {"pluggy", "_pytest"})
print(json.dumps({"own": own, "third_party": third}))
"""


def entry_point_modules() -> dict[str, list[str]]:
    """The plugin's modules and the top-level packages (not of the standard library) that importing the entry
    point loads beyond pytest's own."""
    out = subprocess.run([PYTHON, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    found: dict[str, list[str]] = json.loads(out)
    stdlib = set(sys.stdlib_module_names)
    found["third_party"] = [name for name in found["third_party"] if name not in stdlib and not name.startswith("_")]
    return found


def regular_install(into: Path) -> dict[str, str]:
    """Install a wheel of this checkout into ``into`` (no dependencies: the venv has them) and return the
    environment that imports the plugin from there, as a regular install would (see the module docstring)."""
    subprocess.run(
        [PYTHON, "-m", "pip", "install", "-q", "--no-deps", "--target", str(into), str(ROOT)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return {"PYTHONPATH": str(into), "PYTHONDONTWRITEBYTECODE": ""}


def command(with_plugin: bool) -> list[str]:
    """With ``--bare`` (ENV disables autoloading) the plugin is the only one, named with ``-p``."""
    args = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_plain.py"]
    if BARE:
        return [*args, "-p", "pytest_consistency.plugin"] if with_plugin else args
    return args if with_plugin else [*args, "-p", "no:consistency"]


def cpu_seconds(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        cmd,
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
        env=(ENV if env is None else env) | {"PYTHONDONTWRITEBYTECODE": ""},
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> int:
    """Instructions of one process under callgrind (``benchmarks/slope.py`` counts with it too)."""
    out = cwd / "cg.out"
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
        cwd=cwd,
        env=ENV if env is None else env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    match = re.search(r"^summary:\s*(\d+)", out.read_text(), re.M)
    out.unlink()
    assert match, "callgrind wrote no summary"
    return int(match.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    parser.add_argument("--smoke", action="store_true", help="one sample each, nothing judged")
    parser.add_argument("--bare", action="store_true", help="against pytest alone: no plugin autoloaded on either side")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind")
    repeats = 1 if args.smoke else (3 if args.instructions and args.repeats == 15 else args.repeats)
    measure = instructions if args.instructions else cpu_seconds
    unit = "instructions" if args.instructions else "CPU seconds"

    modules = entry_point_modules()
    print(f"entry point loads {len(modules['own'])} of the plugin's modules: {', '.join(modules['own'])}")
    print(f"third-party packages it loads beyond pytest and pluggy: {', '.join(modules['third_party']) or 'none'}")

    with tempfile.TemporaryDirectory() as scratch:
        cwd = Path(scratch)
        (cwd / "test_plain.py").write_text(TEST)
        env = ENV | regular_install(cwd / "site")
        for with_plugin in (True, False):  # warm the bytecode caches of both sides
            subprocess.run(command(with_plugin), cwd=cwd, check=True, stdout=subprocess.DEVNULL, env=env)
        samples: dict[str, list[float]] = {"plugin": [], "no:consistency": []}
        for _ in range(repeats):
            samples["plugin"].append(measure(command(True), cwd, env))
            samples["no:consistency"].append(measure(command(False), cwd, env))
    ours, theirs = statistics.median(samples["plugin"]), statistics.median(samples["no:consistency"])
    ratio = ours / theirs
    shown = (lambda v: f"{v / 1e6:,.1f} M") if args.instructions else (lambda v: f"{v:.3f} s")
    other = "pytest alone" if BARE else "-p no:consistency"
    print(f"figure 0, one unmarked test: plugin {shown(ours)}, {other} {shown(theirs)} ({unit}, median of {repeats})")
    met = ratio <= TARGET
    print(f"  ratio {ratio:.3f} (target <= {TARGET})" + ("" if args.smoke else ("  met" if met else "  NOT MET")))
    if args.json:
        figure = {"figure": "0", "unit": unit, "samples": samples, "ratio": ratio, "target": TARGET, **modules}
        args.json.write_text(json.dumps(figure, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
