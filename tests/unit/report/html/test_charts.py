"""The page's charts (``report/html/charts.py``) draw what the tables print, and only that.

Why: a picture that disagrees with the table under it is worse than none, and a chart that computes its own figure
can. So each is checked against the table it mirrors on the same page: a mark per task at the rate and interval the
grid prints, in sorted order; a bar whose parts are as wide as the points of the gap the table of causes prints; a
dot before and after per task of the baseline comparison, at the counts its table prints, and no such chart
without a baseline. And each is an image a screen reader can name and describe, coloured by the page's variables.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from cause_summaries import cause_summary, wide_summary
from suites import records

from pytest_consistency.analysis.baseline import compare
from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.result import SessionSummary
from pytest_consistency.report.html import charts, render
from pytest_consistency.report.html.data import counts, rate_changes

PAGE_CSS = Path(charts.__file__).with_name("page.css")


class Svg(HTMLParser):
    """The elements of one chart (by its class), each with its attributes, the texts inside it and its marks: the
    ``<g class="mark">`` / ``<g class="part">`` groups with the elements and title inside each."""

    def __init__(self, name: str) -> None:
        super().__init__(convert_charrefs=True)
        self.name = name
        self.depth = 0  # > 0 inside the chart
        self.found = False
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.texts: list[str] = []
        self.groups: list[tuple[dict[str, str], list[tuple[str, dict[str, str]]], list[str]]] = []
        self.group_depth = 0
        self.title = ""
        self.desc = ""
        self.in_text: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "svg" and a.get("class") == self.name:
            self.found, self.depth = True, 1
            self.elements.append((tag, a))
            return
        if not self.depth:
            return
        self.depth += 1
        self.elements.append((tag, a))
        if tag == "g" and (a.get("class") or "-").split()[0] in ("mark", "part"):
            self.groups.append((a, [], []))
            self.group_depth = self.depth
        elif self.group_depth:
            self.groups[-1][1].append((tag, a))
        self.in_text = tag
        self.texts.append("")

    def handle_endtag(self, tag: str) -> None:
        if not self.depth:
            return
        if self.group_depth and self.depth == self.group_depth:
            self.group_depth = 0
        self.depth -= 1
        self.in_text = None

    def handle_data(self, data: str) -> None:
        if not self.depth or self.in_text is None:
            return
        self.texts[-1] += data
        if self.group_depth:
            self.groups[-1][2].append(data)
        if self.in_text == "title" and self.depth == 2:
            self.title += data
        if self.in_text == "desc" and self.depth == 2:
            self.desc += data


def chart(text: str, name: str) -> Svg:
    found = Svg(name)
    found.feed(text)
    found.close()
    return found


def on_axis(x: str) -> float:
    """A rate (0..1) back from its coordinate on the rate axis."""
    return (float(x) - charts.LABEL) / (charts.WIDTH - charts.LABEL - charts.RIGHT)


def grid_rates(text: str) -> dict[int, tuple[float, float]]:
    """The grid's "pass rate" column, by row: the interval it prints, in %."""
    cells = re.findall(r'<tr id="row-(\d+)".*?<td class="num opt">\[([\d.]+), ([\d.]+)\]</td>', text, re.S)
    return {int(row): (float(low), float(high)) for row, low, high in cells}


@pytest.mark.parametrize("summary", [cause_summary(), wide_summary()], ids=["n=5", "n=10"])
def test_a_mark_per_task_at_the_rate_and_interval_the_grid_prints_lowest_first(summary: SessionSummary) -> None:
    text = render(summary)
    rates = chart(text, "chart-rates")
    assert rates.found
    marks = rates.groups
    assert len(marks) == len(summary.tasks) == len(grid_rates(text))
    order = [int(a["data-i"]) for a, _, _ in marks]
    assert order == sorted(range(len(summary.tasks)), key=lambda i: (summary.tasks[i].mean_at_k or 0.0, i))
    printed = grid_rates(text)
    for (_, inside, words), index in zip(marks, order, strict=True):
        task = summary.tasks[index]
        line = next(a for tag, a in inside if tag == "line")
        dot = next(a for tag, a in inside if tag == "circle")
        assert on_axis(dot["cx"]) == pytest.approx(task.passes / task.scored, abs=0.001)
        low, high = printed[index]  # the table's figures, one decimal: the bar ends within its rounding
        assert on_axis(line["x1"]) * 100 == pytest.approx(low, abs=0.06)
        assert on_axis(line["x2"]) * 100 == pytest.approx(high, abs=0.06)
        assert f"{task.passes}/{task.scored} passed" in "".join(words) and task.task_id in "".join(words)
    assert rates.desc.startswith(f"{len(marks)} task(s)")


