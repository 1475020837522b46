"""Real inner pytest sessions (pytester) with marked tests whose outcomes follow a known pattern."""

from __future__ import annotations

from pathlib import Path

import pytest
from suites import consistency_section, load_report, pattern_suite, published_patterns, session_only, without_timings


@pytest.fixture
def published(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_published=pattern_suite(published_patterns(), marker="min_pass=0"))
    return pytester


def test_published_gap_is_reported_and_gated(published: pytest.Pytester) -> None:
    result = published.runpytest("--consistency-gap-max=12", "--consistency-report=report.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*= consistency =*",
            "tasks 168, repetitions n=5, scored at k=5",
            "Mean@5 77.4 % [[]74.4, 80.2]   pass^5 53.0 % [[]44.8, 61.4]",
            "pass@5 100.0 % [[]97.6, 100.0]",
            "consistency gap 24.4 pp [[]18.2, 31.6]   answer disagreement n/a",
            "intervals: 95 % confidence, for this suite of tasks (repetition noise only)",
            "gate --consistency-gap-max: consistency gap 24.4 pp, one-sided bounds [[]*] > 12.0 pp  FAILED "
            "(level 0.05)",
        ]
    )
    summary = load_report(published)["summary"]
    assert summary["repeat"] == 5 and summary["k"] == 5 and summary["task_count"] == 168
    assert summary["mean_at_k"] == pytest.approx(650 / 840)
    assert summary["pass_hat_k"] == pytest.approx(89 / 168)
    assert summary["consistency_gap_pp"] == pytest.approx((650 / 840 - 89 / 168) * 100)
    (gate,) = summary["gates"]
    bounds = gate.pop("interval")
    assert 12.0 < bounds["low"] <= summary["consistency_gap_pp"] <= bounds["high"]  # evidence that it exceeds 12
    assert gate == {
        "name": "consistency_gap",
        "option": "--consistency-gap-max",
        "threshold": 12.0,
        "direction": "max",
        "unit": "pp",
        "value": summary["consistency_gap_pp"],
        "on": "bound",
        "state": "fail",
        "passed": False,
        "level": 0.05,
        "family": 1,
        "plan_n": None,
        "advice": None,
    }
    assert summary["passed"] is False


@pytest.mark.parametrize(
    ("threshold", "counted", "state", "ret"),
    [
        ("40", "fail", "pass", 0),  # shown below 40
        ("24.5", "pass", "undecided", 0),  # the bounds hold it: no evidence either way
        ("24.5", "fail", "undecided", 1),  # ... which fails the run when undecided counts as a failure
        ("24.4", "pass", "undecided", 0),  # on the estimate (the point rule failed this one)
        ("12", "pass", "fail", 1),  # shown above 12
    ],
)
def test_gate_exit_status_follows_the_threshold_and_the_evidence(
    published: pytest.Pytester, threshold: str, counted: str, state: str, ret: int
) -> None:
    result = published.runpytest(
        "-q",
        f"--consistency-gap-max={threshold}",
        f"--consistency-inconclusive={counted}",
        "--consistency-report=r.json",
    )
    assert result.ret == ret
    assert load_report(published, "r.json")["summary"]["gates"][0]["state"] == state


def test_xdist_gives_the_same_summary_and_report(published: pytest.Pytester) -> None:
    serial = published.runpytest("--consistency-gap-max=24.5", "--consistency-report=serial.json")
    parallel = published.runpytest("-n", "2", "--consistency-gap-max=24.5", "--consistency-report=xdist.json")
    assert serial.ret == parallel.ret == 0
    assert without_timings(load_report(published, "serial.json")) == without_timings(
        load_report(published, "xdist.json")
    )

    def without_path(result: pytest.RunResult) -> list[str]:
        return [line for line in consistency_section(result) if not session_only(line)]

    assert without_path(serial) == without_path(parallel)


