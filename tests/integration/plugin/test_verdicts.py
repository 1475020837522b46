"""One story: the exit status, the terminal summary and the JSON report agree, and no gate passes by accident.

Each test runs a real inner pytest session (pytester) shaped to break that promise: collection errors next to
tolerated failures, reruns that hide a failure, selections that leave tasks incomplete, expected failures,
collect-only runs, hooks that raise, an unwritable report path and a session stopped early.

The inner sessions decide their gates on the estimate (``--consistency-gate-on=point``, through ``PYTEST_ADDOPTS``):
these tests are about how verdicts and outputs agree, and a gate that passes or fails outright says so most plainly;
the decisions on the one-sided bounds are tested in tests/unit/analysis/test_gates.py and
tests/integration/analysis/test_regression_gating.py.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from suites import load_report, pattern_suite, without_timings

INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"


@pytest.fixture(autouse=True)
def gates_on_the_point(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # Added to what tests/conftest.py set (-p no:flaky, which would take over pytest-rerunfailures' reruns, and
    # -p no:rerunfailures: the rerun tests ask for it).
    monkeypatch.setenv("PYTEST_ADDOPTS", os.environ["PYTEST_ADDOPTS"] + " --consistency-gate-on=point")


def assert_one_story(result: pytest.RunResult, report: dict[str, Any]) -> None:
    """The report's verdict is the exit status: ``passed`` exactly when pytest exits 0."""
    summary = report["summary"]
    assert summary["exit_status"] == int(result.ret)
    assert summary["passed"] is (result.ret == pytest.ExitCode.OK)


def tasks_by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Tasks keyed by their parameter (``test_task[a]`` -> ``a``) or, unparametrized, by function name."""
    named = {}
    for task in report["tasks"]:
        task_id = task["task_id"]
        named[task_id.split("[", 1)[1][:-1] if "[" in task_id else task_id.rsplit("::", 1)[1]] = task
    return named


# --- 1. collection errors are never tolerated ---------------------------------------------------------------


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_collection_error_fails_a_run_whose_failures_are_tolerated(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makepyfile(
        test_broken="import a_module_that_does_not_exist_here\n",
        test_tasks=pattern_suite({"flaky": "PFP"}, marker="min_pass=0"),
    )
    result = pytester.runpytest(*xdist, "--continue-on-collection-errors", "--consistency-report=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*flaky* 2/3 * met min_pass 0, 1 failed", "*2 passed, 1 error, 1 tolerated*"])
    report = load_report(pytester)
    assert report["tasks"][0]["verdict"] == "pass"
    assert_one_story(result, report)


# --- 2. pytest-rerunfailures: the first attempt is the repetition --------------------------------------------

RERUN_SUITE = """
import pytest
from pathlib import Path

ATTEMPTS = Path(__file__).parent / "attempts"

@pytest.mark.repeat_consistency(n=4)
def test_flaky(consistency, request):
    ATTEMPTS.mkdir(exist_ok=True)
    seen = ATTEMPTS / request.node.name
    first = not seen.exists()
    seen.write_text("ran")
    consistency.record("first" if first else "rerun")
    assert consistency.repeat % 2 == 1 or not first, "even repetitions fail on their first attempt"
