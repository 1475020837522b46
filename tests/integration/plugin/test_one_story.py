"""One story in every output: exit status, closing line, summary, report, JUnit, Markdown, HTML and ``merge``.

Each test tries to make two outputs disagree about a run: a broken setup absorbed by ``min_pass`` as if it were the
agent's failure, a failed gate behind a green closing line, a partial run that calls a failure "tolerated", a
retry plugin hiding a first failure, a replay mismatch reported as key drift, tokens that change on replay.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Step
from stories import closing_line
from suites import RETRY_PLUGIN, cli, load_report, pattern_suite, run_recorded

AGENT = """
import os, pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_task(pinned_client, consistency):
    prompt = "do the task"
    if os.environ.get("CHANGED_REP") == str(consistency.repeat):
        prompt = "a prompt that was never recorded"
    reply = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": prompt}])
    answer = reply.choices[0].message.content
    consistency.record(answer)
    assert "risk" in answer
"""
RED = "\x1b[31m"


def cassette(pytester: pytest.Pytester, repeat: int) -> Path:
    return pytester.path / "cassettes" / "test_agent" / "test_task" / f"rep-{repeat}.yaml"


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake: FakeOpenAI) -> pytest.Pytester:
    fake.script(*[Step(text="the risk is low")] * 3)
    pytester.makepyfile(test_agent=AGENT)
    assert run_recorded(pytester, fake.base_url, "once").ret == 0
    fake.reset()
    return pytester


def replay(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    return run_recorded(pytester, fake.base_url, "none", "--junitxml=junit.xml", "--consistency-md=summary.md", *args)


def junit_cases(pytester: pytest.Pytester) -> dict[str, ET.Element]:
    root = ET.parse(pytester.path / "junit.xml").getroot()
    return {str(tc.get("name")): tc for tc in root.iter("testcase")}


def assert_infrastructure_failure(pytester: pytest.Pytester, result: pytest.RunResult, repeat: int, why: str) -> None:
    """The repetition's failure is the setup's: never tolerated, and every output says so."""
    out = result.stdout.str()
    assert result.ret == 1, out
    assert "TOLERATED" not in out and "tolerated by min_pass" not in out
    data = load_report(pytester)
    task = data["tasks"][0]
    assert data["summary"]["passed"] is False and task["verdict"] == "error"
    assert why in str(task["repetitions"][repeat - 1]["infrastructure"])
    assert any(why in error for error in data["summary"]["errors"])
    assert "task in error" in closing_line(result)
    case = junit_cases(pytester)[f"test_task[rep{repeat}]"]
    assert case.find("flakyFailure") is None and case.find("flakyError") is None
    assert case.find("failure") is not None or case.find("error") is not None
    markdown = (pytester.path / "summary.md").read_text()
    assert "❌ failed" in markdown and "in error" in markdown and "tolerated by" not in markdown
    merged = cli("merge", "report.json", "-o", "merged.json", cwd=pytester.path)
    assert merged.returncode == 1, merged.stdout + merged.stderr


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_corrupt_cassette_is_never_tolerated(recorded: pytest.Pytester, fake: FakeOpenAI, workers: list[str]) -> None:
    cassette(recorded, 2).write_text("interactions: [oops", encoding="utf-8")
    result = replay(recorded, fake, *workers)
    assert_infrastructure_failure(recorded, result, 2, "cassette")


def test_a_replay_mismatch_is_never_tolerated_and_is_not_key_drift(
    recorded: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHANGED_REP", "2")
    result = replay(recorded, fake)
    assert_infrastructure_failure(recorded, result, 2, "replay mismatch")
    task = load_report(recorded)["tasks"][0]
    assert "key" not in task["drift"]["kinds"], task["drift"]  # the placeholder key of replay mode is no route
    assert fake.requests == []


def test_a_normalize_hook_that_raises_is_not_the_agents_failure(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    recorded.makeconftest(
        """
import pytest

def pytest_consistency_normalize_answer(answer, task_id):
    import pytest_consistency.capture.active as r
    if r.current().repeat == 3:
        raise KeyError("no field 'total'")
    return answer
