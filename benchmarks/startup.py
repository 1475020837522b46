"""Figure 0: what the plugin costs a session that does not use it, in a lean environment.

A pytest session of one unmarked test, run with the plugin installed (its ``pytest11`` entry point loads, its
options are registered, ``pytest_configure`` runs) and with ``-p no:consistency``, alternated in the same minutes
(A B, A B, ...). Counted in instructions under callgrind (``--instructions``; two counts of one configuration agree
to about 0.1 %), else in CPU seconds of the whole session (user + system of every process, medians). The target is
a ratio of at most 1.05 in each mode.

The lean environment is what a Docker image that installs the project holds: a fresh venv (``python -m venv``) with a
wheel of this checkout and its runtime dependencies (pytest, pluggy, PyYAML, filelock) installed by pip from the
index, and nothing else: no other pytest plugin to make the denominator larger (the test environment's autoloaded
plugins make it about four times larger, which is how issue 27 once read 1.050 while the lean figure was 1.32). The
venvs are built once per wheel content (the hash of the wheel's ``RECORD``, which lists every file's own hash) under
``<tmp>/pytest-consistency-lean/<hash>/`` and reused until the checkout changes; ``--rebuild`` builds them again.
The inner sessions run with a minimal environment (``PATH``, ``HOME``, the locale, ``TMPDIR``): no credential
variable, no ``GITHUB_STEP_SUMMARY``, no ``PYTEST_ADDOPTS``, nothing of the calling venv.

Modes (``--modes``, all three by default):

- ``plain``: bytecode cached, as on a developer's machine or in CI after the first run (``PYTHONDONTWRITEBYTECODE``
  unset; a warm-up run of each side writes what the counted runs read, pytest's rewritten ``.pyc`` files included);
- ``dontwrite``: ``PYTHONDONTWRITEBYTECODE=1``, as many Docker images set it: pip's own ``.pyc`` files are there (pip
  compiles at install), pytest's assertion rewriter can cache nothing, so every module it rewrites is parsed and
  compiled again in every run (the rewritten ``.pyc`` files a ``plain`` run left are removed before each count);
- ``xdist``: ``-n 2`` in a second lean venv that also holds pytest-xdist (and its execnet): every process of the
  session is counted, the controller and both workers (callgrind follows the workers the controller starts,
  ``--trace-children=yes``, one output file per process, summed; in CPU mode the children's rusage).

It also says which of the plugin's modules importing the entry point loads and whether any third-party package
beyond pytest and pluggy comes with them, and which modules the unmarked session loaded in the end and whether any
of them went through pytest's assertion rewriter (a probe run, not counted).

    .venv/bin/python benchmarks/startup.py                  # CPU time, 15 alternations per mode
    .venv/bin/python benchmarks/startup.py --instructions   # callgrind, 3 counts each side and mode
    .venv/bin/python benchmarks/startup.py --smoke          # one run of each, nothing judged (CI)

``--smoke`` builds the lean venvs too (about 40 s the first time: a wheel, two venvs, pip from the index; about 10
seconds once they exist), so that CI keeps the whole path working.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

TARGET = 1.05
PYTHON = sys.executable
ROOT = Path(__file__).resolve().parent.parent
MODES = ("plain", "dontwrite", "xdist")
#: The variables the inner sessions keep: nothing that could wake the plugin or add to the session.
KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "SYSTEMROOT")

#: Left out of the copy a wheel is built from.
SKIPPED = (
    ".git",
    "build",
    "dist",
    "*.egg-info",
    ".venv*",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
)

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

#: A conftest for the probe run (not counted): which of the plugin's modules the unmarked session loaded, and which
#: of them pytest's assertion rewriter loaded.
SESSION_PROBE = """
import json
import sys

import pytest
from _pytest.assertion.rewrite import AssertionRewritingHook


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    own = sorted(m for m in sys.modules if m.split(".")[0] == "pytest_consistency")
    rewritten = [m for m in own if isinstance(getattr(sys.modules[m], "__loader__", None), AssertionRewritingHook)]
    with open("session-modules.json", "w") as handle:
        json.dump({"loaded": own, "rewritten": rewritten}, handle)