"""


def test_reruns_count_the_first_outcome_serially_and_under_xdist(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_rerunfailures")
    pytester.makepyfile(test_rerun=RERUN_SUITE)
    reports = []
    for name, xdist in (("serial.json", []), ("xdist.json", ["-n", "2"])):
        attempts = pytester.path / "attempts"
        if attempts.exists():
            for file in attempts.iterdir():
                file.unlink()
        result = pytester.runpytest(
            *xdist, "-p", "rerunfailures", "--reruns", "1", "--consistency-gap-max=10", f"--consistency-report={name}"
        )
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines(
            [
                "*test_rerun.py::test_flaky * 2/4 * fail",
                "consistency gap 50.0 pp * answer disagreement 0.0 pp",
                "gate --consistency-gap-max: consistency gap 50.0 pp > 10.0 pp  FAILED",
                "warning: a retry plugin (*) re-ran 2 repetition attempt(s)*first outcome*",
            ]
        )
        report = load_report(pytester, name)
        task = report["tasks"][0]
        assert task["outcomes"] == ["passed", "failed", "passed", "failed"]
        assert task["answers"] == ["first"] * 4
        assert [r["reruns"] for r in task["repetitions"]] == [0, 1, 0, 1]
        assert report["summary"]["consistency_gap_pp"] == pytest.approx(50.0)
        assert any("re-ran 2 repetition attempt" in warning for warning in report["summary"]["warnings"])
        assert_one_story(result, report)
        reports.append(without_timings(report))
    assert reports[0] == reports[1]


def test_a_rerun_teardown_error_counts_as_an_error(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_rerunfailures")
    pytester.makepyfile(
        test_teardown="""
        import pytest
        from pathlib import Path

        @pytest.fixture
        def session_cleanup(request, consistency):
            yield
            seen = Path(__file__).parent / request.node.name
            first = not seen.exists()
            seen.write_text("ran")
            if consistency.repeat == 2 and first:
                raise RuntimeError("cleanup failed")

        @pytest.mark.repeat_consistency(n=3, min_pass=0.5)
        def test_agent(session_cleanup, consistency):
            consistency.record("x")
        """
    )
    result = pytester.runpytest("-p", "rerunfailures", "--reruns", "1", "--consistency-report=report.json")
    assert result.ret == pytest.ExitCode.OK  # 2/3 >= min_pass 0.5
    result.stdout.fnmatch_lines(
        ["*test_agent * 2/3 * met min_pass 0.5, 1 failed", "1 of 3 repetitions failed in 1 task(s)*"]
    )
    report = load_report(pytester)
    assert report["tasks"][0]["outcomes"] == ["passed", "error", "passed"]
    assert_one_story(result, report)


# --- 3. incomplete tasks are in no figure, so a gate on them cannot pass -----------------------------------

SELECTABLE = """
import os
import pytest

ANSWERS = {"a": ["x", "x", "x"], "b": ["x", "y", "z"]}

@pytest.mark.parametrize("task", ["a", "b"])
@pytest.mark.repeat_consistency(n=3)
def test_task(task, consistency):
    consistency.record(ANSWERS[task][consistency.repeat - 1])
    assert os.environ.get("AGENT_FIXED") or not (task == "b" and consistency.repeat == 2)
