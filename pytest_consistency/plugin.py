"""pytest-consistency's hooks and fixtures: the table of contents of the plugin.

Each hook delegates to the module that owns the concern: ``marker`` (repetitions), ``settings`` (options),
``repetition`` and ``collect`` (what a repetition produced and how it reaches the controller), ``summary``
(figures and gates), ``terminal`` and ``report`` (output).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from . import hookspecs, settings
from .answers import default_equivalent, default_normalize
from .collect import ATTRIBUTE, payload
from .marker import MARKER_DOC, PARAM, MarkerError, repetition_id, task_id_of
from .records import RepetitionResult
from .repetition import ActiveRepetition, Consistency, activate
from .report import to_dict, write_atomic
from .state import ACTIVE, SPEC, STATE, PluginState, is_worker, marker_of
from .summary import build_summary, finish
from .terminal import render


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_DOC)
    config.stash[STATE] = PluginState(settings=settings.resolve(config))
    if not is_worker(config):
        config.pluginmanager.register(Controller(config), "consistency-controller")


# --- default implementations of our own hooks -------------------------------------------------------------


@pytest.hookimpl(trylast=True)
def pytest_consistency_normalize_answer(answer: Any, task_id: str) -> Any:
    return default_normalize(answer)


@pytest.hookimpl(trylast=True)
def pytest_consistency_answers_equivalent(left: Any, right: Any, task_id: str) -> bool:
    return default_equivalent(left, right)


# --- collection: one item per repetition -----------------------------------------------------------------


@pytest.hookimpl(trylast=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("repeat_consistency")
    if marker is None:
        return
    try:
        spec = metafunc.config.stash[STATE].spec(marker)
        problem = None
    except MarkerError as exc:
        problem = str(exc)
    if problem is not None:  # outside the except block, so the error shows without a chained traceback
        pytest.fail(f"{metafunc.definition.nodeid}: @pytest.mark.repeat_consistency: {problem}", pytrace=False)
    metafunc.fixturenames.append(PARAM)
    metafunc.parametrize(PARAM, range(1, spec.n + 1), indirect=True, ids=repetition_id)


@pytest.fixture
def _consistency_repetition(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash[STATE]
    for index, item in enumerate(items):
        marker = marker_of(item)
        callspec = getattr(item, "callspec", None)
        if marker is not None and callspec is not None and PARAM in callspec.params:
            item.stash[SPEC] = state.spec(marker)
            state.order[item.nodeid] = index


# --- running a repetition --------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    spec = item.stash.get(SPEC, None)
    if spec is not None:
        repeat = int(item.callspec.params[PARAM])  # type: ignore[attr-defined]
        item.stash[ACTIVE] = ActiveRepetition(
            task_id=task_id_of(item.nodeid, repeat), repeat=repeat, n=spec.n, marked=True
        )
        activate(item.stash[ACTIVE])
    try:
        return (yield)
    finally:
        activate(None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    active = item.stash.get(ACTIVE, None)
    spec = item.stash.get(SPEC, None)
    if active is not None and spec is not None:
        state = item.config.stash[STATE]
        result = RepetitionResult(
            task_id=active.task_id,
            nodeid=item.nodeid,
            repeat=active.repeat,
            n=spec.n,
            k=spec.k,
            min_pass=spec.min_pass,
            order=state.order.get(item.nodeid, 0),
        )
        plugins = [impl.plugin_name for impl in item.config.hook.pytest_consistency_answers_equivalent.get_hookimpls()]
        setattr(report, ATTRIBUTE, payload(active, result, plugins))
    return report


@pytest.fixture
def consistency(request: pytest.FixtureRequest) -> Consistency:
    """Handle of the current repetition: ``record(answer)``, ``repeat``, ``n``, ``task_id``, ``calls``."""
    node = request.node
    active = node.stash.get(ACTIVE, None)
    if active is None:
        active = ActiveRepetition(task_id=node.nodeid, repeat=1, n=1, marked=False)
        node.stash[ACTIVE] = active
        activate(active)
    hook = request.config.hook.pytest_consistency_normalize_answer
    return Consistency(active, lambda answer, task_id: hook(answer=answer, task_id=task_id))


# --- the controller: collect, summarise, gate, print, write ---------------------------------------------


class Controller:
    """Hooks of the process that sees every report: the only process without xdist, the controller with it.

    Registered from ``pytest_configure`` so that it holds the config; workers never register it.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.config.stash[STATE].collector.add(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        summarise(session, exitstatus)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        print_summary(terminalreporter, self.config)


def summarise(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash[STATE]
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldstop)

    def equivalent(left: Any, right: Any, task_id: str) -> bool:
        return bool(config.hook.pytest_consistency_answers_equivalent(left=left, right=right, task_id=task_id))

    summary = build_summary(state.collector.repetitions.values(), equivalent, interrupted=interrupted)
    local = {impl.plugin_name for impl in config.hook.pytest_consistency_answers_equivalent.get_hookimpls()}
    unseen = sorted(state.collector.worker_equivalence_plugins - local)
    if unseen:
        summary.warnings.append(
            "pytest_consistency_answers_equivalent is implemented in "
            + ", ".join(unseen)
            + ", which the controlling process did not load; answers were compared without it. "
            "Move the hook to a conftest.py at or above the paths given on the command line."
        )
    finish(summary, {option.dest: state.settings[option.dest] for option in settings.GATE_OPTIONS})
    state.summary = summary
    config.hook.pytest_consistency_summary(summary=summary, config=config)

    report_path = state.settings["consistency_report"]
    if report_path:
        path = Path(report_path)
        if not path.is_absolute():
            path = Path(config.invocation_params.dir) / path
        write_atomic(path, to_dict(summary))
        state.report_path = str(path)

    tolerated = {r.nodeid for t in summary.tasks if t.verdict == "pass" for r in t.repetitions}
    failed = state.collector.failed_nodeids
    if session.exitstatus == pytest.ExitCode.TESTS_FAILED and failed and failed <= tolerated:
        session.exitstatus = pytest.ExitCode.OK
    if any(not gate.passed for gate in summary.gates) and session.exitstatus in (
        pytest.ExitCode.OK,
        pytest.ExitCode.NO_TESTS_COLLECTED,
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def print_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    state = config.stash[STATE]
    summary = state.summary
    if summary is None or (not summary.tasks and not summary.gates):
        return
    width = min(terminalreporter._tw.fullwidth, 120)
    terminalreporter.write_sep("=", "consistency")
    for line in render(summary, config.get_verbosity(), width):
        failed = line.endswith("FAILED")
        terminalreporter.write_line(line, red=failed, bold=failed)
    tolerated = sum(
        1 for t in summary.tasks if t.verdict == "pass" for r in t.repetitions if r.outcome not in ("passed", "xpassed")
    )
    if tolerated:
        terminalreporter.write_line(f"{tolerated} failed repetition(s) tolerated by min_pass")
    if state.report_path:
        terminalreporter.write_line(f"report: {state.report_path}")
