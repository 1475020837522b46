"""Every option of the one option table is documented: the options reference is generated from the table, and a
docs page names each option's flag, in code, where it is explained.

The option table (``pytest_consistency.config.options.OPTIONS``) is where an option is declared. docs/options.md
carries the reference rendered from it (``pytest_consistency.config.reference``, written by scripts/gen_options.py);
these tests regenerate it and compare, so a new option, a changed default or help cannot ship with a stale page
(the hand-written list named 31 of the table's 54 options).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_consistency.config.options import OPTIONS
from pytest_consistency.config.reference import BEGIN, COMMAND, END, GROUPS, default_cell, render

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
PAGE = DOCS / "options.md"

TEXT = "\n".join(page.read_text() for page in sorted(DOCS.glob("**/*.md")))


def generated_part(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END)
    return text[start : end + len(END)] + "\n"


def test_the_committed_reference_is_the_tables() -> None:
    committed = generated_part(PAGE.read_text(encoding="utf-8"))
    assert committed == render(), f"docs/options.md is not the option table's reference; regenerate it: {COMMAND}"


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.flag)
def test_every_option_is_in_the_reference_with_its_twins_and_default(option) -> None:
    reference = generated_part(PAGE.read_text(encoding="utf-8"))
    # the flag's own row: `--consistency-judge` is a prefix of `--consistency-judge-flip-max`
    own = re.compile(rf"\| `{re.escape(option.flag)}[=` ]")
    row = next((line for line in reference.splitlines() if own.match(line)), None)
    assert row is not None, f"{option.flag} has no row in docs/options.md; regenerate it: {COMMAND}"
    cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]]
    assert f"`{option.ini}`" in cells[1]
    assert (f"`{option.yaml_key}`" in cells[2]) if option.yaml_path else cells[2] == "—"
    assert cells[3] == default_cell(option)


def test_every_group_has_a_heading() -> None:
    reference = generated_part(PAGE.read_text(encoding="utf-8"))
    assert [line[4:] for line in reference.splitlines() if line.startswith("### ")] == [g.title for g in GROUPS]


def test_the_script_rewrites_a_stale_page(tmp_path: Path) -> None:
    """What the failure message says to run does what it says: the generated part is replaced, the prose kept."""
    page = tmp_path / "options.md"
    page.write_text(f"# Options\n\nprose before\n\n{BEGIN}\n| stale |\n{END}\n\nprose after\n", encoding="utf-8")
    script = ROOT / "scripts" / "gen_options.py"
    done = subprocess.run([sys.executable, str(script), "--page", str(page)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Options\n\nprose before\n\n") and text.endswith(f"{END}\n\nprose after\n")
    assert generated_part(text) == render() and "| stale |" not in text


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.flag)
def test_every_option_is_documented(option) -> None:
    shown = re.search(re.escape(f"`{option.flag}") + r"[`=\s\[]", TEXT)
    assert shown, f"{option.flag} is in the option table but no docs page names it: add it (docs/options.md)"
