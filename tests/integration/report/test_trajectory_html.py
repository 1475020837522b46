"""The trajectory tree in the HTML page, in headless Chromium: collapsed nodes, pass share per branch, readable
at 20 repetitions over 30 steps, fetching nothing (the page's promise, as for the rest of it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_html_report import browser, needs_chromium, open_page  # noqa: F401  (the fixture is used by name)

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.trajectory import Decision, ToolCall
from pytest_consistency.report.html import render

REPS, STEPS = 20, 30


def decision(name: str, **arguments: Any) -> Decision:
    return Decision.of(
        "", (ToolCall(name, json.dumps(arguments, sort_keys=True, separators=(",", ":"))),), "tool_calls"
    )


def wide_task() -> list[RepetitionResult]:
    """20 repetitions of 30 steps: the first 10 search then read invoices (all pass), 5 list emails at step 2
    (all fail), 5 search but page differently from step 15 (2 of them pass)."""
    reps = []
    for repeat in range(1, REPS + 1):
        path = [decision("search_invoices", q="march")]
        for step in range(2, STEPS + 1):
            if 11 <= repeat <= 15 and step >= 2:
                path.append(decision("list_emails", page=step))
            elif repeat > 15 and step >= 15:
                path.append(decision("read_invoice", page=step + repeat))
            else:
                path.append(decision("read_invoice", page=step))
        passed = repeat <= 10 or repeat in (16, 17)
        calls = [CallRecord("POST", "http://h/v1/chat/completions", "http://h/v1", None, "m", decision=d) for d in path]
        reps.append(
            RepetitionResult(
                "agent[wide]",
                f"t[rep{repeat}]",
                repeat,
                REPS,
                REPS,
                0.0,
                outcome="passed" if passed else "failed",
                calls=calls,
            )
        )
    return reps


@needs_chromium
def test_the_tree_is_collapsed_shows_branch_shares_and_fits(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    summary = build_summary(wide_task())
    mapped = summary.tasks[0].trajectory
    assert mapped is not None and mapped.divergent_step == 2 and mapped.steps == STEPS
    page_file = tmp_path / "report.html"
    page_file.write_text(render(summary), encoding="utf-8")
    context, opened, requests, errors = open_page(browser, page_file)
    section = opened.locator("#trajectories")
    section.scroll_into_view_if_needed()  # below the gap by cause: content-visibility lays it out once in view
    # ...in the next rendering update, which a loaded machine runs late: until then each line's text is empty
    # (CI read ['', '', '']). Wait for the line a reader sees; it never comes if the tree lost it.
    opened.wait_for_function(
        "() => [...document.querySelectorAll('#trajectories .tree li')]"
        ".some(li => li.innerText.includes('steps 2–14'))",
        timeout=30_000,
    )
    assert "repetitions part at step 2 (tool `read_invoice` vs `list_emails`)" in section.inner_text()
    lines = section.locator(".tree li")
    # 30 steps of 20 repetitions: a handful of lines (runs of steps without a branch), not 600 nodes.
    assert 3 <= lines.count() <= 12
    visible = [text for text in section.locator(".tree li:visible").all_inner_texts()]
    assert any("steps 2–14" in text and "12/15 passed" in text for text in visible), visible
    # The branches below step 14 are collapsed until their line is opened.
    hidden = section.locator(".tree li li li")
    assert hidden.count() >= 2 and not any(hidden.nth(i).is_visible() for i in range(hidden.count()))
    opened.locator("#trajectories .tree li li > details > summary").first.click()
    assert hidden.first.is_visible()
    shares = section.locator(".share").evaluate_all("bars => bars.map(b => b.title)")
    assert "10 of 10 passed" in shares and "0 of 5 passed" in shares
    width = opened.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert width, "the tree makes the page scroll sideways"
    assert requests == [page_file.as_uri()] and not errors
    context.close()
