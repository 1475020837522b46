"""analysis.judge_change: the judge's figures of two runs side by side, per task, or one sentence when one run has
none."""

from __future__ import annotations

from suites import records

from pytest_consistency.analysis.baseline import compare
from pytest_consistency.analysis.judge import judge_summary
from pytest_consistency.analysis.judge_change import change_lines
from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.result import SessionSummary


def judged(patterns: dict[str, str], samples: int = 2) -> SessionSummary:
    """A rejudge session: item i of a task is judge sample (i - 1) % M + 1 of recorded repetition (i - 1) // M + 1."""
    reps = records(patterns)
    summary = build_summary(reps)
    summary.judge = judge_summary(reps, samples)
    return summary


def test_both_runs_re_judged_each_tasks_flip_rate_and_judge_part_in_both_with_the_change() -> None:
    # Baseline: 3 recorded repetitions x 2 samples, the second's two samples disagree (flip 1/3); sample 1 fails there
    # while the majority of the one agent output passes: the whole observed gap is the judge's.
    baseline = judged({"a": "PPFPPP", "b": "PPPPPP"})
    current = judged({"a": "PPPPPP", "c": "PPPPPP"})
    c = compare(baseline, current, "base.json")
    assert c.judge_missing is None
    assert [change.task_id for change in c.judge] == ["a", "c", "b"]  # this run's order, then the baseline's others
    a = c.judge[0]
    assert (a.baseline_flip_rate, a.current_flip_rate) == (1 / 3, 0.0)
    assert a.baseline_judge_gap_pp == a.baseline_gap_pp and a.baseline_gap_pp is not None and a.baseline_gap_pp > 0
    assert (a.current_judge_gap_pp, a.current_gap_pp) == (0.0, 0.0)
    gap = f"{a.baseline_gap_pp:.1f}"
    assert change_lines(c) == [
        f"judge a: flip rate 33.3 % -> 0.0 % (-33.3 pp); judge's part of the gap {gap} of {gap} pp -> 0.0 of 0.0 pp "
        f"(-{gap} pp)",
        "judge c: flip rate - -> 0.0 %; judge's part of the gap - -> 0.0 of 0.0 pp",
        "judge b: flip rate 0.0 % -> -; judge's part of the gap 0.0 of 0.0 pp -> -",
    ]


def test_one_run_without_judge_figures_is_one_line_and_neither_is_none() -> None:
    rejudged, plain = judged({"a": "PPFPPP"}), build_summary(records({"a": "PPP"}))
    assert change_lines(compare(rejudged, plain, "base.json")) == [
        "judge: only the baseline has judge figures (this run is no rejudge session): the judge is not compared"
    ]
    assert change_lines(compare(plain, rejudged, "base.json")) == [
        "judge: only this run has judge figures (the baseline is no rejudge session): the judge is not compared"
    ]
    none = compare(plain, plain, "base.json")
    assert (none.judge, none.judge_missing, change_lines(none)) == ([], None, [])


def test_the_terminal_markdown_and_html_comparisons_show_the_judge_lines() -> None:
    from pytest_consistency.report.html import render as html_page
    from pytest_consistency.report.markdown import render as markdown
    from pytest_consistency.report.terminal import render as terminal

    current = judged({"a": "PPPPPP"})
    current.comparison = compare(judged({"a": "PPFPPP"}), current, "base.json")
    text = [line.text for line in terminal(current, width=200)]
    assert any(line.startswith("  judge a: flip rate 33.3 % -> 0.0 % (-33.3 pp); judge's part") for line in text)
    assert "\n- judge a: flip rate 33.3 % → 0.0 % (-33.3 pp); judge's part of the gap " in markdown(current)
    assert "<dt>judge</dt><dd>a: flip rate 33.3 % → 0.0 % (-33.3 pp); judge&#x27;s part" in html_page(current)
