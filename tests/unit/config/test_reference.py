"""The options reference rendered from the option table: one row per option, its three forms and its default."""

from __future__ import annotations

import pytest

from pytest_consistency.config.options import BY_DEST, OPTIONS
from pytest_consistency.config.reference import (
    BEGIN,
    END,
    GROUPS,
    MarkersMissing,
    default_cell,
    flag_cell,
    render,
    update,
)


def test_one_row_per_option_in_the_tables_order_under_its_groups_heading() -> None:
    text = render()
    rows = [line for line in text.splitlines() if line.startswith("| `-")]
    assert [row.split("`")[1].split("=")[0] for row in rows] == [option.flag for option in OPTIONS]
    assert f"{len(OPTIONS)} options, in {len(GROUPS)} groups." in text
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert headings == [f"### {group.title}" for group in GROUPS]


def test_the_cells_say_how_each_kind_of_option_is_written() -> None:
    assert flag_cell(BY_DEST["consistency_gap_max"]) == "`--consistency-gap-max=PP`"
    assert flag_cell(BY_DEST["consistency_match_ignore"]) == "`--consistency-match-ignore=RULE` (repeatable)"
    suite = flag_cell(BY_DEST["consistency_suite_regression"])
    assert suite == "`--consistency-suite-regression`, `--no-consistency-suite-regression`"
    assert default_cell(BY_DEST["consistency_timeout"]) == "`60`"
    assert default_cell(BY_DEST["consistency_confidence"]) == "`0.95`"
    assert default_cell(BY_DEST["consistency_adaptive"]) == "off"
    assert default_cell(BY_DEST["consistency_config"]) == "`consistency.yaml`"
    assert default_cell(BY_DEST["consistency_gap_max"]) == "not set"


def test_help_text_cannot_break_the_table() -> None:
    """A ``|`` in help would end the cell, ``<i>`` would be an HTML tag, ``*`` emphasis; code spans stay as written."""
    text = render()
    ignore_url = next(line for line in text.splitlines() if line.startswith("| `--consistency-ignore-url"))
    assert ignore_url.endswith("join several with \\| |")
    assert "rep-&lt;i&gt;.yaml" in text and "messages.\\*.name" in text
    assert "by `pytest-consistency merge` of every shard's report" in text


def test_update_keeps_the_prose_and_needs_its_markers() -> None:
    page = f"before\n{BEGIN}\nold\n{END}\nafter\n"
    assert update(page) == "before\n" + render() + "after\n"
    assert update(update(page)) == update(page)
    for broken in ("no markers\n", f"{END}\n{BEGIN}\n", f"{BEGIN}\n{BEGIN}\n{END}\n"):
        with pytest.raises(MarkersMissing):
            update(broken)


def test_the_groups_hold_every_option_once_in_the_tables_order() -> None:
    assert [option for group in GROUPS for option in group.options] == list(OPTIONS)
