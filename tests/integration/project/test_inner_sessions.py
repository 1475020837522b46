"""What the test harness promises its in-process sessions (docs/testing.md, "Inner sessions"): they import nothing of
the package anew (``tests/conftest.py`` imported it all once; a session that re-imports pays for it, and the wing
move once dropped those imports without a test noticing), and they leave no descriptor open behind them (a plugin
that did passed 1,024 descriptors in one worker)."""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

import inner
import pytest
from suites import pattern_suite


class ModulesSeen:
    """A plugin for the inner session: the package's modules loaded when it ends, by name, with their identity."""

    def __init__(self) -> None:
        self.modules: dict[str, int] = {}

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.modules = {name: id(m) for name, m in sys.modules.items() if name.startswith("pytest_consistency")}


def every_output(pytester: pytest.Pytester, *extra: Any) -> pytest.RunResult:
    pytester.makepyfile(
        test_task=pattern_suite({"a": "PPFPP", "b": "PPPPP"}, {"a": ["x", "x", "y", "x", "x"]}, marker="min_pass=0")
    )
    outputs = ("--consistency-report=r.json", "--consistency-md=r.md", "--consistency-html=r.html")
    return pytester.runpytest(*outputs, "--junitxml=r.xml", "--consistency-gap-max=50", plugins=list(extra))


def test_an_in_process_session_imports_no_module_of_the_package_again(pytester: pytest.Pytester) -> None:
    seen = ModulesSeen()
    result = every_output(pytester, seen)
    assert result.ret == 0, result.stdout.str()
    assert len(seen.modules) > 50  # the session woke the wings it writes every output with
    outer = {name: id(m) for name, m in sys.modules.items() if name.startswith("pytest_consistency")}
    fresh = sorted(name for name, ident in seen.modules.items() if outer.get(name) != ident)
    assert fresh == [], f"imported again inside the session (tests/conftest.py imports the package once): {fresh}"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc/self/fd (Linux)")
def test_an_in_process_session_leaves_no_descriptor_open(pytester: pytest.Pytester) -> None:
    every_output(pytester)  # the first session may open what the process keeps (a log file, a cache)
    gc.collect()
    before = sorted(os.listdir("/proc/self/fd"))
    for _ in range(3):
        every_output(pytester)
    gc.collect()
    after = sorted(os.listdir("/proc/self/fd"))
    opened = {
        fd: os.readlink(f"/proc/self/fd/{fd}")
        for fd in set(after) - set(before)
        if os.path.exists(f"/proc/self/fd/{fd}")
    }
    assert len(after) <= len(before), opened


def test_the_inner_sessions_leave_out_the_test_tools_plugins(pytester: pytest.Pytester) -> None:
    """The list of tests/support/inner.py reaches every inner session through PYTEST_ADDOPTS."""
    loaded: set[str] = set()

    class PluginsSeen:
        def pytest_configure(self, config: pytest.Config) -> None:
            loaded.update(name for name, plugin in config.pluginmanager.list_name_plugin() if plugin is not None)

    assert every_output(pytester, PluginsSeen()).ret == 0
    assert "consistency" in loaded and "xdist" in loaded  # the entry points that stay
    assert not set(inner.LEFT_OUT) & loaded, set(inner.LEFT_OUT) & loaded
