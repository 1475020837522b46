import contextlib
import gc
import importlib
import os
import pkgutil
import sys
from collections.abc import Iterator
from pathlib import Path

import forkserver
import inner
import pytest
from fake_anthropic import GOOD_KEY as ANTHROPIC_KEY
from fake_anthropic import FakeAnthropic
from fake_openai import GOOD_KEY, FakeOpenAI
from tiers import TIER_MARKERS, tiers, xdist_copies

import pytest_consistency

# Imported once for the whole run: pytester's in-process sessions drop modules first imported inside them, and
# a half re-imported HTTP stack (httpx2 kept, httpcore2 fresh) no longer maps its own exceptions; Hypothesis, because
# its pytest plugin imports it at every inner session's end. Those installed: without the test extra (a plain
# `pip install -e .`) this file still loads, and the tests that need them fail.
for _name in ("anthropic", "httpcore", "httpcore2", "httpx", "httpx2", "openai", "vcr", "hypothesis"):
    with contextlib.suppress(ImportError):
        importlib.import_module(_name)

# The plugin loads its wings only when a session needs them; every module of the package is imported here once, for
# the same reason as the HTTP stack above: a module first imported inside one in-process session is dropped after
# it, and the next session would import (and assertion-rewrite) a second copy beside the first one's classes and
# state. Measured: the resample tests 52 s -> 30 s. The subprocess-based guards in test_lazy_costs still see what a
# session loads by itself, and tests/integration/project/test_inner_sessions.py that no session imports one anew.
for _module in pkgutil.walk_packages(pytest_consistency.__path__, "pytest_consistency."):
    if not _module.name.endswith(".__main__"):
        with contextlib.suppress(ImportError):
            importlib.import_module(_module.name)

pytest_plugins = ["pytester"]

# The inner sessions' plugin of the fork server (tests/support/forkserver.py), for those run in this process: on the
# path before any pytester session snapshots it (each restores the path it found), and on the copy of the path xdist
# took at its import for the local workers of those sessions (xdist gives them that copy, not PYTHONPATH).
sys.path.append(forkserver.PLUGIN_DIRECTORY)
with contextlib.suppress(ImportError):  # without the test extra, no xdist: this file still loads
    import xdist.plugin

    xdist.plugin._sys_path.append(forkserver.PLUGIN_DIRECTORY)


@pytest.fixture(scope="session")
def _fork_server() -> Iterator[forkserver.Running | None]:
    """The warm server inner sessions' processes are forked from (tests/support/forkserver.py), for this process's
    tests, started at the first test that runs an inner session; none with ``FORKSERVER_OFF`` set."""
    if os.environ.get(forkserver.OFF_VARIABLE):
        yield None
        return
    log = os.environ.get(forkserver.LOG_VARIABLE)
    with forkserver.running(log=log) as server, pytest.MonkeyPatch.context() as monkeypatch:
        for name, value in server.environment().items():
            monkeypatch.setenv(name, value)
        yield server


#: The integration tests, whose commands and inner sessions start processes: the fork server runs for each of them.
INTEGRATION = Path(__file__).parent / "integration"


@pytest.fixture(autouse=True)
def _quiet_inner_asyncio(request: pytest.FixtureRequest) -> None:
    """Inner sessions load pytest-asyncio from the environment; give it the setting it warns about. They leave out
    the other test tools' plugins unless a test asks for one (tests/support/inner.py says which and why). Their
    processes (``runpytest_subprocess``, ``-n N`` workers, the docs' ``pytest``, the example replays) are forked from
    the warm server, which every integration test and every test of an inner session has running; a test marked
    ``cold_start`` (what a process imports is its point) starts them cold."""
    uses_pytester = "pytester" in request.fixturenames
    forked = uses_pytester or request.path.is_relative_to(INTEGRATION)
    server = request.getfixturevalue("_fork_server") if forked else None
    if server is not None and request.node.get_closest_marker("cold_start"):
        request.getfixturevalue("monkeypatch").setenv(forkserver.OFF_VARIABLE, "1")
        server = None
    if uses_pytester:
        pytester = request.getfixturevalue("pytester")
        pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
        monkeypatch = request.getfixturevalue("monkeypatch")
        if server is not None:
            monkeypatch.setattr(pytester, "_getpytestargs", lambda: (server.client, "-mpytest"))
        monkeypatch.setenv("PYTEST_ADDOPTS", inner.addopts(os.environ.get("PYTEST_ADDOPTS", "")))


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def fake(fake_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    """The loopback server, reset, with the environment of a user whose key is exported."""
    fake_server.reset()
    fake_server.keys = {GOOD_KEY, GOOD_KEY + "-second"}
    monkeypatch.setenv("OPENAI_API_KEY", GOOD_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return fake_server


@pytest.fixture(scope="session")
def anthropic_server() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic().start()
    yield server
    server.stop()


@pytest.fixture
def claude(anthropic_server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    """The loopback Messages API, reset, with the environment of a user who exported the Anthropic variables."""
    anthropic_server.reset()
    anthropic_server.keys = {ANTHROPIC_KEY}
    monkeypatch.setattr(anthropic_server, "delay", 0.0)
    for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL", "OPENAI_BASE_URL", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
    return anthropic_server


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tiers (tests/support/tiers.py, docs/testing.md): each item gets its markers here, not in its file, and
    skips when what it needs is missing (not in CI, where it must be there and its own check fails instead)."""
    copies = xdist_copies(items)
    in_ci = bool(os.environ.get("CI"))
    for item in items:
        callspec = getattr(item, "callspec", None)
        marked = {m.name: (m.args[0] if m.args else None) for m in item.iter_markers() if m.name in TIER_MARKERS}
        found = tiers(item.path, item.originalname, item.fixturenames, callspec.params if callspec else {}, marked)
        for tier in found:
            if tier.marker not in marked or tier.arg != marked[tier.marker]:
                item.add_marker(getattr(pytest.mark, tier.marker)(*([tier.arg] if tier.arg else [])))
            if tier.skip and not in_ci:
                # first of the item's skipif marks, which pytest reads before its skip marks: this reason is shown
                item.add_marker(pytest.mark.skipif(True, reason=tier.skip), append=False)
        if item.nodeid in copies:
            item.add_marker(pytest.mark.xdist_copy)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported (the SDKs, the plugin, every test module: about 270,000 objects) lives as long as the
    run: frozen out of the garbage collector, which pytest runs at the end of every in-process session, and which
    took 0.2 s each time to walk them all (measured: the resample and core plugin tests 63.7 s -> 60.4 s)."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``-n N`` without ``--dist``: work-stealing, not xdist's default ``load``, which hands each worker its share
    of the items in chunks and never moves them again: the slow integration tests ended queued on one worker, and the
    other stood idle for the last 260 s of an 815-s run. An explicit ``--dist`` is kept (docs/testing.md)."""
    if getattr(config.option, "numprocesses", None) and config.option.dist == "no":
        config.option.dist = "worksteal"