def test_a_task_that_was_never_scored_has_no_mark() -> None:
    summary = build_summary(records({"ran": "PFP", "skipped": "SSS"}))
    assert [a["data-i"] for a, _, _ in chart(render(summary), "chart-rates").groups] == ["0"]
    assert 'id="charts"' not in render(build_summary(records({"skipped": "SS"})))  # nothing to draw: no section


def cause_table(text: str) -> list[tuple[str, int, float]]:
    """The rows of the page's table of causes: cause, tasks, points of the gap."""
    section = re.search(r'<section id="causes">.*?</section>', text, re.S)
    assert section is not None
    rows = re.findall(r'<tr><td>([^<]+)</td><td class="num">(\d+)</td><td class="num">([\d.]+) pp</td>', section[0])
    return [(cause, int(tasks), float(points)) for cause, tasks, points in rows]


@pytest.mark.parametrize("summary", [cause_summary(), wide_summary()], ids=["n=5", "n=10"])
def test_the_stacked_bar_is_the_table_of_causes(summary: SessionSummary) -> None:
    text = render(summary)
    table = cause_table(text)
    bar = chart(text, "chart-causes")
    assert bar.found and len(bar.groups) == len(table) >= 4
    total = sum(points for _, _, points in table)
    widths = [float(next(a for tag, a in inside if tag == "rect")["width"]) for _, inside, _ in bar.groups]
    span = charts.WIDTH - 2 * charts.BAR_X
    assert sum(widths) == pytest.approx(span, abs=0.3)
    for (attrs, _, words), width, (cause, tasks, points) in zip(bar.groups, widths, table, strict=True):
        assert attrs["data-cause"] == cause
        assert width == pytest.approx(span * points / total, abs=0.06)  # one decimal of a user unit
        assert f"{cause}: {points:.1f} pp of the gap, {tasks} task(s)" in "".join(words)
    xs = [float(next(a for tag, a in inside if tag == "rect")["x"]) for _, inside, _ in bar.groups]
    assert xs == sorted(xs)  # left to right in the table's order
    legend = [t for t in bar.texts if re.match(r"\d+ ", t)]
    assert legend == [f"{i} {c}: {p:.1f} pp, {n} task(s)" for i, (c, n, p) in enumerate(table, start=1)]
    assert f"{total:.1f} pp, the gap" in bar.texts
    assert bar.title == f"The consistency gap by cause: {total:.1f} pp"
    assert all(cause in bar.desc for cause, _, _ in table)


def test_no_gap_to_part_no_bar() -> None:
    text = render(build_summary(records({"a": "PPPPP", "b": "FFFFF"})))
    assert "chart-causes" not in text and "chart-rates" in text
    # Answers that differ while every repetition passed: a cause, in the table, with 0.0 pp of a 0 pp gap.
    text = render(build_summary(records({"a": "PPP"}, {"a": ["x", "y", "x"]})))
    assert cause_table(text) == [("outside the model", 1, 0.0)] and "chart-causes" not in text


