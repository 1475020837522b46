"""Regenerate docs/html-report.png: the HTML report of the example suite, as a reader first sees it.

Why a script: the picture in the README must show what the current code renders, so it is produced, never drawn.
Everything it writes but the picture goes into a temporary directory (the main job's outputs beside examples/ stay
as that command left them); tests/integration/docs/test_docs_site.py checks the page it photographs against
examples/expected.json.
It replays the example suite from cassettes/ (offline, no key), writes its ``--consistency-html`` page, opens it from
disk in headless Chromium (Debian's /usr/bin/chromium through Playwright; no browser download), clicks one
repetition so the details panel is filled, and saves the top 1600 px of the page at 1280 px wide.

    python scripts/screenshot_html.py [--out docs/html-report.png] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 1280
HEIGHT = 1600


def replay_html(workdir: Path) -> Path:
    """Run the example suite from its cassettes and return the HTML page it wrote."""
    dropped = ("EXAMPLE_LLM_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "GITHUB_STEP_SUMMARY")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written into examples/, not even bytecode
    html = workdir / "report.html"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "examples",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "--consistency-config=examples/consistency.yaml",
            f"--consistency-report={workdir / 'report.json'}",
            f"--consistency-cassettes={ROOT / 'cassettes'}",
            f"--consistency-html={html}",
            # examples/consistency.yaml asks for a Markdown summary beside it (the main job's output): not here
            f"--consistency-md={workdir / 'summary.md'}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,  # the example suite fails repetitions on purpose (min_pass=0 tolerates them)
    )
    if not html.is_file():
        raise SystemExit("the example suite wrote no HTML page; run it by hand to see why")
    return html


def screenshot(html: Path, out: Path, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            page.goto(html.as_uri())
            # A passing repetition of the first inconsistent task: two calls, so the panel shows a call sequence.
            row = page.locator("#grid tbody tr").first
            cells = row.locator("td.c")
            target = next((i for i in range(cells.count()) if "✓" in (cells.nth(i).text_content() or "")), 0)
            cells.nth(target).click()
            # Focusing a cell at the right scrolls the grid's box sideways; show the task column as a reader sees it.
            page.evaluate("document.querySelectorAll('.gridwrap').forEach(e => { e.scrollLeft = 0; })")
            height = min(HEIGHT, int(page.evaluate("document.documentElement.scrollHeight")))
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=True, clip={"x": 0, "y": 0, "width": WIDTH, "height": height})
        finally:
            browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "html-report.png")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        screenshot(replay_html(Path(tmp)), args.out, args.chromium)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
