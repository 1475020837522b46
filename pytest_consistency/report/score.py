"""Graded outcomes in the text outputs: the suite's mean score (``consistency.score``) with its Hoeffding interval,
one line in the terminal and one row of the Markdown figures, when any test gave a score (as ``report.cost`` does
for dollars)."""

from __future__ import annotations

from pytest_consistency.model.result import SessionSummary


def shown(summary: SessionSummary) -> tuple[str, str] | None:
    """The mean score and its interval as text, None without scores."""
    interval = summary.score_interval
    if summary.score_mean is None or interval is None:
        return None
    return f"{summary.score_mean:.3f}", f"[{interval.low:.3f}, {interval.high:.3f}]"


def terminal_lines(summary: SessionSummary) -> list[str]:
    found = shown(summary)
    return [] if found is None else [f"mean score {found[0]} {found[1]} (Hoeffding, {summary.scores} scores)"]


def markdown_rows(summary: SessionSummary) -> list[str]:
    found = shown(summary)
    return [] if found is None else [f"| mean score ({summary.scores} scores) | {found[0]} | {found[1]} (Hoeffding) |"]
