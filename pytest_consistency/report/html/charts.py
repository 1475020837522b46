"""The page's pictures, as inline SVG drawn here: each task's pass rate with its interval, the gap by cause as one
stacked bar, and with a baseline each task before and after.

Why drawn in Python and not by a chart library: the page fetches nothing and runs from ``file://`` (a library would
be a download or 100 kB of inlined script), and it is a pure function of the summary (the same bytes in the session
and in ``show``); a few ``<line>``, ``<circle>`` and ``<rect>`` elements are all these charts need. Each chart draws
the typed rows its table prints (:func:`.data.rate_marks`, :func:`.data.cause_parts`, :func:`.data.rate_changes`),
computes no statistic of its own, and so cannot disagree with the table.

For every reader: each SVG is ``role="img"`` named by its ``<title>`` and described by a ``<desc>`` that lists what
it draws in words (a screen reader reads that, not the shapes); each mark has a ``<title>`` of its own (the tooltip);
colours are the page's CSS variables, set by class in ``page.css`` (no colour is written here), and nothing is told by
colour alone: parts of the bar are numbered, a baseline dot is hollow and a current one filled, a regression is
marked ✗. Numbers are written with one decimal, so the markup is the same on every machine.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_consistency.model.result import SessionSummary
from pytest_consistency.report.html.data import (
    CAUSE_RANK,
    CausePart,
    RateChange,
    RateMark,
    cause_parts,
    e,
    rate_changes,
    rate_marks,
)

#: The drawing's width (user units: pixels at natural size), the column of task names left of the plot, the
#: height of one task's row, and the space above the first row (the axis' labels).
WIDTH = 560
LABEL = 200
ROW = 18
TOP = 26
#: Right margin of the plot (the "100 %" label sits over its end).
RIGHT = 16
#: Characters of a task's name shown beside its row (its whole id is in the row's title).
NAME = 28
#: The stacked bar: its left margin, height, and the height of one legend line below it.
BAR_X = 8
BAR_H = 26
LEGEND = 18


def f(value: float) -> str:
    """A coordinate: one decimal, no trailing ``.0`` (deterministic and short)."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def pct(rate: float) -> str:
    return f"{rate * 100:.1f} %"


def short(task_id: str) -> str:
    """The test's own name (after the last ``::``), cut to :data:`NAME` characters."""
    name = task_id.rpartition("::")[2] or task_id
    return name if len(name) <= NAME else name[: NAME - 1] + "…"


def plot_x(rate: float) -> float:
    """Where a pass rate (0..1) sits on the rate axis."""
    return LABEL + max(0.0, min(1.0, rate)) * (WIDTH - LABEL - RIGHT)


def svg(name: str, height: float, title: str, desc: str, body: Sequence[str]) -> str:
    """One chart: a named, described image of ``WIDTH`` x ``height``."""
    return (
        f'<svg class="{name}" role="img" aria-labelledby="{name}-title {name}-desc" width="{WIDTH}" '
        f'height="{f(height)}" viewBox="0 0 {WIDTH} {f(height)}"><title id="{name}-title">{e(title)}</title>'
        f'<desc id="{name}-desc">{e(desc)}</desc>{"".join(body)}</svg>'
    )


def rate_axis(bottom: float) -> list[str]:
    """Gridlines at 0, 25, 50, 75 and 100 % from the top of the plot to ``bottom``, labelled above."""
    parts = ['<g class="axis" aria-hidden="true">']
    for tick in (0, 25, 50, 75, 100):
        x = f(plot_x(tick / 100))
        parts.append(
            f'<line x1="{x}" x2="{x}" y1="{TOP - 6}" y2="{f(bottom)}"/>'
            f'<text x="{x}" y="{TOP - 10}" text-anchor="middle">{tick} %</text>'
        )
    parts.append("</g>")
    return parts


def task_name(index: int | None, task_id: str, y: float, suffix: str = "") -> str:
    """A task's short name right-aligned before the plot, linked to its row of the grid when it has one."""
    text = f'<text class="name" x="{LABEL - 8}" y="{f(y + 4)}" text-anchor="end">{e(short(task_id) + suffix)}</text>'
    return text if index is None else f'<a href="#row-{index}">{text}</a>'


def rates_chart(marks: Sequence[RateMark], confidence: float) -> str:
    """Each task's pass rate (a dot) and its interval (a bar), one row per task, lowest rate first."""
    if not marks:
        return ""
    level = f"{confidence * 100:g} %"
    height = TOP + ROW * len(marks) + 4
    body = rate_axis(height - 4)
    said = []
    for row, mark in enumerate(marks):
        y = TOP + ROW * row + ROW / 2
        low, high = mark.interval.low, mark.interval.high
        words = (
            f"{mark.task_id}: {mark.passes}/{mark.scored} passed ({pct(mark.rate)}), "
            f"{level} interval {low * 100:.1f} to {high * 100:.1f} %"
        )
        said.append(f"{short(mark.task_id)} {pct(mark.rate)} [{low * 100:.1f}, {high * 100:.1f}]")
        body.append(
            f'<g class="mark" data-i="{mark.index}"><title>{e(words)}</title>'
            f"{task_name(mark.index, mark.task_id, y)}"
            f'<line class="iv" x1="{f(plot_x(low))}" x2="{f(plot_x(high))}" y1="{f(y)}" y2="{f(y)}"/>'
            f'<circle class="dot" cx="{f(plot_x(mark.rate))}" cy="{f(y)}" r="4"/></g>'
        )
    title = f"Pass rate of each task with its {level} interval, lowest first"
    desc = f"{len(marks)} task(s), rate and interval in %: " + "; ".join(said)
    return svg("chart-rates", height, title, desc, body)


