"""Tolerated failures read as their own category, in the progress line, the closing line and the summaries.

A repetition that fails inside a task that passes as a whole (``min_pass`` below 1) is not a failure of the run:
pytest's closing line says ``tolerated``, its tracebacks are not printed as failures, and a task that fails as a
whole still reads as failed everywhere.
"""

from __future__ import annotations

import pytest
from suites import load_report, pattern_suite

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])


@XDIST
def test_failures_that_min_pass_tolerates_are_not_called_failed(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"flaky": "PFPFP", "solid": "PPPPP"}, marker="min_pass=0"))
    result = pytester.runpytest("--consistency-report=report.json", *xdist)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*= 8 passed, 2 tolerated in *"])
    out = result.stdout.str()
    assert "FAILURES" not in out and "FAILED test_tasks" not in out and " failed" not in out.splitlines()[-1]
    if not xdist:  # the progress letter: min_pass=0 tolerates every failure as it happens
        result.stdout.fnmatch_lines(["test_tasks.py .t.t.....*"])
    result.stdout.fnmatch_lines(
        ["2 of * repetitions failed in * task(s) that met their min_pass*", "(-v lists the tolerated*"]
    )
    assert load_report(pytester)["summary"]["passed"] is True


def test_a_failure_before_the_task_is_decided_is_tolerated_at_the_end(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"late": "FPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["test_tasks.py F....*", "*= 4 passed, 1 tolerated in *"])


@XDIST
def test_a_task_that_fails_as_a_whole_still_reads_failed(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"ok": "PFPPP", "bad": "FFPFP"}, marker="min_pass=0.8"))
    result = pytester.runpytest(*xdist)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*FAILED test_tasks.py::test_task[[]bad-rep1]*", "*= 3 failed, 6 passed, 1 tolerated in *"]
    )
    assert "FAILED test_tasks.py::test_task[ok-rep2]" not in result.stdout.str()


def test_a_run_stopped_early_tolerates_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"flaky": "PFPPP"}, marker="min_pass=0"))
    result = pytester.runpytest("-x")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*= 1 failed, 1 passed in *"])


def test_verbose_lists_tolerated_repetitions_and_their_tracebacks(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"flaky": "PFP"}, marker="min_pass=0"))
    result = pytester.runpytest("-v")
    result.stdout.fnmatch_lines(
        ["TOLERATED test_tasks.py::test_task[[]flaky-rep2] - AssertionError: assert 'F' == 'P'"]
    )
    assert "_ tolerated: " not in result.stdout.str()
    result = pytester.runpytest("-vv")
    result.stdout.fnmatch_lines(["*_ tolerated: test_tasks.py::test_task[[]flaky-rep2] _*", "*AssertionError*"])
