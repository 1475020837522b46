"""``pytest --consistency-plan`` collects, prints the plan from the last report and exits 0: no test runs, no
request is sent (not even the preflight of a live mode), nothing is written over the report; the tokens it expects
are the report's, the dollars those tokens at the price given. Bad input is one usage error naming the fix."""

from __future__ import annotations

from typing import Any

import pytest
from suites import ONE_CALL_AGENT, load_report, run_recorded

pytest_plugins = ["pytester"]


def _recorded(pytester: pytest.Pytester, fake: Any) -> dict[str, Any]:
    pytester.makepyfile(test_agent=ONE_CALL_AGENT)
    result = run_recorded(pytester, fake.base_url, "once")
    result.assert_outcomes(passed=3)
    return load_report(pytester)


def test_the_plan_prints_the_reports_tokens_and_runs_nothing(pytester: pytest.Pytester, fake: Any) -> None:
    report = _recorded(pytester, fake)
    tokens = report["summary"]["route"]["total_tokens"]
    assert tokens > 0
    written = (pytester.path / "report.json").read_bytes()
    sent, checked = len(fake.requests), len(fake.preflights)

    result = run_recorded(
        pytester, fake.base_url, "all", "--consistency-plan", "--consistency-price=fake-model=1,2", "-p", "no:randomly"
    )

    assert result.ret == 0
    assert result.parseoutcomes().get("passed") is None and result.parseoutcomes().get("failed") is None
    assert (len(fake.requests), len(fake.preflights)) == (sent, checked)  # a live mode, and not one request
    assert (pytester.path / "report.json").read_bytes() == written
    text = result.stdout.str()
    assert "consistency plan from" in text
    row = next(line for line in result.stdout.lines if line.startswith("test_agent.py::test_task "))
    # 3 of 3 against min_pass 0.5: certain to pass at n = 3; the report's tokens over its 3 repetitions, 3 again.
    assert row.split()[3:6] == ["3/3", "3", "100.0%*"]
    assert f"{tokens:,}" in row.split()
    prompt = sum(c["prompt_tokens"] for t in report["tasks"] for r in t["repetitions"] for c in r["calls"])
    completion = tokens - prompt
    usd = (prompt * 1 + completion * 2) / 1e6
    total = next(line for line in result.stdout.lines if line.startswith("total: "))
    assert total.startswith(f"total: 3.0 repetitions, {tokens:,} tokens, ${usd:.6f}".rstrip("0"))


def test_without_a_report_the_recorded_cassettes_give_tokens_and_time(pytester: pytest.Pytester, fake: Any) -> None:
    report = _recorded(pytester, fake)
    (pytester.path / "report.json").unlink()
    sent = len(fake.requests)
    calls = [c for t in report["tasks"] for r in t["repetitions"] for c in r["calls"]]
    tokens = sum(c["total_tokens"] for c in calls)
    prompt = sum(c["prompt_tokens"] for c in calls)

    result = run_recorded(
        pytester, fake.base_url, "none", "--consistency-plan", "--consistency-price=fake-model=1,2", "-p", "no:randomly"
    )

    assert result.ret == 0, result.stderr.str()
    assert len(fake.requests) == sent
    assert not (pytester.path / "report.json").exists()
    text = result.stdout.str()
    assert f"consistency plan from the cassettes under {pytester.path / 'cassettes'}" in text
    row = next(line for line in result.stdout.lines if line.startswith("test_agent.py::test_task "))
    # No outcome is in a cassette: min_pass 0.5 at n = 3 against the assumed 0.5 passes with P(X >= 2) = 0.5.
    assert row.split()[3:6] == ["cassettes", "3", "50.0%*"]
    assert f"{tokens:,}" in row.split()  # the 3 recorded repetitions' tokens, mean x n = 3: the report's tokens
    usd = (prompt * 1 + (tokens - prompt) * 2) / 1e6
    assert f"${usd:.6f}".rstrip("0") in row
    assert "minutes" in text and row.split()[-1] != "unknown"  # the cassettes keep each call's latency
    result.stdout.fnmatch_lines(["test_agent.py::test_task: from 3 recorded cassettes: no pass/fail in a cassette, *"])


def test_no_report_and_no_cassettes_is_one_usage_error_naming_both(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=ONE_CALL_AGENT)
    result = pytester.runpytest("--consistency-plan")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --consistency-plan: nothing to plan from: no --consistency-report FILE, and no collected task has "
            "a recorded cassette under *cassettes; set --consistency-report FILE*--consistency-record=once)"
        ]
    )
    assert "consistency plan from" not in result.stdout.str()


def test_a_corrupt_cassette_is_one_usage_error_naming_the_file(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=ONE_CALL_AGENT)
    broken = pytester.path / "cassettes" / "test_agent" / "test_task" / "rep-1.yaml"
    broken.parent.mkdir(parents=True)
    broken.write_text("interactions: [\n")
    result = pytester.runpytest("--consistency-plan")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --consistency-plan: cassette *rep-1.yaml is not a valid cassette*"])
    assert "consistency plan from" not in result.stdout.str()


def test_a_corrupt_report_is_one_usage_error_naming_the_file(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=ONE_CALL_AGENT)
    (pytester.path / "report.json").write_text('{"schema": ')
    result = pytester.runpytest("--consistency-plan", "--consistency-report=report.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --consistency-plan: *report.json:1: not valid JSON*"])


def test_under_xdist_the_controller_prints_the_plan_once_and_no_worker_runs_a_test(
    pytester: pytest.Pytester, fake: Any
) -> None:
    report = _recorded(pytester, fake)
    tokens = report["summary"]["route"]["total_tokens"]
    written = (pytester.path / "report.json").read_bytes()
    sent, checked = len(fake.requests), len(fake.preflights)

    result = run_recorded(pytester, fake.base_url, "all", "--consistency-plan", "-n", "2", "-p", "no:randomly")

    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") is None and outcomes.get("failed") is None, outcomes
    assert (len(fake.requests), len(fake.preflights)) == (sent, checked)
    assert (pytester.path / "report.json").read_bytes() == written
    assert result.stdout.str().count("consistency plan from") == 1
    rows = [line for line in result.stdout.lines if line.startswith("test_agent.py::test_task ")]
    assert len(rows) == 1 and f"{tokens:,}" in rows[0].split()
