"""Why a run failed: one list of reasons, and every output (terminal, Markdown, HTML, JUnit) names each of them."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from suites import records

from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.analysis.verdict import closing_parts, failure_reasons
from pytest_consistency.model.result import Analysis, RunFacts, SessionSummary, TokenBudget
from pytest_consistency.report import html, junit, markdown, terminal


def settled(summary: SessionSummary, thresholds: dict[str, float | None] | None = None) -> SessionSummary:
    conclude(summary, thresholds or {})
    summary.exit_status = 0 if summary.passed else 1
    return summary


def broken_summary() -> SessionSummary:
    reps = records({"a": "PFPPP", "b": "PPPPP"}, min_pass=0.6)
    reps[1].infrastructure = "cassette unreadable or unwritable: rep-2.yaml is not a valid cassette"
    return settled(build_summary(reps))


def test_a_passing_run_has_no_reason_and_adds_nothing_to_the_closing_line() -> None:
    summary = settled(build_summary(records({"a": "PFPPP"}, min_pass=0.6)))
    assert summary.passed and failure_reasons(summary) == [] and closing_parts(summary) == []


def test_an_infrastructure_failure_is_a_task_in_error_never_tolerated() -> None:
    summary = broken_summary()
    task = summary.tasks[0]
    assert task.verdict == "error" and task.tolerated_failures == 0 and not summary.passed
    assert summary.tolerated_nodeids == {r.nodeid for r in summary.tasks[1].repetitions}
    kinds = [r.kind for r in failure_reasons(summary)]
    assert kinds == ["error_task", "error"]
    assert closing_parts(summary) == ["1 task in error", "1 consistency error"]


def test_a_failed_gate_is_named_in_the_closing_line() -> None:
    # a flaky task is certain evidence of a gap above 0
    summary = settled(build_summary(records({"a": "PFPPP", "b": "PPPPP"}, min_pass=0.6)), {"consistency_gap_max": 0})
    assert closing_parts(summary) == ["gate --consistency-gap-max failed"]


@pytest.mark.parametrize(
    "make, words",
    [
        (broken_summary, "in error"),
        (
            lambda: settled(
                build_summary(records({"a": "PP"}), run=RunFacts(token_budget=TokenBudget(limit=10, spent=11)))
            ),
            "token budget exceeded",
        ),
        (lambda: settled(build_summary(records({"a": "PP"}), run=RunFacts(interrupted=True))), "interrupted"),
        (lambda: settled(replace(build_summary(records({"a": "PP"})), errors=["a hook raised X"])), "a hook raised X"),
    ],
)
def test_every_output_names_each_reason(make, words: str) -> None:  # type: ignore[no-untyped-def]
    summary = make()
    assert not summary.passed
    assert words in "\n".join(line.text for line in terminal.render(summary))
    assert words in "\n".join(markdown.verdict_lines(summary))
    assert words in html.render(summary)
    root = ET.fromstring(junit.render(summary))
    failing = [tc for tc in root.iter("testcase") if tc.find("failure") is not None or tc.find("error") is not None]
    assert failing, "JUnit must have a failing testcase when the run failed"
    texts = " ".join(
        (el.get("message") or "") + (el.text or "") for tc in failing for el in tc if el.tag in ("failure", "error")
    )
    if words != "in error":  # a task in error fails its repetition testcases; the others get the run testcase
        assert words in texts, texts


def test_an_undecided_gate_counted_as_a_failure_is_named_undecided_in_the_closing_line() -> None:
    reps = records({"a": "PFPPP", "b": "PPPPP"}, min_pass=0.6)
    # the gap's one-sided bounds, about [1.0, 53.5] pp, hold 30
    summary = settled(build_summary(reps, analysis=Analysis(inconclusive="fail")), {"consistency_gap_max": 30})
    (gate,) = summary.gates
    assert gate.state == "undecided" and not gate.passed
    assert closing_parts(summary) == ["gate --consistency-gap-max undecided"]


def test_an_expected_failure_is_xfail_whether_its_min_rate_verdict_is_fail_or_undecided() -> None:
    reps = records({"mostly": "P" * 16 + "F" * 4, "half": "PF" * 10}, min_rate=0.8)
    for rep in reps:
        if rep.outcome == "failed":
            rep.outcome = "xfailed"
    summary = settled(build_summary(reps, analysis=Analysis(inconclusive="fail")))
    assert [t.verdict for t in summary.tasks] == ["xfail", "xfail"]
    assert summary.passed


def test_an_undecided_task_without_a_single_failure_stays_undecided() -> None:
    """xfail names where a test failed as expected; 5/5 at min_rate 0.8 has no failure to expect, so it is undecided
    (it read 'xfail (expected failure)', every failure of none being xfailed)."""
    summary = settled(build_summary(records({"a": "PPPPP"}, min_rate=0.8), analysis=Analysis()))
    assert [t.verdict for t in summary.tasks] == ["undecided"]
