from __future__ import annotations

from pytest_consistency.model.resample import DecisionRow, ResampleSummary
from pytest_consistency.report.resample import headline, html_section, markdown_lines, source_line, terminal_lines

RESULT = ResampleSummary(
    task="t.py::test_x",
    step=2,
    source=3,
    samples=4,
    scored=4,
    steps=3,
    cassettes="cassettes/t/test_x/resample/rep3@2",
    live=4,
    estimated_calls=8,
    estimated_tokens=400,
    rows=[DecisionRow("action:a", "action: a|<b>", 3, 3), DecisionRow("action:c", "action: c", 1, 0)],
)


def test_the_three_views_show_the_same_table() -> None:
    assert headline(RESULT) == (
        "resample t.py::test_x@2 from repetition 3: resampling step 2 alone gives 2 distinct decisions in 4 samples; "
        "3/4 passed, which reproduces the inconsistency"
    )
    assert source_line(RESULT) == (
        "steps 1..1 replayed from repetition 3 of 3 steps; 4 sampled live (estimated 8 call(s), 400 token(s)); "
        "cassettes/t/test_x/resample/rep3@2"
    )
    lines = [text for text, _ in terminal_lines(RESULT)]
    assert lines[2:] == [
        "  decision at step 2  samples  passed",
        "  action: a|<b>             3       3",
        "  action: c                 1       0",
    ]
    assert "| `action: a\\|<b>` | 3 | 3 |" in markdown_lines(RESULT)
    page = html_section(RESULT)
    assert "<code>action: a|&lt;b&gt;</code>" in page and "<b>" not in page


def test_step_one_replays_nothing() -> None:
    first = ResampleSummary("t", 1, 1, 2, 2, 2, "d", rows=[DecisionRow("k", "k", 2, 1)])
    assert source_line(first).startswith("no step replayed (step 1: a fresh run) from repetition 1 of 2 steps")
