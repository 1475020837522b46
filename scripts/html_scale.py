"""Measure the HTML report at scale: file size, Python render time, and Chromium load and interaction times.

Why: the page embeds every repetition (answers, calls) and draws one grid cell per repetition, so its cost grows
with tasks x repetitions; a report of 500 tasks x 10 repetitions must still open quickly from disk. This builds
synthetic summaries (three calls per repetition, answers of up to a few hundred characters, about half the
tasks inconsistent; with ``--worst`` every repetition answers differently, so every task is inconsistent), renders
them, opens each page from ``file://`` in headless Chromium (/usr/bin/chromium through Playwright) and prints one
row per size:

    python scripts/html_scale.py [--sizes 50x5,500x10,1000x10] [--worst] [--chromium /usr/bin/chromium] [--keep DIR]

Times are wall clock on this machine, best of ``--repeat`` runs; DOMContentLoaded and load are read from the
page's Navigation Timing, the first screenshot and the interactions are timed around the Playwright calls.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import RouteSettings, RunFacts, SessionSummary
from pytest_consistency.report.html import render

BASE = "https://gateway.example.internal/v1"
WORDS = "the meeting is on friday at three with alice about the invoice budget review calendar".split()


def synthetic(tasks: int, n: int, worst: bool = False, seed: int = 7) -> SessionSummary:
    """A session of ``tasks`` tasks x ``n`` repetitions with calls and answers, from a fixed seed."""
    rng = random.Random(seed)
    reps = []
    for t in range(tasks):
        rate = rng.choice([1.0, 1.0, 0.9, 0.6, 0.3, 0.0])
        # Consistent tasks give one answer; the others one of up to 4 (every repetition its own with --worst).
        vocabulary = n if worst else (rng.randint(1, 4) if 0 < rate < 1 else 1)
        answers = [
            {
                "app": rng.choice(["mail", "calendar", "shopping"]),
                "answer": " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 60))),
            }
            for _ in range(vocabulary)
        ]
        for r in range(1, n + 1):
            passed = rng.random() < rate
            answer = answers[r - 1] if worst else rng.choice(answers)
            calls = [
                CallRecord(
                    method="POST",
                    url=BASE + path,
                    base_url=BASE,
                    key_fingerprint="sha256:0f1e2d3c",
                    model_requested="gpt-4o-mini",
                    model_served="gpt-4o-mini-2024-07-18",
                    status=200,
                    latency_ms=round(rng.uniform(200, 2000), 3),
                    prompt_tokens=rng.randint(50, 900),
                    completion_tokens=rng.randint(3, 300),
                    total_tokens=0,
                )
                for path in ("/chat/completions", "/chat/completions", "/embeddings")
            ]
            for c in calls:
                c.total_tokens = c.prompt_tokens + c.completion_tokens
            reps.append(
                RepetitionResult(
                    task_id=f"tests/agent/test_suite_{t // 50:02d}.py::test_task[task-{t:04d}]",
                    nodeid=f"tests/agent/test_suite_{t // 50:02d}.py::test_task[task-{t:04d}-rep{r}]",
                    repeat=r,
                    n=n,
                    k=n,
                    min_pass=0.0,
                    order=t,
                    outcome="passed" if passed else "failed",
                    answer_recorded=True,
                    answer=answer,
                    normalized=answer,
                    duration=round(rng.uniform(0.5, 8), 3),
                    calls=calls,
                )
            )
    route = RouteSettings(BASE, "gpt-4o-mini", "sha256:0f1e2d3c", "OPENAI_API_KEY", False, 60.0, 2, None, None, 0)
    return build_summary(reps, run=RunFacts(route=route))


def best(repeat: int, action: Any) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def browse(browser: Any, path: Path) -> dict[str, float]:
    """Open the page from disk; return its timings in ms."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    start = time.perf_counter()
    page.goto(path.as_uri(), wait_until="load")
    timing = page.evaluate(
        "(() => { const t = performance.getEntriesByType('navigation')[0];"
        " return {dcl: t.domContentLoadedEventEnd, load: t.loadEventEnd}; })()"
    )
    page.screenshot()
    shot = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    page.locator("#grid tbody tr").nth(3).locator("td.c").nth(2).click()
    page.wait_for_selector("#details table")
    click = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    page.click("button[data-sort=gap]")
    page.evaluate("document.body.offsetHeight")  # force the layout of the re-ordered rows
    sort = (time.perf_counter() - start) * 1000
    context.close()
    return {"dcl": timing["dcl"], "load": timing["load"], "shot": shot, "click": click, "sort": sort}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50x5,500x10,1000x10", help="TASKSxN,... (default: %(default)s)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measure; the best is shown")
    parser.add_argument("--worst", action="store_true", help="every repetition gives its own answer")
    parser.add_argument("--keep", type=Path, help="write the pages to this directory instead of a temporary one")
    args = parser.parse_args()
    sizes = [tuple(int(x) for x in size.split("x")) for size in args.sizes.split(",")]

    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        try:
            for tasks, n in sizes:
                summary = synthetic(tasks, n, args.worst)
                text = render(summary)
                render_s = best(args.repeat, lambda s=summary: render(s))
                path = folder / f"report-{tasks}x{n}.html"
                path.write_text(text, encoding="utf-8")
                runs = [browse(browser, path) for _ in range(args.repeat)]
                timing = {key: min(run[key] for run in runs) for key in runs[0]}
                rows.append((f"{tasks} x {n}", len(text.encode()), render_s * 1000, timing))
        finally:
            browser.close()

    header = (
        f"{'tasks x n':<12}{'size':>10}{'render':>10}{'DOMContentLoaded':>18}{'load':>9}{'1st shot':>10}"
        f"{'click':>8}{'sort':>8}"
    )
    print(header)
    print("-" * len(header))
    for label, size, render_ms, t in rows:
        print(
            f"{label:<12}{size / 1e6:>8.2f}MB{render_ms:>8.0f}ms{t['dcl']:>16.0f}ms{t['load']:>7.0f}ms"
            f"{t['shot']:>8.0f}ms{t['click']:>6.0f}ms{t['sort']:>6.0f}ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