"""


def lean_environment(dontwrite: bool) -> dict[str, str]:
    """The inner sessions' environment. ``PYTHONHASHSEED=0`` on both sides: the order of a set of strings changes
    what an interpreter does by a few hundred thousand instructions from one run to the next (the counts of one
    configuration then agree exactly)."""
    env = {name: os.environ[name] for name in KEPT if name in os.environ}
    return env | {"PYTHONDONTWRITEBYTECODE": "1" if dontwrite else "", "PYTHONHASHSEED": "0"}


def build_wheel(into: Path) -> Path:
    """A wheel of this checkout as it is now, built by pip in an isolated environment (as ``pip install .`` would),
    from a copy without the checkout's ``build/`` directory: setuptools reuses what it finds there, a module deleted
    since included."""
    source = into / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*SKIPPED))
    subprocess.run(
        [PYTHON, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check", "-w", str(into), str(source)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    (wheel,) = into.glob("pytest_consistency-*.whl")
    return wheel


def wheel_hash(wheel: Path) -> str:
    """The wheel's content: its RECORD lists every file with its own sha256 (the zip's timestamps play no part)."""
    with zipfile.ZipFile(wheel) as archive:
        (record,) = [name for name in archive.namelist() if name.endswith(".dist-info/RECORD")]
        return hashlib.sha256(archive.read(record)).hexdigest()[:16]


def lean_venv(wheel: Path, directory: Path, extra: tuple[str, ...] = (), rebuild: bool = False) -> Path:
    """A fresh venv with the wheel and its runtime dependencies (and ``extra``), built once: the file ``ready``
    says a build finished. Returns its interpreter."""
    python = directory / "bin" / "python"
    ready = directory / "ready"
    if ready.exists() and not rebuild:
        return python
    shutil.rmtree(directory, ignore_errors=True)
    # pip's own settings (its index, certificates) kept; nothing that changes what Python imports or writes
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONHOME")}
    subprocess.run([PYTHON, "-m", "venv", str(directory)], check=True, env=env)
    install = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel), *extra]
    done = subprocess.run(install, env=env, capture_output=True, text=True)  # pip's warnings shown only on failure
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"pip could not build the lean venv {directory}")
    ready.write_text(" ".join(install))
    return python


def versions(python: Path) -> dict[str, str]:
    out = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {entry["name"]: entry["version"] for entry in json.loads(out)}


def entry_point_modules(python: Path | str = PYTHON) -> dict[str, list[str]]:
    """The plugin's modules and the top-level packages (not of the standard library) that importing the entry
    point loads beyond pytest's own."""
    out = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, check=True).stdout
    found: dict[str, list[str]] = json.loads(out)
    stdlib = set(sys.stdlib_module_names)
    found["third_party"] = [name for name in found["third_party"] if name not in stdlib and not name.startswith("_")]
    return found


def session_modules(python: Path, work: Path) -> dict[str, list[str]]:
    """The probe run: the unmarked session with a conftest that lists what of the plugin it loaded (not counted)."""
    probe = work / "probe"
    probe.mkdir()
    (probe / "conftest.py").write_text(SESSION_PROBE)
    (probe / "test_plain.py").write_text(TEST)
    subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=probe,
        env=lean_environment(dontwrite=False),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    found: dict[str, list[str]] = json.loads((probe / "session-modules.json").read_text())
    return found