PATTERNS = {"stable": "PPPPP", "flaky": "PPFPF", "broken": "FFFFF"}
ANSWERS = {
    "stable": ["a", " a ", "a", "a\n", "a"],
    "flaky": [{"x": 1, "y": 2}, {"y": 2, "x": 1}, {"x": 3}, {"x": 1, "y": 2}, {"x": 1, "y": 2}],
    "broken": ["z"] * 5,
}


def test_task_rows_report_and_default_verdict(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=pattern_suite(PATTERNS, ANSWERS))
    result = pytester.runpytest("--consistency-report=report.json")
    assert result.ret == 1  # default min_pass=1.0: failed repetitions fail the run as in plain pytest
    result.stdout.fnmatch_lines(
        [
            "task * passes  answers  pass rate 95 %  verdict",
            "test_tasks.py::test_task[[]stable[]] * 5/5        1  *  pass",
            "test_tasks.py::test_task[[]flaky[]] * 3/5        2  *  fail",
            "test_tasks.py::test_task[[]broken[]] * 0/5        1  *  fail",
            "Mean@5 53.3 % * pass^5 33.3 % *",
            "pass@5 66.7 %*",
            "consistency gap 20.0 pp * answer disagreement 33.3 pp",
            "gates: none set",
        ]
    )
    assert all(len(line) <= 80 for line in consistency_section(result) if not line.startswith("report: "))
    report = load_report(pytester)
    flaky = report["tasks"][1]
    assert flaky["task_id"] == "test_tasks.py::test_task[flaky]"
    assert flaky["n"] == 5 and flaky["passes"] == 3 and flaky["distinct_answers"] == 2
    assert flaky["outcomes"] == ["passed", "passed", "failed", "passed", "failed"]
    assert flaky["answers"] == ANSWERS["flaky"]
    assert [t["task_id"].split("[")[1] for t in report["tasks"]] == ["stable]", "flaky]", "broken]"]


def test_quiet_keeps_the_tasks_that_need_a_look_and_very_quiet_only_the_overall_lines(
    pytester: pytest.Pytester,
) -> None:
    """-q hid the whole task table, the failed and flaky tasks with it; pytest's own -q keeps its failures."""
    pytester.makepyfile(test_tasks=pattern_suite(PATTERNS, ANSWERS))
    quiet = pytester.runpytest("-q").stdout
    quiet.fnmatch_lines(
        [
            "task * passes  answers*",
            "*flaky* 3/5 *",
            "*broken* 0/5 *",
            "(-q: 1 task(s) that need no look not shown)",
            "consistency gap 20.0 pp * answer disagreement 33.3 pp",
        ]
    )
    assert "stable" not in quiet.str().split("== consistency ==")[-1]
    very_quiet = pytester.runpytest("-qq").stdout
    assert "passes  answers" not in very_quiet.str()
    very_quiet.fnmatch_lines(["consistency gap 20.0 pp * answer disagreement 33.3 pp"])


def test_min_pass_tolerates_failed_repetitions_but_keeps_them_visible(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"flaky": "PPPPF", "stable": "PPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest("--consistency-report=report.json")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*flaky* 4/5 * met min_pass 0.8, 1 failed",
            "1 of 5 repetitions failed in 1 task(s) that met their min_pass (tolerated*",
            "*9 passed, 1 tolerated*",
        ]
    )
    assert load_report(pytester)["tasks"][0]["outcomes"][-1] == "failed"


def test_min_pass_option_applies_to_markers_without_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"flaky": "PPPFF"}))
    assert pytester.runpytest("--consistency-min-pass=0.6").ret == 0
    assert pytester.runpytest("--consistency-min-pass=0.8").ret == 1


