"""What a process pays for the plugin at start-up, an xdist worker's above all: structural guards (no timings here).

``benchmarks/workers.py`` counts a worker's instructions with and without the plugin (issue 30: an xdist worker
start pays no more than 5 % for a plugin its tests do not use), ``benchmarks/startup.py`` a whole session's in a lean
environment (issue 42: the same 5 %, with and without ``PYTHONDONTWRITEBYTECODE``, under xdist too). These tests fail
when a change brings back what they removed: a process of a session that does not use the plugin loading more than
its option table (the dormant plugin, ``tests/support/asleep.py``) or having pytest's assertion rewriter compile its
modules, a worker importing the controller's machinery, and the route providers loading the trajectory model before
any call is read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from asleep import ASLEEP, ASLEEP_ROLES, REWRITTEN, without_reasons_to_wake
from asleep import PROBE as ASLEEP_PROBE

#: Their sessions' processes start cold, not forked from the warm server (tests/support/forkserver.py):
#: what a session imports by itself is what these tests measure.
pytestmark = pytest.mark.cold_start

pytest.importorskip("xdist")

#: Every process of the session (the controller and each worker) writes what of the plugin it imported and which
#: of its roles it registered.
PROBE = """
import json
import sys


def pytest_unconfigure(config):
    name = getattr(config, "workerinput", {}).get("workerid", "controller")
    roles = sorted(n for n, _ in config.pluginmanager.list_name_plugin() if n and n.startswith("consistency-"))
    modules = sorted(m for m in sys.modules if m.startswith("pytest_consistency"))
    with open(f"loaded-{name}.json", "w") as handle:
        json.dump({"modules": modules, "roles": roles}, handle)
"""

MARKED = """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    consistency.record("x")
"""


def run_with_one_worker(pytester: pytest.Pytester, test: str) -> dict[str, dict[str, list[str]]]:
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_it=test)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "-n", "1")
    assert result.ret == 0, result.stdout.str()
    return {name: json.loads((pytester.path / f"loaded-{name}.json").read_text()) for name in ("controller", "gw0")}


def test_an_xdist_session_of_unmarked_tests_sleeps_in_every_process(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42: under xdist too, the controller and the worker of a session that does not use the plugin load its
    option table and the role that waits for a reason to wake it, nothing else (``asleep.ASLEEP``): none of the
    controller's roles, modules or report model in either, nothing of the session end; and none of those modules goes
    through pytest's assertion rewriter but the package's ``__init__``."""
    without_reasons_to_wake(monkeypatch)
    pytester.makeconftest(ASLEEP_PROBE)
    pytester.makepyfile(test_it="def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "-n", "1")
    assert result.ret == 0, result.stdout.str()
    for name in ("controller", "gw0"):
        loaded = json.loads((pytester.path / f"loaded-{name}.json").read_text())
        assert loaded["roles"] == ASLEEP_ROLES, (name, loaded["roles"])
        assert loaded["modules"] == ASLEEP, (name, loaded["modules"])
        assert set(loaded["rewritten"]) <= REWRITTEN, (name, loaded["rewritten"])


def test_a_worker_running_repetitions_imports_nothing_of_the_session_end(pytester: pytest.Pytester) -> None:
    """A worker that runs a marked task's repetitions sends its reports to the controller: the controller's roles,
    the session end's summary and the renderers are never its own (the repetition scope's module still loads the
    adaptive board and the token ledger at its import; that is the repetition's own cost, left to it)."""
    loaded = run_with_one_worker(pytester, MARKED)
    worker = loaded["gw0"]
    assert "consistency-repetition-scope" in worker["roles"] and "consistency-controller" not in worker["roles"]
    session_end = (
        "pytest_consistency.plugin.controller",
        "pytest_consistency.plugin.finish",
        "pytest_consistency.plugin.outputs",
        "pytest_consistency.plugin.terminal_summary",
        "pytest_consistency.analysis.summary",
        "pytest_consistency.report",
    )
    assert not [m for m in worker["modules"] if m.startswith(session_end)], worker["modules"]
    assert "pytest_consistency.plugin.finish" in loaded["controller"]["modules"]


PROVIDERS_PROBE = """
import json, sys
import pytest
from pytest_consistency.route import providers
found = {name: providers.builtin(name).name for name in ("openai", "anthropic")}
print(json.dumps({"providers": found, "trajectory": "pytest_consistency.model.trajectory" in sys.modules}))
"""


def test_the_builtin_providers_load_without_the_trajectory_model(tmp_path: Path) -> None:
    """Every session configures both built-in providers (their routes, their key variables); the trajectory model
    they read a call's decision with loads when a call is first read, not at start-up."""
    run = [sys.executable, "-c", PROVIDERS_PROBE]
    out = json.loads(subprocess.run(run, capture_output=True, text=True, check=True, cwd=tmp_path).stdout)
    assert out == {"providers": {"openai": "openai", "anthropic": "anthropic"}, "trajectory": False}


def test_the_settings_class_compiles_no_comparison_methods() -> None:
    """Every pytest start with the plugin installed builds ``Settings`` (57 fields): its ``__eq__`` and ``__hash__``
    were about 1.1 ms of that start, and nothing compares two sessions' settings. Compared by identity, still frozen."""
    from dataclasses import FrozenInstanceError

    from pytest_consistency.config.settings import Settings

    assert Settings.__eq__ is object.__eq__ and Settings.__hash__ is object.__hash__
    settings = Settings(record="none")
    with pytest.raises(FrozenInstanceError):
        settings.record = "off"  # type: ignore[misc]
