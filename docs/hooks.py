"""mkdocs hook: the site's home page is the repository's README.md.

Why a hook and not a copy: the README is the front door on the forge and in the package metadata, and one text
cannot drift from another. Its links point into ``docs/`` (``docs/metrics.md``), which is right from the
repository root; on the site the home page lives inside ``docs/``, so the prefix is dropped here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parent.parent / "README.md"
LINK = re.compile(r"\]\(docs/")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri != "index.md":
        return markdown
    return LINK.sub("](", README.read_text(encoding="utf-8"))