def test_gate_fails_a_session_whose_tests_all_passed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PPPPP", "b": "PPPPP"}, {"a": [1, 1, 1, 1, 2], "b": [0] * 5}))
    result = pytester.runpytest("--answer-disagreement-max=0", "--pass-hat-k-min=100")
    assert result.ret == 1
    # answers that differed are certain evidence of disagreement above 0; ten passes cannot show pass^k = 100 %
    result.stdout.fnmatch_lines(
        [
            "gate --answer-disagreement-max: answer disagreement 50.0 pp, one-sided bounds [[]*] > 0.0 pp  FAILED*",
            "gate --pass-hat-k-min: pass hat k 100.0 %, one-sided bounds [[]*] hold 100.0 %  UNDECIDED*",
            "*10 passed*",
        ]
    )


def test_gate_without_anything_to_measure_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PPP"}))
    result = pytester.runpytest("--answer-disagreement-max=10")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*answer disagreement: not measurable in this session*FAILED*"])


def test_repetitions_are_items_with_stable_ids_and_fresh_fixtures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_ids="""
        import pytest

        SEEN = []

        @pytest.fixture
        def fresh():
            return []

        @pytest.mark.repeat_consistency(n=3)
        def test_f(fresh, consistency):
            fresh.append(consistency.repeat)
            assert fresh == [consistency.repeat] and consistency.n == 3
            assert consistency.task_id == "test_ids.py::test_f"

        class TestGroup:
            @pytest.mark.parametrize("x", ["a b", "c"])
            @pytest.mark.repeat_consistency(2)
            def test_m(self, x, consistency):
                consistency.record(x)
        """
    )
    result = pytester.runpytest("--collect-only", "-q", "--consistency-repeat=2", "--strict-markers")
    result.stdout.fnmatch_lines(
        [
            "test_ids.py::test_f[[]rep1[]]",
            "test_ids.py::test_f[[]rep2[]]",
            "test_ids.py::TestGroup::test_m[[]a b-rep1[]]",
            "test_ids.py::TestGroup::test_m[[]a b-rep2[]]",
            "test_ids.py::TestGroup::test_m[[]c-rep1[]]",
            "test_ids.py::TestGroup::test_m[[]c-rep2[]]",
        ]
    )
    assert "rep3" not in result.stdout.str()
    result = pytester.runpytest("--strict-markers", "-k", "rep1 or rep2 or rep3", "--consistency-report=report.json")
    assert result.ret == 0
    tasks = {t["task_id"]: t for t in load_report(pytester)["tasks"]}
    assert tasks["test_ids.py::test_f"]["passes"] == 3
    assert tasks["test_ids.py::TestGroup::test_m[a b]"]["answers"] == ["a b", "a b"]