"""
    )
    result = replay(recorded, fake)
    assert_infrastructure_failure(recorded, result, 3, "normalize_answer raised")
    assert "no field 'total'" in result.stdout.str()


def test_a_refused_token_budget_call_is_never_tolerated(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(*[Step(text="risk")] * 3)
    pytester.makepyfile(test_agent=AGENT)
    result = run_recorded(
        pytester,
        fake.base_url,
        "off",
        "--consistency-token-budget=5",
        "--junitxml=junit.xml",
        "--consistency-md=summary.md",
    )
    assert_infrastructure_failure(pytester, result, 2, "token budget")


# --- the closing line and JUnit name every reason a run failed ------------------------------------------------


def test_a_failed_gate_turns_the_closing_line_red_and_names_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "PPPPF", "b": "PPPPP"}, marker="min_pass=0.8"))
    result = pytester.runpytest("--consistency-gap-max=0", "--color=yes", "--junitxml=junit.xml")
    assert result.ret == 1
    line = closing_line(result)
    assert "gate --consistency-gap-max failed" in line and line.lstrip().startswith(RED), repr(line)
    cases = junit_cases(pytester)
    assert cases["gates"].find("failure") is not None


def test_an_equivalence_hook_that_raised_fails_a_junit_testcase(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
def pytest_consistency_answers_equivalent(left, right, task_id):
    raise RuntimeError("cannot compare")
"""
    )
    pytester.makepyfile(pattern_suite({"a": "PPP"}, answers={"a": ["x", "y", "x"]}))
    result = pytester.runpytest("--junitxml=junit.xml", "--color=yes", "--consistency-report=report.json")
    assert result.ret == 1
    line = closing_line(result)
    assert "consistency error" in line and line.lstrip().startswith(RED), repr(line)
    run = junit_cases(pytester)["run"]
    failure = run.find("failure")
    assert failure is not None and "cannot compare" in (failure.text or "")


def test_pytest_exit_mid_task_fails_a_junit_testcase(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    if consistency.repeat == 2:
        pytest.exit("stop here")
"""
    )
    result = pytester.runpytest("--junitxml=junit.xml")
    assert result.ret != 0
    run = junit_cases(pytester)["run"]
    failure = run.find("failure")
    assert failure is not None and "interrupted" in (failure.text or "")


@pytest.mark.parametrize(
    "pattern, min_pass, selection, failing",
    [
        # The failure comes once the task's pass is decided (3 of 5 passed), and -x stops the run there.
        ("PPPFP", "0.6", ["-x"], "rep4"),
        # Only two repetitions selected: the task can never be scored, though one pass already meets min_pass=0.2.
        ("PFPPP", "0.2", ["-k", "rep1 or rep2"], "rep2"),
    ],
)
def test_a_partial_run_calls_its_failures_failed_everywhere(
    pytester: pytest.Pytester, pattern: str, min_pass: str, selection: list[str], failing: str
) -> None:
    pytester.makepyfile(pattern_suite({"a": pattern}, marker=f"min_pass={min_pass}"))
    result = pytester.runpytest("-rA", "--junitxml=junit.xml", *selection)
    out = result.stdout.str()
    assert result.ret == 1
    short = out[out.index("short test summary info") :]
    assert "TOLERATED" not in short, out
    result.stdout.fnmatch_lines([f"FAILED *test_task[[]a-{failing}[]]*"])
    assert "1 failed" in closing_line(result)
    assert junit_cases(pytester)[f"test_task[a-{failing}]"].find("failure") is not None


# --- adaptive mode and plugin-refused repetitions leave no stray teardown error --------------------------------


XFAIL_TASK = """
import pytest

@pytest.mark.xfail(reason="known bad")
@pytest.mark.repeat_consistency(n=5)
def test_known_bad(consistency):
    assert False

@pytest.mark.repeat_consistency(n=5)
def test_good(consistency):
    assert True
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_adaptive_curtailment_has_no_teardown_error(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makepyfile(XFAIL_TASK)
    full = pytester.runpytest("--junitxml=full.xml", *workers)
    adaptive = pytester.runpytest("--consistency-adaptive", "--junitxml=adaptive.xml", *workers)
    assert "KeyError" not in adaptive.stdout.str(), adaptive.stdout.str()
    assert adaptive.ret == full.ret == 0
    root = ET.parse(pytester.path / "adaptive.xml").getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None and suite.get("errors") == "0"


def test_a_repetition_the_plugin_refuses_at_setup_has_one_error_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.repeat_consistency(n=2)
@pytest.mark.repeat_consistency(n=2)
def test_twice(consistency):
    pass
"""
    )
    result = pytester.runpytest()
    out = result.stdout.str()
    assert "KeyError" not in out and "applied 2 times" in out
    result.assert_outcomes(errors=2)


def test_a_baseline_with_curtailed_tasks_can_be_compared(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite({"a": "FPPPP", "b": "PPPPP"}))
    pytester.runpytest("--consistency-adaptive", "--consistency-report=base.json")
    result = pytester.runpytest("--consistency-baseline=base.json", "--consistency-report=report.json")
    out = result.stdout.str()
    assert "k must be within" not in out and "Traceback" not in out, out
    assert load_report(pytester)["summary"]["comparison"] is not None
    shown = cli("compare", "base.json", "report.json", cwd=pytester.path)
    assert "Traceback" not in shown.stderr, shown.stderr


# --- retry plugins: the first outcome counts, whichever plugin retried ----------------------------------------


FAILS_ONCE = """
import pathlib, pytest
{decorator}

@pytest.mark.repeat_consistency(n=3)
{marker}
def test_task(consistency, tmp_path_factory):
    flag = pathlib.Path(__file__).parent / f"tried-{{consistency.repeat}}"
    first = not flag.exists()
    flag.write_text("x")
    consistency.record("first" if first else "again")
    assert not (first and consistency.repeat == 2)
"""


def test_flaky_never_hides_a_first_failure(pytester: pytest.Pytester) -> None:
    pytest.importorskip("flaky")
    pytester.makepyfile(FAILS_ONCE.format(decorator="from flaky import flaky", marker="@flaky(max_runs=2)"))
    result = pytester.runpytest("--consistency-report=report.json", "-p", "no:rerunfailures", "-p", "flaky")
    assert_first_outcome_counts(pytester, result)


#: What pytest-retry does (its own package is not installed here: it breaks in-process pytester sessions): the
#: failed attempt is logged under an outcome of its own ("retried", or its --retry-outcome), then the test runs again
#: inside the same protocol and the final report carries the retry's outcome.


@pytest.mark.parametrize("outcome", ["retried", "flaky-retry"])
def test_a_retry_under_an_outcome_of_its_own_never_hides_a_first_failure(
    pytester: pytest.Pytester, outcome: str
) -> None:
    pytester.makeconftest(RETRY_PLUGIN.format(outcome=outcome))
    pytester.makepyfile(FAILS_ONCE.format(decorator="", marker=""))
    result = pytester.runpytest("--consistency-report=report.json", "-p", "no:rerunfailures")
    assert_first_outcome_counts(pytester, result)


def assert_first_outcome_counts(pytester: pytest.Pytester, result: pytest.RunResult) -> None:
    data = load_report(pytester)
    task = data["tasks"][0]
    assert task["outcomes"] == ["passed", "failed", "passed"], (task["outcomes"], result.stdout.str())
    assert task["answers"][1] == "first"
    assert task["verdict"] == "fail" and result.ret == 1
    assert any("re-ran 1 repetition attempt" in w for w in data["summary"]["warnings"])


def test_pytest_repeat_count_on_a_marked_task_is_refused(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_repeat")
    pytester.makepyfile(pattern_suite({"a": "PPP"}))
    result = pytester.runpytest("--count=2")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*pytest-repeat's --count=2*repeat_consistency(n=...)*"])


# --- tokens replay as recorded --------------------------------------------------------------------------------


STREAMER = """
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_stream(pinned_client, consistency):
    stream = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "stream it"}], stream=True)
    consistency.record("".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices))
