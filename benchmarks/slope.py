"""What one repetition costs, and what a session that does not use the plugin pays, in instructions (issue 30).

Per repetition: the synthetic suite of figures 1 and 2 (a marked task that records one answer) run at several sizes,
with the plugin in its default mode (cassettes on, none recorded), with ``--consistency-record=off``, and repeated
by pytest-repeat instead (the same body, plugin off); each process counted once under callgrind (two counts of one
configuration agree to about 0.1 %, on a busy machine as on an idle one). The slope between the smallest and the
largest size is the cost of one repetition with every fixed cost (start-up, collection's setup, the session end's
constant part) gone; the whole process at the middle size is the ratio a user sees.

Unmarked: a session of one unmarked test with the plugin installed and with ``-p no:consistency``, every installed
plugin autoloaded as in a developer's venv, the plugin imported from a wheel as users install it (not the editable
install: ``startup.regular_install``; ``benchmarks/startup.py`` measures the same with more counts).

    .venv/bin/python benchmarks/slope.py                      # 200, 500 and 1,000 repetitions; about ten minutes
    .venv/bin/python benchmarks/slope.py --sizes 20,50 --smoke   # seconds; nothing judged
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synthetic  # noqa: E402
from run import base_env, ours, theirs  # noqa: E402
from startup import instructions, regular_install  # noqa: E402

#: Repetitions per task: sizes are tasks x N.
N = 5
#: Issue 30's targets: per repetition (slope) and the whole process at the middle size.
TARGETS = {"default": 1.15, "off": 1.10, "whole": 1.20, "unmarked": 1.05}


def count(cmd: list[str], cwd: Path, env: dict[str, str], smoke: bool) -> int:
    """Instructions of one process under callgrind (with ``smoke``: run once without valgrind, 0)."""
    if smoke:
        subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return 0
    return instructions(cmd, cwd, env)


def pytest_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


def per_repetition(sizes: list[int], work: Path, smoke: bool) -> dict[str, dict[int, int]]:
    """Instructions of each side at each size (repetitions)."""
    env = base_env() | {"PYTHONDONTWRITEBYTECODE": ""}
    counts: dict[str, dict[int, int]] = {"repeat": {}, "default": {}, "off": {}}
    for size in sizes:
        tasks = size // N
        suite = synthetic.record_suite(work / f"suite-{size}", tasks, N)
        baseline = synthetic.record_baseline(work / f"baseline-{size}", tasks)
        sides = {
            "repeat": (baseline, pytest_cmd(*theirs(N))),
            "default": (suite, pytest_cmd(*ours())),
            "off": (suite, pytest_cmd(*ours("--consistency-record=off"))),
        }
        for side, (root, cmd) in sides.items():
            subprocess.run(cmd, cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)  # bytecode cached
            counts[side][size] = count(cmd, root, env, smoke)
    return counts


def unmarked(work: Path, smoke: bool) -> dict[str, int]:
    root = work / "unmarked"
    root.mkdir()
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_plain.py").write_text("def test_plain():\n    assert 1 + 1 == 2\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    # As users install it (``startup.regular_install``); the warm-up run writes the bytecode the counted run reads.
    env |= regular_install(work / "site")
    out = {}
    for side, extra in (("plugin", []), ("no:consistency", ["-p", "no:consistency"])):
        cmd = pytest_cmd("test_plain.py", *extra)
        subprocess.run(cmd, cwd=root, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out[side] = count(cmd, root, env, smoke)
    return out


def figures(counts: dict[str, dict[int, int]], plain: dict[str, int]) -> dict[str, Any]:
    sizes = sorted(counts["repeat"])
    low, high = sizes[0], sizes[-1]
    middle = sizes[len(sizes) // 2]
    slope = {side: (values[high] - values[low]) / (high - low) for side, values in counts.items()}
    found: dict[str, Any] = {"sizes": sizes, "counts": counts, "slope": slope, "unmarked": plain}
    if slope["repeat"] > 0:
        found["ratio_default"] = slope["default"] / slope["repeat"]
        found["ratio_off"] = slope["off"] / slope["repeat"]
        found["ratio_whole"] = counts["default"][middle] / counts["repeat"][middle]
        found["fixed_default"] = counts["default"][low] - slope["default"] * low
        found["fixed_repeat"] = counts["repeat"][low] - slope["repeat"] * low
    if plain.get("no:consistency"):
        found["ratio_unmarked"] = plain["plugin"] / plain["no:consistency"]
    return found


def show(found: dict[str, Any], smoke: bool) -> None:
    if smoke:
        print(f"slope benchmark ran at sizes {found['sizes']} (smoke: nothing counted or judged)")
        return
    m = 1e6
    low, high = found["sizes"][0], found["sizes"][-1]
    print(f"per repetition, the slope between {low} and {high} repetitions (instructions):")
    labels = {"default": ("default mode", "ratio_default"), "off": ("--consistency-record=off", "ratio_off")}
    for side, (label, key) in labels.items():
        ratio, target = found[key], TARGETS[side]
        verdict = "met" if ratio <= target else "NOT MET"
        print(f"  {label:26} {found['slope'][side] / m:6.3f} M vs pytest-repeat {found['slope']['repeat'] / m:6.3f} M")
        print(f"  {'':26} ratio {ratio:.3f} (target <= {target})  {verdict}")
    middle = found["sizes"][len(found["sizes"]) // 2]
    whole = found["ratio_whole"]
    print(
        f"whole process at {middle} repetitions: ratio {whole:.3f} (target <= {TARGETS['whole']})"
        f"  {'met' if whole <= TARGETS['whole'] else 'NOT MET'}"
    )
    print(f"fixed cost: plugin {found['fixed_default'] / m:,.0f} M, pytest-repeat {found['fixed_repeat'] / m:,.0f} M")
    plain = found["unmarked"]
    ratio = found["ratio_unmarked"]
    verdict = "met" if ratio <= TARGETS["unmarked"] else "NOT MET"
    ours_, theirs_ = plain["plugin"] / m, plain["no:consistency"] / m
    print(f"one unmarked test: plugin {ours_:,.1f} M, -p no:consistency {theirs_:,.1f} M")
    print(f"  ratio {ratio:.3f} (target <= {TARGETS['unmarked']})  {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="200,500,1000", help="repetitions, comma-separated (multiples of 5)")
    parser.add_argument("--smoke", action="store_true", help="run each process once without valgrind; judge nothing")
    parser.add_argument("--json", type=Path, help="write the counts and figures here")
    args = parser.parse_args(argv)
    smoke = args.smoke or shutil.which("valgrind") is None
    sizes = sorted(int(s) for s in args.sizes.split(","))
    if len(sizes) < 2 or any(s % N for s in sizes):
        parser.error(f"--sizes: at least two sizes, each a multiple of {N}")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        found = figures(per_repetition(sizes, work, smoke), unmarked(work, smoke))
    show(found, smoke)
    if args.json:
        args.json.write_text(json.dumps(found, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
