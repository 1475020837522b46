"""The plugin imports, and keeps its budget and adaptive board, on a platform without ``fcntl`` (Windows).

File locks go through ``filelock``; only the throttle uses ``fcntl`` itself (its slot files and doorbell need
``flock`` and FIFOs), and its import is guarded: a rate or concurrency limit is refused there with an error, as the
docs say, while every module of the package still imports. Each check runs in a fresh interpreter in which
``import fcntl`` fails, set before anything else is imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HIDE_FCNTL = """
import sys
sys.modules["fcntl"] = None  # `import fcntl` now raises ImportError, as on Windows
"""

IMPORT_EVERYTHING = (
    HIDE_FCNTL
    + """
import importlib
import json
import pkgutil
from importlib.metadata import entry_points

import pytest_consistency

(plugin,) = [e for e in entry_points(group="pytest11") if e.value.startswith("pytest_consistency")]
plugin.load()
walked = pkgutil.walk_packages(pytest_consistency.__path__, "pytest_consistency.")
names = sorted(m.name for m in walked if not m.name.endswith(".__main__"))  # a __main__ runs a command
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names, "fcntl": "fcntl" in sys.modules and sys.modules["fcntl"] is not None}))
"""
)

USE_THE_LOCKS = (
    HIDE_FCNTL
    + """
import warnings
from pathlib import Path

warnings.simplefilter("ignore")  # filelock says it falls back to its soft lock where fcntl is missing
from pytest_consistency.shared.board import Board, Tally
from pytest_consistency.shared.ledger import Ledger, TokenBudgetExceeded
from pytest_consistency.shared.throttle import Throttle

directory = Path(sys.argv[1])
ledger = Ledger(directory / "tokens", limit=10)
ledger.add(7)
ledger.add(4)
try:
    ledger.check()
except TokenBudgetExceeded:
    pass
else:
    raise SystemExit("the budget was not enforced")
board = Board(directory)
board.record("task", "t.py::x[rep1]", "pass")
board.record("task", "t.py::x[rep1]", "fail")
board.record("task", "t.py::x[rep2]", "fail")
assert board.tally("task") == Tally(passes=1, failures=1), board.tally("task")
Throttle(directory, "openai", concurrency=None, rpm=None)  # no limit: nothing to lock
try:
    Throttle(directory, "openai", concurrency=1, rpm=None)
except NotImplementedError as exc:
    print(exc)
else:
    raise SystemExit("a concurrency limit was accepted without fcntl")
"""
)


def run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)


def test_the_plugin_and_every_module_of_the_package_import_without_fcntl() -> None:
    done = run(IMPORT_EVERYTHING)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert not found["fcntl"]
    assert {"pytest_consistency.plugin", "pytest_consistency.shared.ledger", "pytest_consistency.shared.board"} <= set(
        found["modules"]
    )
    assert "pytest_consistency.shared.throttle" in found["modules"] and len(found["modules"]) > 50


def test_the_token_budget_and_the_adaptive_board_work_without_fcntl_and_a_rate_limit_is_refused(
    tmp_path: Path,
) -> None:
    done = run(USE_THE_LOCKS, str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "need Linux or macOS; run without them on Windows" in done.stdout
