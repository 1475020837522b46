"""Regenerate the options reference in docs/options.md from the option table (pytest_consistency/config/options.py).

Why a script: the reference lists every option with its flag, ini key, YAML key, default and help, and a list written
by hand drifted from the table. Only the part between the page's ``<!-- options: ... -->`` markers is rewritten; the
prose around it is kept. tests/integration/docs/test_docs_options.py fails, naming this command, when the page and
the table disagree.

    python scripts/gen_options.py [--page docs/options.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's package, not an installed copy

from pytest_consistency.config.reference import update  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", type=Path, default=ROOT / "docs" / "options.md", help="the page to rewrite")
    args = parser.parse_args(argv)
    old = args.page.read_text(encoding="utf-8")
    new = update(old)
    if new != old:
        args.page.write_text(new, encoding="utf-8")
    print(f"{args.page}: {'rewritten' if new != old else 'already up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
