"""One story in every output: the exit status, the closing line, the JSON report, JUnit (pytest's and show's),
the Markdown summary and merge agree, whatever a session throws at them (unmarked failures among tolerated
tasks, xfails, skips, --maxfail, --last-failed, pytest.exit, collection errors, inconclusive gates,
adaptive mode under xdist, a summary hook that raises). Adversarial round two, part 1.
"""

from __future__ import annotations

import pytest
from stories import OUT, story
from suites import pattern_suite


def test_an_unmarked_failure_among_tolerated_tasks_fails_every_output(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a=pattern_suite({"a": "PFP"}, marker="min_pass=0.5"),
        test_b="def test_plain():\n    assert False, 'plain failure'\n",
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_strict_xfail_that_passes_fails_every_output(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.xfail(strict=True, reason="known")
@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    consistency.record("x")
"""
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_non_strict_xfail_task_is_green_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.xfail(reason="known")
@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    consistency.record("x")
    assert False
"""
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 0
    story(pytester, result)


def test_a_skipped_task_with_a_gate_is_not_measurable_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    pytest.skip("no data")
"""
    )
    result = pytester.runpytest("--consistency-gap-max=10", *OUT)
    assert result.ret == 1
    story(pytester, result)


def test_maxfail_with_tolerated_tasks_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "FPPP", "b": "FPPP", "c": "PPPP"}, marker="min_pass=0.5"))
    result = pytester.runpytest("--maxfail=2", *OUT)
    assert result.ret != 0
    story(pytester, result)


def test_last_failed_rerun_of_a_tolerated_task_never_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "PPPF", "b": "FFFF"}, marker="min_pass=0.5"))
    first = pytester.runpytest("-p", "cacheprovider")
    assert first.ret == 1
    result = pytester.runpytest("-p", "cacheprovider", "--lf", *OUT)
    assert result.ret != 0, result.stdout.str()
    story(pytester, result)


def test_pytest_exit_returncode_zero_mid_task_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_task(consistency):
    consistency.record("x")
    if consistency.repeat == 2:
        pytest.exit("stop", returncode=0)
"""
    )
    result = pytester.runpytest(*OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_collection_error_beside_tolerated_tasks_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a=pattern_suite({"a": "PFP"}, marker="min_pass=0.5"),
        test_broken="import no_such_module_anywhere\n",
    )
    result = pytester.runpytest("--continue-on-collection-errors", *OUT)
    assert result.ret == 1
    story(pytester, result)


def test_an_inconclusive_bound_gate_is_one_story(pytester: pytest.Pytester) -> None:
    """Under xdist: tests/integration/plugin/test_xdist_same_answer.py (the same bound gates, inconclusive state)."""
    pytester.makepyfile(pattern_suite({"a": "PPPPF", "b": "PPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest("--consistency-gate-on=bound", "--consistency-gap-max=10", *OUT)
    story(pytester, result)


def test_an_inconclusive_gate_passed_by_option_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "PPPPF", "b": "PPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest(
        "--consistency-gate-on=bound", "--consistency-gap-max=10", "--consistency-inconclusive=pass", *OUT
    )
    story(pytester, result)


def test_adaptive_with_gate_is_one_story_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "FFFFF", "b": "PPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest("--consistency-adaptive", "-n", "2", *OUT)
    assert result.ret == 1
    story(pytester, result)


def test_a_summary_hook_that_raises_is_one_story(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
def pytest_consistency_summary(summary, config):
    raise RuntimeError("dashboard down")
"""
    )
    pytester.makepyfile(pattern_suite({"a": "PPP"}))
    result = pytester.runpytest(*OUT)
    story(pytester, result)