def regular_install(into: Path) -> dict[str, str]:
    """Install a wheel of this checkout into ``into`` (no dependencies: the venv has them) and return the
    environment that imports the plugin from there, as a regular install would. ``benchmarks/slope.py`` counts its
    unmarked session in the developer's venv this way."""
    subprocess.run(
        [PYTHON, "-m", "pip", "install", "-q", "--no-deps", "--target", str(into), str(ROOT)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return {"PYTHONPATH": str(into), "PYTHONDONTWRITEBYTECODE": ""}


def command(python: Path, with_plugin: bool, workers: int) -> list[str]:
    args = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_plain.py"]
    if workers:
        args += ["-n", str(workers)]
    return args if with_plugin else [*args, "-p", "no:consistency"]


def forget_rewritten(venv: Path, cwd: Path) -> None:
    """Remove the ``.pyc`` files pytest's assertion rewriter wrote (tagged ``-pytest-``): a run with
    ``PYTHONDONTWRITEBYTECODE=1`` then finds none, as in an image where nothing ever wrote them."""
    for root in (venv / "lib", cwd):
        for pyc in root.rglob("__pycache__/*-pytest-*.pyc"):
            pyc.unlink()


def cpu_seconds(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    """User + system seconds of the session, its children (xdist's workers) included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, children: bool = False) -> int:
    """Instructions of one process under callgrind, or with ``children`` of every process it starts (one output
    file each, summed). ``benchmarks/slope.py`` counts with it too."""
    outputs = cwd / "callgrind"
    outputs.mkdir(exist_ok=True)
    trace = ["--trace-children=yes", f"--callgrind-out-file={outputs}/cg.%p"] if children else []
    trace = trace or [f"--callgrind-out-file={outputs}/cg.out"]
    subprocess.run(
        ["valgrind", "--tool=callgrind", *trace, *cmd],
        cwd=cwd,
        env=os.environ if env is None else env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    total = 0
    files = sorted(outputs.iterdir())
    for out in files:
        match = re.search(r"^summary:\s*(\d+)", out.read_text(), re.M)
        assert match, f"callgrind wrote no summary in {out.name}"
        total += int(match.group(1))
        out.unlink()
    assert files, "callgrind wrote nothing"
    return total


def measure_mode(
    mode: str, python: Path, work: Path, repeats: int, counted: bool, smoke: bool
) -> dict[str, list[float]]:
    """Both sides of one mode, alternated: a warm-up run of each, then ``repeats`` of each."""
    cwd = work / mode
    cwd.mkdir()
    (cwd / "test_plain.py").write_text(TEST)
    venv = python.parent.parent
    dontwrite = mode == "dontwrite"
    env = lean_environment(dontwrite)
    workers = 2 if mode == "xdist" else 0
    if not smoke:
        for with_plugin in (True, False):  # bytecode of both sides written (in dontwrite mode: pip's own only)
            warm = env | {"PYTHONDONTWRITEBYTECODE": ""}
            subprocess.run(
                command(python, with_plugin, workers), cwd=cwd, check=True, stdout=subprocess.DEVNULL, env=warm
            )
    samples: dict[str, list[float]] = {"plugin": [], "no:consistency": []}
    for _ in range(repeats):
        for side, with_plugin in (("plugin", True), ("no:consistency", False)):
            if dontwrite:
                forget_rewritten(venv, cwd)
            cmd = command(python, with_plugin, workers)
            if counted:
                samples[side].append(instructions(cmd, cwd, env, children=bool(workers)))
            else:
                samples[side].append(cpu_seconds(cmd, cwd, env))
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=None, help="counts per side and mode (15 CPU, 3 callgrind)")
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    parser.add_argument("--modes", default=",".join(MODES), help=f"a subset of {','.join(MODES)}")
    parser.add_argument("--smoke", action="store_true", help="one run of each, nothing judged")
    parser.add_argument("--rebuild", action="store_true", help="build the lean venvs again")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # each line as it is measured
    modes = [mode for mode in args.modes.split(",") if mode]
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"unknown modes: {', '.join(sorted(unknown))}")
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind")
    counted = args.instructions and not args.smoke
    repeats = 1 if args.smoke else (args.repeats or (3 if counted else 15))
    unit = "instructions" if counted else "CPU seconds"

    cache = Path(tempfile.gettempdir()) / "pytest-consistency-lean"
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        wheel = build_wheel(work / "wheel")
        key = wheel_hash(wheel)
        pythons = {"lean": lean_venv(wheel, cache / key / "lean", rebuild=args.rebuild)}
        if "xdist" in modes:
            pythons["xdist"] = lean_venv(wheel, cache / key / "lean-xdist", ("pytest-xdist",), rebuild=args.rebuild)
        installed = {
            name: ", ".join(f"{p} {v}" for p, v in sorted(versions(python).items()) if p not in ("pip", "setuptools"))
            for name, python in pythons.items()
        }
        print(f"lean venvs ({cache / key}): " + "; ".join(f"{name}: {found}" for name, found in installed.items()))
        modules = entry_point_modules(pythons["lean"])
        print(f"entry point loads {len(modules['own'])} of the plugin's modules: {', '.join(modules['own'])}")
        print(f"third-party packages it loads beyond pytest and pluggy: {', '.join(modules['third_party']) or 'none'}")
        session = session_modules(pythons["lean"], work)
        print(f"the unmarked session loads {len(session['loaded'])} of them: {', '.join(session['loaded'])}")
        print(f"  through pytest's assertion rewriter: {', '.join(session['rewritten']) or 'none'}")

        figures: dict[str, dict[str, object]] = {}
        for mode in modes:
            python = pythons["xdist" if mode == "xdist" else "lean"]
            samples = measure_mode(mode, python, work, repeats, counted, args.smoke)
            ours, theirs = statistics.median(samples["plugin"]), statistics.median(samples["no:consistency"])
            ratio = ours / theirs
            shown = (lambda v: f"{v / 1e6:,.1f} M") if counted else (lambda v: f"{v:.3f} s")
            met = ratio <= TARGET
            verdict = "" if args.smoke else ("  met" if met else "  NOT MET")
            print(
                f"figure 0, one unmarked test, {mode}: plugin {shown(ours)}, -p no:consistency {shown(theirs)} "
                f"({unit}, median of {repeats}); ratio {ratio:.3f} (target <= {TARGET}){verdict}"
            )
            figures[mode] = {"samples": samples, "ratio": ratio, "met": met}
    if args.json:
        found = {
            "figure": "0",
            "unit": unit,
            "target": TARGET,
            "modes": figures,
            "entry_point": modules,
            "session": session,
            "venvs": {name: versions(python) for name, python in pythons.items()},
        }
        args.json.write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
