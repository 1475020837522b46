"""Graded outcomes in the text outputs (report.score): the suite's mean score and its Hoeffding interval, as one
terminal line and one Markdown row, and nothing at all when no test gave a score."""

from __future__ import annotations

from suites import records

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.result import SessionSummary
from pytest_consistency.report.score import markdown_rows, shown, terminal_lines
from pytest_consistency.stats.interval import Interval


def summary(mean: float | None, interval: Interval | None, scores: int) -> SessionSummary:
    made = build_summary(records({"t": "PPF"}))
    made.score_mean, made.score_interval, made.scores = mean, interval, scores
    return made


def test_without_scores_nothing_is_shown() -> None:
    unscored = build_summary(records({"t": "PPF"}))
    assert shown(unscored) is None
    assert terminal_lines(unscored) == [] and markdown_rows(unscored) == []
    assert shown(summary(0.5, None, 3)) is None  # a mean without its interval is not shown alone


def test_the_mean_and_its_interval_to_three_places_in_both_outputs() -> None:
    scored = summary(2 / 3, Interval(0.1234, 0.99999), 12)
    assert shown(scored) == ("0.667", "[0.123, 1.000]")
    assert terminal_lines(scored) == ["mean score 0.667 [0.123, 1.000] (Hoeffding, 12 scores)"]
    assert markdown_rows(scored) == ["| mean score (12 scores) | 0.667 | [0.123, 1.000] (Hoeffding) |"]


def test_a_mean_of_zero_is_a_score_not_its_absence() -> None:
    lines = terminal_lines(summary(0.0, Interval(0.0, 0.4), 5))
    assert lines == ["mean score 0.000 [0.000, 0.400] (Hoeffding, 5 scores)"]
