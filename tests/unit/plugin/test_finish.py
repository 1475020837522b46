"""The session end (``plugin.finish``): the cyclic collector paused around its work (``gc_paused``); the exit status
decided from the verdict, the tolerated failures and the errors (``exit_status_of``)."""

from __future__ import annotations

import gc
from types import SimpleNamespace

import pytest

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.config.settings import Settings
from pytest_consistency.model.result import RunFacts, SessionSummary
from pytest_consistency.plugin.finish import exit_status_of, gc_paused
from pytest_consistency.plugin.state import PluginState


def test_the_collector_is_off_inside_and_as_it_was_after() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the user's choice is kept
    finally:
        gc.enable()
    with pytest.raises(KeyError), gc_paused():
        raise KeyError("x")
    assert gc.isenabled()


def decided_twice(status: int, summary: SessionSummary, state: PluginState) -> list[int]:
    """The exit status decided as the session end does it, twice over (an error may come in between): the second
    answer must follow from the first, never flip a status the first already settled for another reason."""
    session = SimpleNamespace(exitstatus=status)
    answers = []
    for _ in range(2):
        summary.exit_status = exit_status_of(session, summary, state)  # type: ignore[arg-type]
        summary.passed = summary.exit_status == 0
        answers.append(summary.exit_status)
    return answers


def tolerating(*failed: str) -> PluginState:
    state = PluginState(settings=Settings())
    state.collector.failed_nodeids.update(failed)
    state.tolerated = frozenset(failed)
    return state


def test_tolerated_failures_do_not_fail_the_run() -> None:
    assert decided_twice(1, build_summary([]), tolerating("t.py::a[1]")) == [0, 0]


def test_an_error_fails_a_run_whose_failures_are_tolerated() -> None:
    summary = build_summary([])
    summary.errors.append("a pytest_consistency_summary hook raised RuntimeError: down")
    assert decided_twice(1, summary, tolerating("t.py::a[1]")) == [1, 1]


def test_a_failed_verdict_fails_a_run_whose_tests_passed() -> None:
    summary = build_summary([])
    summary.passed = False
    assert decided_twice(0, summary, tolerating()) == [1, 1]


def test_a_shard_defers_its_failed_tasks_to_the_merge() -> None:
    summary = build_summary([], run=RunFacts(shard="1/2"))
    summary.passed = False
    assert decided_twice(1, summary, PluginState(settings=Settings())) == [0, 0]
    summary.errors.append("--consistency-md: cannot write the markdown output to s.md (Is a directory)")
    assert decided_twice(1, summary, PluginState(settings=Settings())) == [1, 1]


def test_an_interrupted_run_keeps_its_status() -> None:
    summary = build_summary([])
    summary.passed = False
    assert decided_twice(2, summary, tolerating()) == [2, 2]
