"""The HTML report of the example suite, opened from disk in headless Chromium: grid, details, sorting, no network.

Why a real browser: the page's behaviour (cells that open a repetition's route, sortable rows) is JavaScript, and
its promise (works from ``file://``, fetches nothing) is only observable in a browser. Debian's /usr/bin/chromium is
driven through Playwright (never ``playwright install``); the browser tests skip when it is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from suites import COMMAND, replay_examples

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = "/usr/bin/chromium"
ROUTE = "http://127.0.0.1:8765/v1"
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install -y chromium); CI installs it"
)


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("EXAMPLE_LLM_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["PYTHONIOENCODING"] = "utf-8"
    return env


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    """The example suite replayed from its cassettes: its HTML page, its JSON report and the report's data."""
    tmp = tmp_path_factory.mktemp("html")
    html, report = tmp / "report.html", tmp / "report.json"
    result = replay_examples(report, f"--consistency-html={html}")
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"wrote html: {html}" in result.stdout
    return html, report, json.loads(report.read_text())


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium); CI installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


def open_page(browser: Any, path: Path) -> tuple[Any, Any, list[str], list[str]]:
    """A page of ``path`` loaded from file:// in a context of its own (close it), with every request it made and
    every script error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    requests: list[str] = []
    errors: list[str] = []
    opened.on("request", lambda request: requests.append(request.url))
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.goto(path.as_uri())
    return context, opened, requests, errors


@pytest.fixture
def page(browser: Any, example: tuple[Path, Path, dict[str, Any]]) -> Iterator[tuple[Any, list[str], list[str]]]:
    """The page loaded from file://, with every request it made and every script error."""
    context, opened, requests, errors = open_page(browser, example[0])
    yield opened, requests, errors
    context.close()


def row_ids(page: Any) -> list[str]:
    return [str(i) for i in page.eval_on_selector_all("#grid tbody tr", "rows => rows.map(r => r.dataset.i)")]


@needs_chromium
def test_the_page_renders_the_grid_and_takes_a_screenshot(
    page: tuple[Any, list[str], list[str]], example: tuple[Path, Path, dict[str, Any]], tmp_path: Path
) -> None:
    opened, requests, errors = page
    png = opened.screenshot(full_page=True)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    tasks = len(example[2]["tasks"])  # the example suite's 13 tasks, each n = 5
    assert tasks == 13 and opened.locator("#grid tbody tr").count() == tasks
    assert [opened.locator(f"#row-{i} td.c").count() for i in range(tasks)] == [5] * tasks
    assert "PASSED" in opened.locator(".verdict").inner_text().upper()
    assert requests == [example[0].as_uri()] and not errors


@needs_chromium
def test_a_cell_opens_its_repetitions_route(
    page: tuple[Any, list[str], list[str]], example: tuple[Path, Path, dict[str, Any]]
) -> None:
    opened, requests, errors = page
    rep = example[2]["tasks"][1]["repetitions"][2]  # test_sampled[invoice-sender], repetition 3
    call = rep["calls"][0]
    opened.locator("#row-1 td.c").nth(2).click()
    details = opened.locator("#details").inner_text()
    assert "Repetition 3 of 5" in details
    assert ROUTE in details and call["base_url"] == ROUTE
    assert call["model_requested"] in details and call["model_served"] in details
    assert call["key_fingerprint"] in details and call["key_fingerprint"].startswith("sha256:")
    assert rep["answer"]["answer"][:30] in details
    assert f"Calls ({len(rep['calls'])})" in details and "/completions" in details
    # The keyboard reaches the next cell and opens it too.
    opened.keyboard.press("ArrowRight")
    opened.keyboard.press("Enter")
    assert "Repetition 4 of 5" in opened.locator("#details").inner_text()
    assert requests == [example[0].as_uri()] and not errors


@needs_chromium
def test_sorting_by_gap(page: tuple[Any, list[str], list[str]], example: tuple[Path, Path, dict[str, Any]]) -> None:
    opened, requests, errors = page
    gaps = [task["gap_pp"] for task in example[2]["tasks"]]
    original = [str(i) for i in range(len(gaps))]
    assert row_ids(opened) == original
    by_gap = sorted(range(len(gaps)), key=lambda i: (-gaps[i], i))  # largest gap first, ties in suite order
    opened.click("button[data-sort=gap]")
    assert row_ids(opened) == [str(i) for i in by_gap]
    opened.click("button[data-sort=gap]")
    ascending = [str(i) for i in sorted(range(len(gaps)), key=lambda i: (gaps[i], i))]
    assert row_ids(opened) == ascending != original
    # The largest gaps end at the bottom: the cause tasks' input and outside-the-model (60 pp), environment (80 pp).
    assert ascending[-3:] == ["7", "11", "8"]
    assert opened.get_attribute("th:has(button[data-sort=gap])", "aria-sort") == "ascending"
    opened.click("button[data-sort=order]")
    assert row_ids(opened) == original
    assert requests == [example[0].as_uri()] and not errors


@needs_chromium
def test_on_a_phone_the_page_fits_the_grid_shows_repetitions_and_a_tap_shows_its_details(
    browser: Any, example: tuple[Path, Path, dict[str, Any]]
) -> None:
    """At 390 px (a phone): no sideways scroll of the page, several repetition columns beside the task, and a
    tapped cell's details in view (a bottom sheet), with why it failed."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.goto(example[0].as_uri())
    try:
        assert opened.evaluate("document.documentElement.scrollWidth") <= 390
        opened.locator("#grid").scroll_into_view_if_needed()
        visible = opened.evaluate(
            "Array.from(document.querySelectorAll('#grid th.rh')).filter(th => th.getBoundingClientRect().right"
            " <= innerWidth).length"
        )
        assert visible >= 3, visible
        failed = next(
            (i, r["repeat"])
            for i, t in enumerate(example[2]["tasks"])
            for r in t["repetitions"]
            if r["outcome"] == "failed"
        )
        cell = opened.locator(f"#row-{failed[0]} td.c").nth(failed[1] - 1)
        cell.scroll_into_view_if_needed()
        cell.tap()
        top, bottom, height = opened.evaluate(
            "(() => { const r = document.getElementById('details').getBoundingClientRect();"
            " return [r.top, r.bottom, innerHeight]; })()"
        )
        assert 0 <= top < bottom <= height
        details = opened.locator("#details").inner_text()
        assert f"Repetition {failed[1]} of 5" in details and "why it failed" in details
        opened.locator("#details .close").click()
        assert opened.evaluate("getComputedStyle(document.getElementById('details')).display") == "none"
        assert not errors
    finally:
        context.close()


def test_show_gives_the_same_bytes_as_the_session(example: tuple[Path, Path, dict[str, Any]]) -> None:
    html, report, _ = example
    shown = subprocess.run(
        [COMMAND, "show", str(report), "--format", "html"],  # the console script, as a user runs it
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == html.read_bytes()