"""


def assert_not_measurable(pytester: pytest.Pytester, result: pytest.RunResult) -> None:
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "tasks 0, nothing scored",
            "Mean@k n/a   pass^k n/a   pass@k n/a",
            "consistency gap n/a   answer disagreement n/a",
            "gate --answer-disagreement-max: answer disagreement: not measurable in this session*FAILED",
        ]
    )
    report = load_report(pytester)
    assert {t["verdict"] for t in report["tasks"]} == {"incomplete"}
    assert report["summary"]["answer_disagreement_pp"] is None
    assert report["summary"]["task_count"] == 0
    assert report["summary"]["gates"][0]["passed"] is False
    assert_one_story(result, report)


@pytest.mark.parametrize(
    "selection",
    [
        ["-k", "rep1"],
        ["--deselect", "test_sel.py::test_task[a-rep2]", "--deselect", "test_sel.py::test_task[b-rep3]"],
    ],
    ids=["k", "deselect"],
)
def test_selected_repetitions_leave_disagreement_unmeasurable(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, selection: list[str]
) -> None:
    monkeypatch.setenv("AGENT_FIXED", "1")
    pytester.makepyfile(test_sel=SELECTABLE)
    result = pytester.runpytest(*selection, "--answer-disagreement-max=0", "--consistency-report=report.json")
    assert_not_measurable(pytester, result)


def test_last_failed_leaves_disagreement_unmeasurable(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_sel=SELECTABLE)
    first = pytester.runpytest("-p", "cacheprovider")
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    monkeypatch.setenv("AGENT_FIXED", "1")  # the failed repetition passes when re-run alone
    result = pytester.runpytest(
        "-p", "cacheprovider", "--lf", "--answer-disagreement-max=0", "--consistency-report=report.json"
    )
    # The closing line names the gate that failed the run (it said "1 passed" while the exit status was 1).
    result.stdout.fnmatch_lines(
        ["run-last-failure: rerun previous 1 failure", "*= 1 passed, gate --answer-disagreement-max failed in *"]
    )
    assert_not_measurable(pytester, result)


def test_last_failed_without_failures_runs_and_scores_everything(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_FIXED", "1")
    pytester.makepyfile(test_sel=SELECTABLE)
    result = pytester.runpytest(
        "-p", "cacheprovider", "--lf", "--answer-disagreement-max=50", "--consistency-report=report.json"
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "consistency gap 0.0 pp * answer disagreement 50.0 pp",
            "gate --answer-disagreement-max: answer disagreement 50.0 pp <= 50.0 pp  ok",
        ]
    )


# --- 4. expected failures ---------------------------------------------------------------------------------


def test_non_strict_xfail_task_is_an_expected_failure_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_xfail="""
        import pytest

        @pytest.mark.xfail(reason="known agent bug", strict=False)
        @pytest.mark.repeat_consistency(n=3)
        def test_known_bug(consistency):
            consistency.record("x")
            assert consistency.repeat == 1
        """
    )
    result = pytester.runpytest("--consistency-gap-max=100", "--consistency-report=report.json")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*test_known_bug * 1/3 * xfail (expected failure)", "*2 xfailed, 1 xpassed*"])
    report = load_report(pytester)
    task = report["tasks"][0]
    assert task["verdict"] == "xfail" and task["outcomes"] == ["xpassed", "xfailed", "xfailed"]
    assert report["summary"]["task_count"] == 1  # scored: an expected failure is still a measured outcome
    assert_one_story(result, report)


def test_strict_xpass_is_a_failure_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_xpass="""
        import pytest

        @pytest.mark.xfail(reason="should still fail", strict=True)
        @pytest.mark.repeat_consistency(n=2)
        def test_fixed_by_accident(consistency):
            consistency.record("x")
        """
    )
    result = pytester.runpytest("--consistency-report=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*test_fixed_by_accident * 0/2 * fail", "*2 failed*"])
    report = load_report(pytester)
    assert report["tasks"][0]["verdict"] == "fail" and report["tasks"][0]["outcomes"] == ["failed", "failed"]
    assert_one_story(result, report)


# --- 5. runs that run no test -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode", ["--collect-only", "--setup-plan", "--setup-only", "--fixtures", "--fixtures-per-test", "--cache-show"]
)
def test_runs_without_tests_neither_gate_nor_overwrite_the_report(pytester: pytest.Pytester, mode: str) -> None:
    pytester.makeini(INI + "consistency_gap_max = 0\nanswer_disagreement_max = 0\nconsistency_report = report.json\n")
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PFP"}))
    previous = '{"previous": "report"}\n'
    (pytester.path / "report.json").write_text(previous)
    result = pytester.runpytest("-p", "cacheprovider", mode)
    assert result.ret == pytest.ExitCode.OK
    assert "= consistency =" not in result.stdout.str()
    assert "gate " not in result.stdout.str()
    assert (pytester.path / "report.json").read_text() == previous


# --- 6. hooks that raise and a report that cannot be written ---------------------------------------------

RAISING_SUMMARY_HOOK = """
def pytest_consistency_summary(summary, config):
    raise RuntimeError("dashboard is down")
"""


@pytest.mark.parametrize(("gate", "ret"), [("100", 1), ("0", 1)])
def test_a_raising_summary_hook_loses_nothing_and_fails_the_run(pytester: pytest.Pytester, gate: str, ret: int) -> None:
    """An error fails the run, as ``pytest-consistency merge`` of its report would: one story."""
    pytester.makeconftest(RAISING_SUMMARY_HOOK)
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PPP"}, {"a": ["x", "x", "y"]}))
    result = pytester.runpytest(f"--answer-disagreement-max={gate}", "--consistency-report=report.json")
    assert result.ret == ret
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(
        [
            "gate --answer-disagreement-max: answer disagreement 100.0 pp *",
            "error: a pytest_consistency_summary hook raised RuntimeError: dashboard is down*",
            "report: *report.json",
            "*= 3 passed*1 consistency error*",
        ]
    )
    report = load_report(pytester)
    assert any("dashboard is down" in error for error in report["summary"]["errors"])
    assert_one_story(result, report)


def test_a_raising_equivalence_hook_leaves_the_task_undetermined_and_fails(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        def pytest_consistency_answers_equivalent(left, right, task_id):
            if "boom" in task_id:
                raise ValueError("cannot compare these")
        """
    )
    pytester.makepyfile(
        test_tasks=pattern_suite({"boom": "PPP", "fine": "PPP"}, {"boom": [1, 2, 1], "fine": [3, 3, 3]})
    )
    result = pytester.runpytest("--answer-disagreement-max=100", "--consistency-report=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*[[]boom[]] * 3/3    error  *  pass",
            "*[[]fine[]] * 3/3        1  *  pass",
            "consistency gap 0.0 pp * answer disagreement n/a",
            "gate --answer-disagreement-max: answer disagreement: not measurable in this session*FAILED",
            "error: test_tasks.py::test_task[[]boom[]]: pytest_consistency_answers_equivalent raised ValueError: "
            "cannot compare these*",
            "*= 6 passed*",
        ]
    )
    report = load_report(pytester)
    assert report["summary"]["answer_disagreement_pp"] is None  # one task's agreement is unknown: so is the share
    tasks = tasks_by_name(report)
    assert tasks["boom"]["distinct_answers"] is None and tasks["boom"]["answers_disagree"] is None
    assert tasks["boom"]["errors"] and "cannot compare these" in tasks["boom"]["errors"][0]
    assert tasks["fine"]["errors"] == [] and tasks["fine"]["distinct_answers"] == 1
    assert any("cannot compare these" in error for error in report["summary"]["errors"])
    assert_one_story(result, report)