def causes_chart(parts: Sequence[CausePart]) -> str:
    """The consistency gap as one bar, a part per cause (as wide as its points of the gap), numbered, with a legend
    line per part below it: number, cause, points, tasks."""
    total = sum(part.points for part in parts)
    if not parts or total <= 0:
        return ""
    span = WIDTH - 2 * BAR_X
    height = BAR_H + 22 + LEGEND * len(parts) + 4
    body = []
    x = float(BAR_X)
    for number, part in enumerate(parts, start=1):
        width = span * part.points / total
        kind = CAUSE_RANK.get(part.cause, len(CAUSE_RANK))
        words = f"{part.cause}: {part.points:.1f} pp of the gap, {part.tasks} task(s)"
        label = ""
        if width >= 14:  # the part's number, where it fits (the legend names every part)
            middle = f(x + width / 2)
            label = f'<text class="on" x="{middle}" y="{f(BAR_H / 2 + 4)}" text-anchor="middle">{number}</text>'
        body.append(
            f'<g class="part k{kind}" data-cause="{e(part.cause)}"><title>{e(words)}</title>'
            f'<rect x="{f(x)}" y="0" width="{f(width)}" height="{BAR_H}"/>{label}</g>'
        )
        x += width
    body.append(
        f'<g class="axis" aria-hidden="true"><text x="{BAR_X}" y="{BAR_H + 14}">0</text>'
        f'<text x="{WIDTH - BAR_X}" y="{BAR_H + 14}" text-anchor="end">{total:.1f} pp, the gap</text></g>'
    )
    for row, part in enumerate(parts):
        kind = CAUSE_RANK.get(part.cause, len(CAUSE_RANK))
        y = BAR_H + 22 + LEGEND * row
        body.append(
            f'<g class="legend k{kind}"><rect x="{BAR_X}" y="{f(y)}" width="12" height="12"/>'
            f'<text x="{BAR_X + 18}" y="{f(y + 10)}">{row + 1} {e(part.cause)}: {part.points:.1f} pp, '
            f"{part.tasks} task(s)</text></g>"
        )
    title = f"The consistency gap by cause: {total:.1f} pp"
    desc = "; ".join(f"{part.cause} {part.points:.1f} pp ({part.tasks} task(s))" for part in parts)
    return svg("chart-causes", height, title, desc, body)


def changes_chart(changes: Sequence[RateChange], index: dict[str, int]) -> str:
    """Each task's pass rate in the baseline (a hollow dot) and now (a filled one), joined; the largest drop first;
    a significant regression is marked ✗ beside its name."""
    if not changes:
        return ""
    height = TOP + ROW * len(changes) + 4
    body = rate_axis(height - 4)
    said = []
    for row, change in enumerate(changes):
        y = TOP + ROW * row + ROW / 2
        mark = " ✗" if change.regression else ""
        before = "-" if change.before is None else f"{change.before[0]}/{change.before[1]}"
        after = "-" if change.after is None else f"{change.after[0]}/{change.after[1]}"
        words = f"{change.task_id}: {before} → {after} ({change.status}{', regression' if change.regression else ''})"
        said.append(f"{short(change.task_id)} {before} → {after}{' regression' if change.regression else ''}")
        ends = [
            (cls, plot_x(run[0] / run[1]))
            for cls, run in (("before", change.before), ("after bad" if change.regression else "after", change.after))
            if run is not None
        ]
        dots = []
        if len(ends) == 2:
            dots.append(f'<line class="join" x1="{f(ends[0][1])}" x2="{f(ends[1][1])}" y1="{f(y)}" y2="{f(y)}"/>')
        dots += [f'<circle class="{cls}" cx="{f(x)}" cy="{f(y)}" r="4"/>' for cls, x in ends]
        body.append(
            f'<g class="mark"><title>{e(words)}</title>{task_name(index.get(change.task_id), change.task_id, y, mark)}'
            f"{''.join(dots)}</g>"
        )
    body.insert(
        0,
        f'<g class="key" aria-hidden="true"><circle class="before" cx="10" cy="{TOP - 14}" r="4"/>'
        f'<text x="18" y="{TOP - 10}">baseline</text><circle class="after" cx="84" cy="{TOP - 14}" r="4"/>'
        f'<text x="92" y="{TOP - 10}">current</text></g>',
    )
    title = "Pass rate of each task, baseline and current, the largest drop first"
    desc = f"{len(changes)} task(s), passes/scored baseline → current: " + "; ".join(said)
    return svg("chart-changes", height, title, desc, body)


def charts_section(summary: SessionSummary) -> str:
    """The pictures that have something to draw, each beside the others, under one heading."""
    figures = []
    rates = rates_chart(rate_marks(summary), summary.analysis.confidence)
    if rates:
        level = f"{summary.analysis.confidence * 100:g} %"
        figures.append(("Pass rate per task", f"dot: the rate; bar: its {level} interval; lowest first", rates))
    causes = causes_chart(cause_parts(summary))
    if causes:
        figures.append(("The gap by cause", "each part: a cause's points of the gap (the table below)", causes))
    if summary.comparison is not None:
        index = {task.task_id: i for i, task in enumerate(summary.tasks)}
        changes = changes_chart(rate_changes(summary.comparison), index)
        if changes:
            figures.append(("Baseline → current", "○ baseline, ● current; the largest drop first", changes))
    if not figures:
        return ""
    shown = "".join(
        f'<figure class="chart"><figcaption><b>{e(name)}</b> <span class="dim">{e(note)}</span></figcaption>'
        f'<div class="plot">{drawing}</div></figure>'
        for name, note, drawing in figures
    )
    return f'<section id="charts"><h2>At a glance</h2><div class="charts">{shown}</div></section>'