def test_selecting_one_repetition_leaves_the_task_incomplete(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=pattern_suite({"a": "PPP"}))
    result = pytester.runpytest("-k", "rep2", "--consistency-report=report.json")
    assert result.ret == 0
    task = load_report(pytester)["tasks"][0]
    assert task["verdict"] == "incomplete" and task["outcomes"] == ["passed"]
    assert load_report(pytester)["summary"]["task_count"] == 0


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("n=0", "n=0 must be at least 1"),
        ("n=-1", "n=-1 must be at least 1"),
        ("n='five'", "n='five' is not a whole number"),
        ("n=3, k=4", "k=4 is larger than n=3"),
        ("min_pass=2", "min_pass=2 must be within*"),
    ],
)
def test_invalid_marker_is_a_collection_error_naming_test_and_argument(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    pytester.makepyfile(
        test_bad=f"""
        import pytest

        @pytest.mark.repeat_consistency({marker})
        def test_agent():
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"*test_bad.py::test_agent: @pytest.mark.repeat_consistency: {message}*"])
    assert "Traceback" not in result.stdout.str()


def test_async_tests_repeat_under_pytest_asyncio(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_async="""
        import asyncio
        import pytest

        @pytest.mark.asyncio
        @pytest.mark.repeat_consistency(n=3)
        async def test_agent(consistency):
            await asyncio.sleep(0)
            consistency.record("ok")
        """
    )
    result = pytester.runpytest("-p", "asyncio", "--consistency-report=report.json")
    assert result.ret == 0
    result.assert_outcomes(passed=3)
    assert load_report(pytester)["tasks"][0]["answers"] == ["ok", "ok", "ok"]


def test_unmarked_test_gets_a_single_repetition_handle(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_plain="""
        def test_helper(consistency):
            assert (consistency.repeat, consistency.n) == (1, 1)
            consistency.record({"x": 1})
        """
    )
    result = pytester.runpytest("--consistency-report=report.json")
    assert result.ret == 0
    assert load_report(pytester)["tasks"] == []


@pytest.mark.parametrize("marked", [False, True], ids=["unmarked-session", "with-a-marked-task"])
def test_the_handle_belongs_to_the_test_that_runs_however_it_is_asked_for(
    pytester: pytest.Pytester, marked: bool
) -> None:
    """The ``consistency`` fixture does not ask for ``request`` (a cost per repetition): it still hands each test its
    own handle, named ``consistency`` or asked for by ``request.getfixturevalue`` or through a fixture of the
    user's, in a session that has no marked task (no repetition role tracks the running test) as in one that has."""
    task = (
        """
        @pytest.mark.repeat_consistency(n=2)
        def test_task(consistency):
            assert consistency.task_id.endswith("::test_task") and consistency.n == 2
            consistency.record("a")
        """
        if marked
        else ""
    )
    pytester.makepyfile(
        test_handles=f"""
        import pytest

        @pytest.fixture
        def handle(consistency):
            return consistency

        def test_named(consistency):
            assert consistency.task_id.endswith("::test_named") and consistency.n == 1

        def test_dynamic(request):
            handle = request.getfixturevalue("consistency")
            assert handle.task_id.endswith("::test_dynamic") and handle.n == 1
            handle.record({{"x": 1}})

        def test_through_a_fixture(handle):
            assert handle.task_id.endswith("::test_through_a_fixture")

        def test_zz_after():
            from pytest_consistency.capture.active import current

            assert current() is None  # no handle outlives its test
        {task}"""
    )
    result = pytester.runpytest("--consistency-report=report.json", "-p", "no:randomly")
    result.assert_outcomes(passed=6 if marked else 4)
    assert [t["task_id"] for t in load_report(pytester)["tasks"]] == (["test_handles.py::test_task"] if marked else [])
    # Only asked for dynamically: no collected test names it, and the handle is still the running test's.
    result = pytester.runpytest("--consistency-report=report.json", "-p", "no:randomly", "-k", "dynamic or after")
    result.assert_outcomes(passed=2)


def test_record_twice_warns_and_keeps_last_and_rejects_non_json(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_rec="""
        import pytest

        @pytest.mark.repeat_consistency(n=2)
        def test_twice(consistency):
            consistency.record("first")
            consistency.record("second")

        @pytest.mark.repeat_consistency(n=1)
        def test_object(consistency):
            consistency.record(object())
        """
    )
    result = pytester.runpytest("--consistency-report=report.json")
    result.stdout.fnmatch_lines(["*TypeError: consistency.record() needs a JSON-serialisable answer*"])
    result.stdout.fnmatch_lines(["*ConsistencyWarning*record() called again; keeping the last answer*"])
    tasks = load_report(pytester)["tasks"]
    assert tasks[0]["answers"] == ["second", "second"]


def test_skips_errors_and_xfails_count_as_documented(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_mixed="""
        import pytest

        @pytest.fixture
        def broken(consistency):
            if consistency.repeat == 2:
                raise RuntimeError("fixture broke")

        @pytest.mark.repeat_consistency(n=3)
        def test_setup_error(broken, consistency):
            consistency.record("a")

        @pytest.mark.repeat_consistency(n=3, k=2)
        def test_one_skip(consistency):
            if consistency.repeat == 3:
                pytest.skip("rate limited")
            consistency.record("b")

        @pytest.mark.repeat_consistency(n=3)
        def test_one_skip_k3(consistency):
            if consistency.repeat == 3:
                pytest.skip("rate limited")

        @pytest.mark.skip(reason="not today")
        @pytest.mark.repeat_consistency(n=2)
        def test_all_skipped():
            pass

        @pytest.mark.xfail(strict=False)
        @pytest.mark.repeat_consistency(n=2)
        def test_xfail(consistency):
            assert consistency.repeat == 1
        """
    )
    result = pytester.runpytest("--consistency-report=report.json")
    assert "that met their min_pass" not in result.stdout.str()  # a skipped repetition is not a tolerated failure
    tasks = {t["task_id"].split("::")[1]: t for t in load_report(pytester)["tasks"]}
    assert tasks["test_setup_error"]["outcomes"] == ["passed", "error", "passed"]
    assert tasks["test_setup_error"]["verdict"] == "fail"
    assert tasks["test_setup_error"]["distinct_answers"] == 2  # the errored repetition recorded nothing
    assert tasks["test_one_skip"]["verdict"] == "pass" and tasks["test_one_skip"]["scored"] == 2
    assert tasks["test_one_skip_k3"]["verdict"] == "incomplete"
    assert tasks["test_all_skipped"]["verdict"] == "skipped"
    assert tasks["test_xfail"]["outcomes"] == ["xpassed", "xfailed"]
    assert tasks["test_xfail"]["passes"] == 1
    summary = load_report(pytester)["summary"]
    assert summary["task_count"] == 3  # setup_error, one_skip, xfail


def test_report_is_written_when_the_session_is_interrupted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_stop="""
        import pytest

        @pytest.mark.repeat_consistency(n=3)
        def test_agent(consistency):
            consistency.record("x")
            if consistency.repeat == 2:
                raise KeyboardInterrupt
        """
    )
    result = pytester.runpytest_subprocess("--consistency-report=out/report.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    report = load_report(pytester, "out/report.json")
    assert report["summary"]["run"]["interrupted"] is True
    assert report["tasks"][0]["verdict"] == "incomplete"
    assert report["tasks"][0]["outcomes"][0] == "passed"
    assert not list(Path(pytester.path / "out").glob("*.tmp"))


def test_custom_equivalence_and_normalisation_hooks(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        def pytest_consistency_normalize_answer(answer, task_id):
            if isinstance(answer, list):
                return sorted(answer)

        def pytest_consistency_answers_equivalent(left, right, task_id):
            if isinstance(left, float) and isinstance(right, float):
                return abs(left - right) <= 0.01
        """
    )
    pytester.makepyfile(
        test_hooks=pattern_suite(
            {"num": "PPP", "names": "PPP", "text": "PPP"},
            {
                "num": [1.0, 1.005, 0.999],
                "names": [["b", "a"], ["a", "b"], ["a", "b"]],
                "text": ["x", "y", "x"],
            },
        )
    )
    for args in ([], ["-n", "2"]):
        result = pytester.runpytest(*args, "--consistency-report=report.json")
        tasks = {t["task_id"].split("[")[1][:-1]: t for t in load_report(pytester)["tasks"]}
        assert {name: t["distinct_answers"] for name, t in tasks.items()} == {"num": 1, "names": 1, "text": 2}
        assert "warning" not in result.stdout.str()


def test_equivalence_hook_the_controller_cannot_see_is_warned_about(pytester: pytest.Pytester) -> None:
    sub = pytester.mkpydir("sub")
    (sub / "conftest.py").write_text(
        "def pytest_consistency_answers_equivalent(left, right, task_id):\n    return True\n"
    )
    (sub / "test_sub.py").write_text(pattern_suite({"a": "PP"}, {"a": ["x", "y"]}))
    result = pytester.runpytest("-n", "2", "-p", "no:randomly")
    result.stdout.fnmatch_lines(["warning: pytest_consistency_answers_equivalent is implemented in *sub*conftest.py*"])
