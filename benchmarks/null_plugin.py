"""The floor of figures 1 and 2: pytest-consistency's marker, hooks and fixtures, doing nothing.

Why: a design with these hooks pays pluggy for each of them on every phase of every repetition, and pytest for an
indirect parameter and a fixture, whatever the hooks do. This plugin registers the same
marker, hooks and fixtures as ``pytest_consistency.plugin`` with empty bodies, so a suite run with it instead
(``PYTHONPATH=benchmarks pytest -p null_plugin -p no:consistency``) costs what no implementation can go below.
``benchmarks/run.py`` runs it beside figures 1 and 2. Under callgrind, per repetition (slope between 100 and 500
repetitions): 2,387 K against pytest-repeat's 2,321 K, x1.029 (x1.112 while its fixtures asked for ``request``).
"""

from __future__ import annotations

import pytest

PARAM = "_consistency_repetition"


def pytest_configure(config):
    config.addinivalue_line("markers", "repeat_consistency(n): repeat")
    config.pluginmanager.register(Secrets(), "null-secrets")
    config.pluginmanager.register(Controller(), "null-controller")
    config.pluginmanager.register(JUnit(), "null-junit")


@pytest.hookimpl(trylast=True)
def pytest_generate_tests(metafunc):
    marker = metafunc.definition.get_closest_marker("repeat_consistency")
    if marker is None:
        return
    n = marker.kwargs["n"]
    metafunc.fixturenames.append(PARAM)
    metafunc.parametrize(PARAM, range(1, n + 1), indirect=True, ids=lambda r: f"rep{r}")


@pytest.fixture
def _consistency_repetition():
    """As the plugin's: the repetition's number is read from ``item.callspec``; no ``request``."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    pass


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    pass


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    try:
        return (yield)
    finally:
        pass


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    pass


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    try:
        return (yield)
    finally:
        pass


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    return report


class Secrets:
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report):
        pass


class Controller:
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report):
        pass

    def pytest_collectreport(self, report):
        pass

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session, exitstatus):
        pass

    def pytest_terminal_summary(self, terminalreporter):
        pass


class JUnit:
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session):
        pass


class Handle:
    def record(self, answer):
        pass


@pytest.fixture
def consistency():
    """As the plugin's: a plain fixture that asks for neither ``request`` nor ``pytestconfig``."""
    return Handle()