@pytest.mark.parametrize("where", ["directory", "under-a-file"])
@pytest.mark.parametrize(("gate", "ret"), [("80", 1), ("10", 1)])
def test_an_unwritable_report_path_is_an_error_line_not_a_crash(
    pytester: pytest.Pytester, where: str, gate: str, ret: int
) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PPFP"}, marker="min_pass=0.5"))
    if where == "directory":
        (pytester.path / "taken").mkdir()
        target = "taken"
    else:
        (pytester.path / "plain.txt").write_text("not a directory\n")
        target = "plain.txt/report.json"
    result = pytester.runpytest(f"--consistency-gap-max={gate}", f"--consistency-report={target}")
    assert result.ret == ret
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output
    result.stdout.fnmatch_lines([f"error: cannot write the report to *{target} (*)*", "*3 passed, 1 tolerated*"])
    assert "report: " not in result.stdout.str()
    assert not [p for p in pytester.path.rglob("*.tmp")]


# --- 7. a session stopped early ---------------------------------------------------------------------------

STOPPING = """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_done(consistency):
    consistency.record("x")

@pytest.mark.repeat_consistency(n=3)
def test_stopped(consistency):
    consistency.record("x")
    if consistency.repeat == 2:
        raise KeyboardInterrupt

@pytest.mark.repeat_consistency(n=3)
def test_never_reached(consistency):
    consistency.record("x")
"""


def test_interrupted_session_never_passes_its_gates(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_stop=STOPPING)
    result = pytester.runpytest_subprocess("--consistency-gap-max=100", "--consistency-report=report.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*test_stopped * 1/1 * incomplete",
            "tasks 1, repetitions n=3, scored at k=3 (session interrupted: partial results)",
        ]
    )
    report = load_report(pytester)
    assert report["summary"]["gates"][0]["passed"] is True  # the gap of the finished task is within 100 pp ...
    assert report["summary"]["passed"] is False  # ... but an interrupted session has not passed
    assert report["summary"]["run"]["interrupted"] is True
    tasks = tasks_by_name(report)
    assert tasks["test_done"]["verdict"] == "pass"
    assert tasks["test_stopped"]["verdict"] == "incomplete"
    assert tasks["test_stopped"]["outcomes"] == ["passed", "not run", "not run"]
    assert tasks["test_never_reached"]["verdict"] == "incomplete"
    assert tasks["test_never_reached"]["outcomes"] == ["not run"] * 3
    assert report["summary"]["task_count"] == 1
    assert_one_story(result, report)


# --- 8. more ways to stop early or to print less ----------------------------------------------------------


def test_exitfirst_leaves_tasks_incomplete_and_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PFP", "b": "PPP"}, marker="min_pass=0"))
    result = pytester.runpytest("-x", "--consistency-gap-max=100", "--consistency-report=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*[[]a[]] * 1/2 * incomplete",
            "*[[]b[]] * - * incomplete",
            "tasks 0, nothing scored (session interrupted: partial results)",
            "gate --consistency-gap-max: consistency gap: not measurable in this session*FAILED",
        ]
    )
    report = load_report(pytester)
    assert report["summary"]["run"]["interrupted"] is True
    assert report["summary"]["task_count"] == 0
    tasks = tasks_by_name(report)
    assert tasks["a"]["verdict"] == "incomplete" and tasks["a"]["outcomes"] == ["passed", "failed", "not run"]
    assert tasks["b"]["verdict"] == "incomplete" and tasks["b"]["outcomes"] == ["not run"] * 3
    assert_one_story(result, report)