"""


def test_a_stream_without_usage_replays_the_tokens_it_recorded(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(*[Step(text="a streamed answer of several words")] * 2)
    pytester.makepyfile(test_stream=STREAMER)
    assert run_recorded(pytester, fake.base_url, "once").ret == 0
    recorded = calls_of(load_report(pytester))
    fake.reset()
    assert run_recorded(pytester, fake.base_url, "none").ret == 0
    replayed = calls_of(load_report(pytester))
    assert fake.requests == []
    assert [c["total_tokens"] for c in recorded] == [c["total_tokens"] for c in replayed]
    assert all(c["total_tokens"] > 0 and c["tokens_estimated"] for c in replayed)
    assert all("closed before" not in (c["detail"] or "") for c in recorded + replayed), recorded


def calls_of(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [call for task in report["tasks"] for rep in task["repetitions"] for call in rep["calls"]]


@pytest.mark.parametrize(
    ("source", "conftest", "expected"),
    [
        (
            """
import pytest

@pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.repeat_consistency(n=3))])
def test_task(x, consistency):
    pass
""",
            "",
            "applied to one parameter set through pytest.param(..., marks=...)*mark the test function*",
        ),
        (
            "def test_task(consistency):\n    pass\n",
            "import pytest\n\ndef pytest_collection_modifyitems(items):\n"
            "    for item in items:\n        item.add_marker(pytest.mark.repeat_consistency(n=3))\n",
            "added to the test after it was collected (item.add_marker*on the test function, its class or its module*",
        ),
        (
            "import unittest\n\nimport pytest\n\n\nclass TestCase(unittest.TestCase):\n"
            "    @pytest.mark.repeat_consistency(n=3)\n    def test_task(self):\n        pass\n",
            "",
            "*not supported on unittest.TestCase methods*",
        ),
    ],
    ids=["pytest.param", "collection_modifyitems", "unittest"],
)
def test_a_marker_collection_cannot_repeat_is_refused_naming_what_was_done(
    pytester: pytest.Pytester, source: str, conftest: str, expected: str
) -> None:
    """Issue 41: a marker through pytest.param or added in pytest_collection_modifyitems was refused with the message
    meant for unittest.TestCase methods."""
    pytester.makepyfile(test_task=source)
    if conftest:
        pytester.makeconftest(conftest)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"*{expected}"])
    if "unittest" not in expected:
        assert "unittest" not in result.stdout.str()
