"""Every option of the one option table is documented: a docs page names its flag, in code, where it is explained.

The option table (``pytest_consistency.config.options.OPTIONS``) is where an option is declared; this test is what keeps
a new option from shipping without a line in the docs a user can find by its name.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_consistency.config.options import OPTIONS

DOCS = Path(__file__).resolve().parents[3] / "docs"


TEXT = "\n".join(page.read_text() for page in sorted(DOCS.glob("**/*.md")))


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.flag)
def test_every_option_is_documented(option) -> None:
    shown = re.search(re.escape(f"`{option.flag}") + r"[`=\s\[]", TEXT)
    assert shown, f"{option.flag} is in the option table but no docs page names it: add it (docs/options.md)"