def test_exitfirst_after_a_tolerated_failure_does_not_pass_a_run_it_cut_short(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PPF", "b": "PPP"}, marker="min_pass=0"))
    result = pytester.runpytest("-x", "--consistency-gap-max=100", "--consistency-report=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # task b never ran: tolerating a's failure would hide that
    result.stdout.fnmatch_lines(
        [
            "*[[]a[]] * 2/3 * met min_pass 0, 1 failed",
            "*[[]b[]] * - * incomplete",
            "tasks 1, * (session interrupted: partial results)",
            "gate --consistency-gap-max: consistency gap 66.7 pp <= 100.0 pp  ok",
            "1 failed repetition(s) within min_pass, not tolerated: the session stopped early",
        ]
    )
    assert "that met their min_pass" not in result.stdout.str()
    report = load_report(pytester)
    assert report["summary"]["run"]["interrupted"] is True
    assert tasks_by_name(report)["b"]["outcomes"] == ["not run"] * 3
    assert_one_story(result, report)


def test_pytest_exit_mid_task_is_reported_as_stopped_early(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_exit="""
        import pytest

        @pytest.mark.repeat_consistency(n=3)
        def test_done(consistency):
            consistency.record("x")

        @pytest.mark.repeat_consistency(n=3)
        def test_cut(consistency):
            if consistency.repeat == 2:
                pytest.exit("enough for today", returncode=0)
        """
    )
    result = pytester.runpytest("--consistency-report=report.json")
    # pytest.exit asked for 0, but an interrupted session never passes: test_cut's last repetitions never ran.
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*test_cut * 1/1 * incomplete", "tasks 1, * (session interrupted: partial results)"])
    report = load_report(pytester)
    assert report["summary"]["run"]["interrupted"] is True
    assert tasks_by_name(report)["test_cut"]["outcomes"] == ["passed", "not run", "not run"]
    assert_one_story(result, report)


@pytest.mark.parametrize("output", [["-p", "no:terminal"], ["-qq"]], ids=["no-terminal", "qq"])
def test_less_output_tells_the_same_story(pytester: pytest.Pytester, output: list[str]) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PFP"}, marker="min_pass=0"))
    result = pytester.runpytest(*output, "--consistency-gap-max=10", "--consistency-report=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    if "-qq" in output:
        result.stdout.fnmatch_lines(["gate --consistency-gap-max: consistency gap 66.7 pp > 10.0 pp  FAILED"])
        assert "passes  answers" not in result.stdout.str()  # -qq: no task table
    report = load_report(pytester)
    assert report["summary"]["gates"][0]["passed"] is False
    assert_one_story(result, report)


def test_every_repetition_skipped_with_a_gate_set_fails_as_not_measurable(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_skip="""
        import pytest

        @pytest.mark.repeat_consistency(n=3)
        def test_rate_limited(consistency):
            pytest.skip("rate limited")
        """
    )
    result = pytester.runpytest("--consistency-gap-max=100", "--consistency-report=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*test_rate_limited *-        -  -  *skipped",
            "gate --consistency-gap-max: consistency gap: not measurable in this session*FAILED",
            "*3 skipped*",
        ]
    )
    report = load_report(pytester)
    assert report["tasks"][0]["verdict"] == "skipped"
    assert_one_story(result, report)


@pytest.mark.parametrize("how", ["pytest.exit('stop', returncode=0)", "raise KeyboardInterrupt"])
def test_a_session_cut_short_mid_repetition_leaves_no_http_patch_behind(pytester: pytest.Pytester, how: str) -> None:
    """Teardown never runs when the protocol is cut short: the repetition's cassette scope must still close, or
    vcrpy's patches outlive the session in this process and break every later HTTP call."""
    import httpx2
    import vcr.patch

    pytester.makepyfile(
        test_cut=f"""
        import pytest

        @pytest.mark.repeat_consistency(n=3)
        def test_cut(consistency):
            if consistency.repeat == 2:
                {how}
        """
    )
    result = pytester.runpytest(no_reraise_ctrlc=True)  # in-process: this process's patches are what is checked
    assert result.ret != pytest.ExitCode.OK
    assert httpx2.HTTPTransport.handle_request is vcr.patch._Httpx2HttpTransport_handle_request  # unpatched