def test_with_a_baseline_each_task_before_and_after_the_largest_drop_first() -> None:
    summary = wide_summary(baseline=True)
    assert summary.comparison is not None
    text = render(summary)
    drawn = chart(text, "chart-changes")
    assert drawn.found and len(drawn.groups) == len(summary.comparison.tasks)
    # The comparison table prints 9/10 → 6/10 for the sampling task: the only drop, so the first row.
    first_words = "".join(drawn.groups[0][2])
    assert "test_monthly_total[invoices-march-2024]: 9/10 → 6/10 (still flaky)" in first_words
    assert "<td>9/10 → 6/10</td>" in text
    dots = {a["class"]: on_axis(a["cx"]) for tag, a in drawn.groups[0][1] if tag == "circle"}
    assert dots == {"before": pytest.approx(0.9), "after": pytest.approx(0.6)}
    assert sum(1 for tag, _ in drawn.groups[0][1] if tag == "line") == 1
    for change, (_, inside, words) in zip(rate_changes(summary.comparison), drawn.groups, strict=True):
        assert change.task_id in "".join(words)
        assert [a["class"] for tag, a in inside if tag == "circle"] == ["before", "after"]
    assert "chart-changes" not in render(wide_summary(baseline=False))


def test_a_regression_is_marked_and_a_task_of_one_run_gets_one_dot() -> None:
    base = build_summary(records({"kept": "PPPPPPPPPP", "gone": "PPPPPPPPPP"}))
    current = build_summary(records({"kept": "FFFFFFFFFF", "new": "PPPPPPPPPP"}))
    current.comparison = compare(base, current, "base.json")
    drawn = chart(render(current), "chart-changes")
    rows = {"".join(words).split(":")[0]: inside for _, inside, words in drawn.groups}
    assert list(rows) == ["kept", "new", "gone"]  # the drop first, then the tasks of one run
    assert [a["class"] for tag, a in rows["kept"] if tag == "circle"] == ["before", "after bad"]
    assert "kept ✗" in [t for t in drawn.texts if t.startswith("kept")]
    assert [a["class"] for tag, a in rows["new"] if tag == "circle"] == ["after"]
    assert [a["class"] for tag, a in rows["gone"] if tag == "circle"] == ["before"]
    assert not any(tag == "line" for tag, _ in rows["new"] + rows["gone"])


def test_counts_read_as_the_comparison_writes_them() -> None:
    assert counts("9/10") == (9, 10) and counts("0/5") == (0, 5)
    assert counts(None) is None and counts("0/0") is None and counts("9 / 10") is None and counts("-") is None


def css_rules() -> tuple[dict[str, str], list[tuple[str, str]]]:
    """page.css's variables (name → value) and its chart rules (selector, declarations)."""
    css = PAGE_CSS.read_text()
    root = re.search(r":root\{(.*?)\}", css, re.S)
    assert root is not None
    variables = dict(re.findall(r"(--[\w-]+):([^;]+);", root[1]))
    rules = re.findall(r"([^{}]*\.chart[^{}]*)\{([^{}]*)\}", css)
    return variables, rules


def test_each_chart_is_a_named_described_image_coloured_by_the_page_variables() -> None:
    text = render(wide_summary(baseline=True))
    for name in ("chart-rates", "chart-causes", "chart-changes"):
        drawn = chart(text, name)
        tag, attrs = drawn.elements[0]
        assert attrs["role"] == "img" and attrs["aria-labelledby"] == f"{name}-title {name}-desc"
        assert drawn.title and len(drawn.desc) > 40
        assert ("title", {"id": f"{name}-title"}) in drawn.elements
        assert ("desc", {"id": f"{name}-desc"}) in drawn.elements
        for tag, attrs in drawn.elements:  # no colour of its own: classes only
            assert not {"fill", "stroke", "style", "color"} & set(attrs), (tag, attrs)
    svgs = re.findall(r"<svg.*?</svg>", text, re.S)
    assert len(svgs) == 3 and not any(re.search(r"#[0-9a-fA-F]{3}|rgb\(|hsl\(", s) for s in svgs)
    variables, rules = css_rules()
    painted = 0
    for selector, declarations in rules:
        for prop, value in re.findall(r"([\w-]+):([^;]+)", declarations):
            if prop in ("fill", "stroke", "color", "background"):
                painted += 1
                used = re.fullmatch(r"var\((--[\w-]+)\)", value.strip())
                assert used is not None and used[1] in variables, (selector, prop, value)
    assert painted >= 10
    kinds = set(re.findall(r'class="(?:part|legend) (k\d)"', text))
    assert kinds and all(f".chart .{kind} rect{{fill:var(--{kind})}}" in PAGE_CSS.read_text() for kind in kinds)
