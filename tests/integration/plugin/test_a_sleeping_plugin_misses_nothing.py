"""A session the plugin sleeps through until it needs the plugin behaves as one it was awake for from the start.

Issue 42: the plugin wakes when a session first needs it (``plugin/dormant.py``), not at ``pytest_configure``. Each
test here runs a real inner session, with no option of the plugin set and no credential variable exported (so it
starts asleep), shaped so that the plugin wakes late: what its roles would have seen before must not be lost (a
collection error, a failed test, a credential a conftest or a test exports, a hook a conftest collected on the way
implements, a handle asked for by name).
"""

from __future__ import annotations

import pytest
from asleep import without_reasons_to_wake
from fake_openai import GOOD_KEY
from suites import pattern_suite


@pytest.fixture(autouse=True)
def asleep_at_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    without_reasons_to_wake(monkeypatch)


@pytest.mark.parametrize("xdist", [[], ["-n", "1"]], ids=["serial", "xdist"])
def test_a_collection_error_before_the_first_marked_test_still_fails_a_tolerated_run(
    pytester: pytest.Pytester, xdist: list[str]
) -> None:
    """The broken module is collected before the marked one (serially, before the plugin wakes at the marked test's
    collection; under xdist, before the controller sees its first repetition): the tolerated failure does not turn
    the run green."""
    pytester.makepyfile(
        test_a_broken="import a_module_that_does_not_exist_here\n",
        test_b_tasks=pattern_suite({"flaky": "PFP"}, marker="min_pass=0"),
    )
    result = pytester.runpytest_subprocess(*xdist, "-p", "no:randomly", "--continue-on-collection-errors")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["*flaky* 2/3 * met min_pass 0, 1 failed", "*2 passed, 1 error, 1 tolerated*"])


def test_an_unmarked_failure_a_worker_reported_before_the_first_repetition_still_fails_a_tolerated_run(
    pytester: pytest.Pytester,
) -> None:
    """Under xdist the controller collects nothing: it wakes at the first report of a repetition. A plain test that
    failed before that is still a failure of the run, which the task's tolerated failure does not make green."""
    pytester.makepyfile(
        test_a_plain="def test_plain():\n    assert False, 'not a repetition'\n",
        test_b_tasks=pattern_suite({"flaky": "PFP"}, marker="min_pass=0"),
    )
    result = pytester.runpytest_subprocess("-n", "1", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["*1 failed, 2 passed, 1 tolerated*"])


LOGS_KEY = """
import logging
import os

def test_uses_the_key():
    logging.getLogger("agent").warning("calling with %s", os.environ["OPENAI_API_KEY"])
    print("key:", os.environ["OPENAI_API_KEY"])
    assert False, "fails, so that its output is shown"
"""


def test_a_credential_a_conftest_exports_while_collected_is_redacted_from_every_log_and_report(
    pytester: pytest.Pytester,
) -> None:
    """A conftest below the rootdir (collected after ``pytest_configure``) exports the key, as a ``load_dotenv()``
    would: the plugin wakes before any test runs, so the key is redacted from pytest's log file as it is written, and
    from the failing test's report."""
    pytester.mkpydir("agent")
    (pytester.path / "agent" / "conftest.py").write_text(f"import os\n\nos.environ['OPENAI_API_KEY'] = {GOOD_KEY!r}\n")
    (pytester.path / "agent" / "test_agent.py").write_text(LOGS_KEY)
    result = pytester.runpytest_subprocess("--log-file=session.log", "--log-file-level=INFO", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    log = (pytester.path / "session.log").read_text()
    assert "calling with" in log and "<redacted>" in log, log
    everything = result.stdout.str() + result.stderr.str() + log
    assert "key:" in everything and GOOD_KEY not in everything, everything


def test_a_credential_a_test_exports_is_redacted_from_its_report(pytester: pytest.Pytester) -> None:
    """A test that exports the key itself and fails: its report is redacted before pytest prints it."""
    pytester.makepyfile(
        f"""
        import os

        def test_exports_the_key():
            os.environ["OPENAI_API_KEY"] = {GOOD_KEY!r}
            print("key:", os.environ["OPENAI_API_KEY"])
            assert False, "fails, so that its output is shown"
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "key:" in out and GOOD_KEY not in out, out


def test_a_summary_hook_a_conftest_collected_later_implements_is_called(pytester: pytest.Pytester) -> None:
    """``pytest_consistency_summary`` in a conftest below the rootdir of a session of plain tests: the session end
    hands it the (empty) summary, as it does one implemented in the rootdir's conftest."""
    pytester.mkpydir("agent")
    (pytester.path / "agent" / "conftest.py").write_text(
        "def pytest_consistency_summary(summary, config):\n"
        "    (config.rootpath / 'summary.txt').write_text(f'{len(summary.tasks)} tasks, passed {summary.passed}')\n"
    )
    (pytester.path / "agent" / "test_plain.py").write_text("def test_plain():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert (pytester.path / "summary.txt").read_text() == "0 tasks, passed True"


def test_a_handle_asked_for_by_name_in_a_session_of_plain_tests_is_the_running_tests(pytester: pytest.Pytester) -> None:
    """No collected test names ``consistency``; one asks for it with ``request.getfixturevalue``: the plugin wakes
    there, and the handle is that test's (a repetition of one) and gone after it."""
    pytester.makepyfile(
        """
        def test_dynamic(request):
            handle = request.getfixturevalue("consistency")
            assert handle.task_id.endswith("::test_dynamic") and handle.n == 1
            handle.record("x")

        def test_zz_after():
            from pytest_consistency.capture.active import current

            assert current() is None
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=2)
