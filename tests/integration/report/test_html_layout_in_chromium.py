"""The HTML page's layout, measured in headless Chromium: at 1280 px every repetition of a task with n <= 10 is in
view beside its verdict (two lines at most) and the opened details do not cover the grid; at 390 px no header is
broken mid-word or spills out of its box, the page does not scroll sideways, and the grid scrolls in its own box.

Why measured (issue 42, item 5): a new user's first look at 1280 px showed repetitions 1-2 of 5, the side panel
taking about 380 px and the verdict wrapping to three lines; a screenshot would not have said so, the rectangles do.
Measured on the example suite (n = 5, replayed from its cassettes) and on a synthetic run of six tasks at n = 10
with long ids, every column filled and a baseline (:func:`cause_summaries.wide_summary`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cause_summaries import wide_summary
from test_html_report import browser, example, needs_chromium  # noqa: F401  (the fixtures are used by name)

from pytest_consistency.report.html import render

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
pytestmark = needs_chromium

#: The grid's figures: per task row, the repetition cells inside the viewport and inside the grid's visible box
#: (not scrolled out of it on either side), and the rows whose task name is in it too;
#: the grid's scroll box; the verdict cells' line counts; the page's own width.
GRID = """() => {
  const grid = document.getElementById('grid'), box = grid.parentElement;
  const lines = el => {
    const range = document.createRange(); range.selectNodeContents(el);
    const tops = [...range.getClientRects()].filter(r => r.width > 0).map(r => r.top).sort((a, b) => a - b);
    const half = parseFloat(getComputedStyle(el).lineHeight) / 2;
    return tops.filter((top, i) => i === 0 || top - tops[i - 1] > half).length;
  };
  const seen = box.getBoundingClientRect(), left = Math.max(0, seen.left), right = Math.min(innerWidth, seen.right);
  const inView = td => { const r = td.getBoundingClientRect(); return r.left >= left - 0.5 && r.right <= right + 0.5; };
  return {
    cells: [...grid.tBodies[0].rows].map(tr => tr.querySelectorAll('td.c').length),
    shown: [...grid.tBodies[0].rows].map(tr => [...tr.querySelectorAll('td.c')].filter(inView).length),
    named: [...grid.tBodies[0].rows].filter(tr => inView(tr.querySelector('th.tid'))).length,
    scroll: [box.scrollWidth, box.clientWidth],
    verdictLines: [...grid.querySelectorAll('td.v')].map(lines),
    page: document.documentElement.scrollWidth,
  };
}"""

#: Every header (h1-h4, th) that is laid out: its text broken inside a word (a run of letters and digits whose
#: characters sit on more than one line), spilling out of its box, or allowed to break anywhere.
HEADERS = """() => {
  const broken = [];
  for (const el of document.querySelectorAll('h1, h2, h3, h4, th')) {
    if (!el.getClientRects().length) continue;  // not shown (a column hidden on a phone, a closed details)
    const style = getComputedStyle(el), half = parseFloat(style.lineHeight) / 2 || 6;
    if (style.wordBreak === 'break-all' || style.overflowWrap === 'anywhere' || style.hyphens === 'auto')
      broken.push(['breaks anywhere', el.textContent, style.wordBreak, style.overflowWrap, style.hyphens]);
    if (el.scrollWidth > el.clientWidth + 1) broken.push(['spills', el.textContent, el.scrollWidth, el.clientWidth]);
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/[\\p{L}\\p{N}]+/gu)) {
        const range = document.createRange();
        range.setStart(node, word.index); range.setEnd(node, word.index + word[0].length);
        const tops = [...range.getClientRects()].filter(r => r.width > 0).map(r => r.top);
        if (tops.length && Math.max(...tops) - Math.min(...tops) > half)
          broken.push(['mid-word', word[0], el.textContent]);
      }
    }
  }
  return broken;
}"""


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page of six tasks at n = 10 with a baseline."""
    page = tmp_path_factory.mktemp("wide") / "wide.html"
    page.write_text(render(wide_summary()), encoding="utf-8")
    return page


@pytest.fixture(params=["example", "wide"])
def report(request: pytest.FixtureRequest) -> Path:
    """The example suite's page (n = 5) and the synthetic one (n = 10)."""
    if request.param == "example":
        return request.getfixturevalue("example")[0]  # type: ignore[no-any-return]
    return request.getfixturevalue("wide")  # type: ignore[no-any-return]


@pytest.fixture
def desktop(browser: Any, report: Path) -> Iterator[tuple[Any, list[str]]]:  # noqa: F811
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(report.as_uri())
    yield page, errors
    context.close()


@pytest.fixture
def phone(browser: Any, report: Path) -> Iterator[tuple[Any, list[str]]]:  # noqa: F811
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(report.as_uri())
    yield page, errors
    context.close()


def rect(page: Any, selector: str, parent: bool = False) -> dict[str, float]:
    """The rectangle of ``selector``'s element (of its parent: the grid's scroll box), in viewport pixels."""
    return page.eval_on_selector(  # type: ignore[no-any-return]
        selector,
        f"el => {{ const r = el{'.parentElement' if parent else ''}.getBoundingClientRect();"
        " return {l: r.left, r: r.right, t: r.top, b: r.bottom}; }",
    )


def intersect(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["l"] < b["r"] and b["l"] < a["r"] and a["t"] < b["b"] and b["t"] < a["b"]


def test_at_1280_px_every_repetition_is_in_view_and_the_verdict_takes_two_lines_at_most(
    desktop: tuple[Any, list[str]],
) -> None:
    page, errors = desktop
    page.locator("#grid").scroll_into_view_if_needed()
    grid = page.evaluate(GRID)
    assert grid["cells"] and max(grid["cells"]) in (5, 10)
    assert grid["shown"] == grid["cells"], f"repetitions in view per task: {grid['shown']} of {grid['cells']}"
    assert grid["named"] == len(grid["cells"])
    assert grid["scroll"][0] <= grid["scroll"][1], f"the grid scrolls sideways: {grid['scroll']}"
    assert max(grid["verdictLines"]) <= 2, grid["verdictLines"]
    assert grid["page"] <= DESKTOP["width"]
    assert not errors


def test_at_1280_px_the_opened_details_do_not_cover_the_grid(desktop: tuple[Any, list[str]]) -> None:
    """The last repetition of the first and of the last task opened: the panel shows it, beside or below the grid
    but never over it, and every repetition stays in view."""
    page, errors = desktop
    for row in ("#grid tbody tr:first-child", "#grid tbody tr:last-child"):
        cell = page.locator(f"{row} td.c").last
        cell.scroll_into_view_if_needed()
        cell.click()
        n = page.locator(f"{row} td.c").count()
        assert f"Repetition {n} of {n}" in page.locator("#details").inner_text()
        panel, grid, box = rect(page, "#details"), rect(page, "#grid"), rect(page, "#grid", parent=True)
        assert panel["r"] > panel["l"] and panel["b"] > panel["t"]
        assert not intersect(panel, grid) and not intersect(panel, box), (panel, grid, box)
        shown = page.evaluate(GRID)  # the click scrolled nothing out of view to bring the cell in
        assert shown["shown"] == shown["cells"] and shown["named"] == len(shown["cells"]), shown
    assert not errors


def test_at_390_px_no_header_breaks_mid_word_the_page_does_not_scroll_sideways_and_the_grid_does(
    phone: tuple[Any, list[str]],
) -> None:
    page, errors = phone
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    broken = page.evaluate(HEADERS)
    assert broken == [], broken
    page.locator("#grid").scroll_into_view_if_needed()
    grid = page.evaluate(GRID)
    assert grid["scroll"][0] > grid["scroll"][1], "nothing to scroll: the test no longer measures the scroll box"
    moved = page.evaluate(
        "() => { const box = document.getElementById('grid').parentElement; box.scrollLeft = 10000;"
        " return [box.scrollLeft, getComputedStyle(box).overflowX]; }"
    )
    assert moved[0] > 0 and moved[1] in ("auto", "scroll"), moved
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert not errors


def test_the_charts_draw_a_mark_per_grid_row_inside_the_page(desktop: tuple[Any, list[str]], report: Path) -> None:
    """The pictures are laid out (not only written): each chart has a size, sits inside the page's width, and the
    chart of pass rates has one mark per row of the grid, its dots from the lowest rate to the highest."""
    page, errors = desktop
    page.locator("#charts").scroll_into_view_if_needed()
    drawn = page.evaluate(
        """() => ({
          charts: [...document.querySelectorAll('#charts svg')].map(svg => {
            const r = svg.getBoundingClientRect(); return [svg.getAttribute('class'), r.width, r.height, r.right];
          }),
          marks: document.querySelectorAll('.chart-rates g.mark').length,
          rows: document.querySelectorAll('#grid tbody tr').length,
          dots: [...document.querySelectorAll('.chart-rates circle.dot')].map(c => c.getBoundingClientRect().x),
        })"""
    )
    names = [name for name, *_ in drawn["charts"]]
    assert names[:2] == ["chart-rates", "chart-causes"] and names[2:] in ([], ["chart-changes"])
    assert ("chart-changes" in names) == (report.name == "wide.html")  # only the synthetic run has a baseline
    assert all(width > 200 and height > 40 and right <= DESKTOP["width"] for _, width, height, right in drawn["charts"])
    assert drawn["marks"] == drawn["rows"] and drawn["dots"] == sorted(drawn["dots"])
    assert not errors
