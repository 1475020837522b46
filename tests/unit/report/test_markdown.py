"""The Markdown job summary as a pure function of summaries built from records: order, alerts, escaping, the
baseline columns, determinism and the 1 MiB limit."""

from __future__ import annotations

import dataclasses
import re

from cause_summaries import SECRET as CAUSE_SECRET
from cause_summaries import cause_summary, redacted
from markdown_it import MarkdownIt
from suites import records

from pytest_consistency.analysis.baseline import compare
from pytest_consistency.analysis.cause.attribute import advice_lines
from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.result import Analysis, SessionSummary
from pytest_consistency.report import builtin
from pytest_consistency.report.markdown import MARGIN, MAX_BYTES, inline, render

STEADY = {f"steady{i}": "PPPPP" for i in range(5)}


def summary_of(
    patterns: dict[str, str], answers: dict[str, list[object]] | None = None, **gates: float
) -> SessionSummary:
    return conclude(build_summary(records(patterns, answers, min_pass=0.6)), gates)


def on_the_point(patterns: dict[str, str], **gates: float) -> SessionSummary:
    """Gates decided on the estimate (``--consistency-gate-on=point``): a gate passes or fails, never undecided."""
    return conclude(build_summary(records(patterns, min_pass=0.6), analysis=Analysis(gate_on="point")), gates)


def html_of(text: str) -> str:
    return str(MarkdownIt("commonmark").enable("table").render(text))


def rows(table_html: str) -> list[list[str]]:
    return [
        re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S) for row in re.findall(r"<tr>(.*?)</tr>", table_html, re.S)
    ]


def test_the_builtin_markdown_format() -> None:
    fmt = builtin("markdown")
    assert fmt is not None and (fmt.name, fmt.suffix) == ("markdown", ".md")


def test_a_failed_run_says_so_first_with_the_gate_value_and_threshold() -> None:
    text = render(on_the_point({**STEADY, "flaky": "PFPPF", "broken": "FFFFF"}, consistency_gap_max=5.0))
    lines = text.splitlines()
    assert lines[0] == "## Consistency: ❌ failed" and lines[2] == "> [!CAUTION]"
    assert "> - gate --consistency-gap-max: consistency gap 8.6 pp &gt; 5.0 pp  FAILED" in lines
    assert "> - 1 task(s) failed: broken" in lines
    assert text.index("[!CAUTION]") < text.index("### Figures") < text.index("### Tasks that need a look (2 of 7)")
    assert "[!WARNING]" not in text  # no truncation, no undecided gate


def test_a_passing_run_has_no_alert() -> None:
    text = render(on_the_point(STEADY, consistency_gap_max=5.0))
    assert text.startswith("## Consistency: ✅ passed\n\nAll 5 scored task(s) met their bars; 1 gate(s) passed.")
    assert "[!" not in text and "No task was inconsistent, failed or regressed." in text


def test_an_undecided_gate_is_a_warning_and_a_failure_when_counted_so() -> None:
    reps = records({**STEADY, "flaky": "PFPPF"}, min_pass=0.6)
    counted_fail = conclude(build_summary(reps, analysis=Analysis(inconclusive="fail")), {"consistency_gap_max": 12})
    text = render(counted_fail)
    assert "> [!CAUTION]" in text and "hold 12.0 pp  UNDECIDED" in text
    assert "counted as a failure: --consistency-inconclusive=fail" in text
    counted_pass = conclude(build_summary(reps), {"consistency_gap_max": 12})  # the default: undecided is no failure
    text = render(counted_pass)
    assert text.startswith("## Consistency: ✅ passed\n\n> [!WARNING]\n> - gate --consistency-gap-max: ")
    assert "[!CAUTION]" not in text


def test_figures_render_as_a_table_with_intervals() -> None:
    summary = summary_of({**STEADY, "flaky": "PFPPF"})
    table = re.search(r"<table>.*?</table>", html_of(render(summary)), re.S)
    assert table is not None
    assert rows(table.group()) == [
        ["figure", "value", "95 % interval"],
        ["Mean@5", "93.3 %", "[77.9, 99.2] %"],
        ["pass^5", "83.3 %", "[34.2, 99.2] %"],
        ["pass@5", "100.0 %", "[71.9, 100.0] %"],
        ["consistency gap", "10.0 pp", "[0.5, 47.9] pp"],
        ["answer disagreement", "n/a", "–"],
        ["route drift", "n/a", "–"],
        ["tokens", "n/a", "–"],
    ]


def test_answers_are_escaped_shortened_and_grouped() -> None:
    long = "x" * 1000
    answers: dict[str, list[object]] = {"t|<b>": ["a|b", "<script>`x`</script>", "a|b", "line1\nline2", long]}
    text = render(summary_of({"t|<b>": "PFPFF"}, answers))
    assert "<script>" not in text and "<details><summary>t|&lt;b&gt;: 4 distinct answer(s) in 5 repetitions" in text
    html = html_of(text)
    tables = re.findall(r"<table>.*?</table>", html, re.S)
    clusters = rows(tables[-1])
    assert all(len(row) == 5 for row in clusters), clusters  # no escaped character broke a column
    assert [row[1] for row in clusters[1:]] == [
        "a|b",
        "&lt;script&gt;`x`&lt;/script&gt;",
        "line1<br>line2",
        "x" * 400 + "… (+600 characters)",
    ]
    assert [row[2:] for row in clusters[1:]] == [
        ["2", "2", "1, 3"],
        ["1", "0", "2 ✗"],
        ["1", "0", "4 ✗"],
        ["1", "0", "5 ✗"],
    ]
    assert "<script>" not in html


def test_regressions_get_baseline_status_and_p_q_columns() -> None:
    base = summary_of({**STEADY, "target": "PPPPP", "flaky": "PFPPF"})
    current = summary_of({**STEADY, "target": "FFFFF", "flaky": "PFPPF"})
    current.comparison = compare(base, current, label="base.json")
    text = render(conclude(current, {"consistency_regressions_max": 0}))
    table = next(t for t in map(rows, re.findall(r"<table>.*?</table>", html_of(text), re.S)) if t[0][0] == "task")
    assert table[0] == ["task", "passes", "pass rate 95 %", "verdict", "attribution", "cause", "baseline", "p", "q"]
    target = table[1]
    assert target[0] == "target" and target[1] == "0/5"
    assert target[5] == "–" and target[6] == "newly failing 5/5 → 0/5 <strong>REGRESSION</strong>"
    assert (target[7], target[8]) == ("0.000977", "0.00684")
    assert "### Baseline" in text and "- baseline base.json: 7 tasks in both runs; 1 significant regression(s)" in text


def test_rendering_is_deterministic_and_survives_the_report() -> None:
    summary = summary_of({**STEADY, "flaky": "PFPPF"}, {"flaky": ["a", "b", "a", {"k": 1}, None]})
    again = SessionSummary.from_dict(summary.to_dict())
    assert render(summary) == render(summary) == render(again)


def test_a_huge_run_stays_under_one_mebibyte_dropping_answer_clusters_first() -> None:
    patterns = {f"task{i:04d}": "PFPPF" for i in range(3000)}
    answers: dict[str, list[object]] = {
        task: [f"{task} answer {j} " + "lorem ipsum " * 80 for j in range(5)] for task in patterns
    }
    summary = summary_of(patterns, answers)
    text = render(summary)
    size = len(text.encode("utf-8"))
    assert MAX_BYTES - MARGIN - 10_000 < size <= MAX_BYTES
    note = text.rsplit("> [!WARNING]\n", 1)[1]
    assert re.search(r"left out (\d+) of 3000 answer clusters\.", note)
    assert "task rows" not in note and "JSON report" in note and "HTML report" in note
    assert text.count("\n| task | passes") == 1 and len(re.findall(r"^\| task\d{4} ", text, re.M)) == 3000
    kept = int(re.findall(r"left out (\d+) of 3000", note)[0])
    assert text.count("<details>") == 3000 - kept

    small = render(summary, max_bytes=200_000)
    assert len(small.encode("utf-8")) <= 200_000 and "<details>" not in small
    # every task made no call, so each has a cause line (outside the model): they go before the answer clusters
    match = re.search(
        r"left out (\d+) of 3000 task rows, 3000 of 3000 cause lines and trajectory trees, 3000 of 3000 answer "
        r"clusters\.",
        small,
    )
    assert match is not None
    assert len(re.findall(r"^\| task\d{4} ", small, re.M)) == 3000 - int(match.group(1))


def test_the_verdicts_failed_task_ids_errors_and_warnings_are_budgeted_too() -> None:
    """The alert lists up to ten failed tasks, errors and warnings inline: ten ids of 200 kB are 2 MB, which GitHub
    refuses whole (the step then has no summary at all)."""
    patterns = {f"task{i}-" + "x" * 200_000: "FFFFF" for i in range(12)}
    summary = summary_of(patterns)
    summary.errors = [f"error {i} " + "e" * 300_000 for i in range(12)]
    summary.warnings = [f"warning {i} " + "w" * 300_000 for i in range(12)]
    text = render(summary)
    assert len(text.encode("utf-8")) <= MAX_BYTES
    assert "12 task(s) failed: task0-xxx" in text and "and 2 more" in text
    assert "error 0 eee" in text and "warning 0 www" in text
    small = render(summary, max_bytes=100_000)
    assert len(small.encode("utf-8")) <= 100_000 and small.startswith("## Consistency: ❌ failed")


def test_a_task_id_with_blank_lines_cannot_escape_its_details_block() -> None:
    """A blank line ends an HTML block in GFM: what follows it inside ``<summary>`` would render as live Markdown."""
    evil = "task\n\n[click me](https://evil.example/)\n\n# heading"
    summary = summary_of({evil: "PFPPF"}, {evil: ["a", "b", "a", "a", "b"]})
    text = render(summary)
    assert text.count("<details>") == 1
    page = html_of(text)
    assert "<a " not in page and "<h1" not in page
    (summary_line,) = [line for line in text.splitlines() if line.startswith("<details>")]
    assert "[click me](https://evil.example/)" in summary_line and summary_line.endswith("</summary>")


def test_an_answer_with_a_lone_surrogate_is_written_as_its_escape() -> None:
    """``os.fsdecode`` gives lone surrogates for bytes that are not UTF-8; UTF-8 cannot encode them."""
    summary = summary_of({"fs": "PPPFP"}, {"fs": ["caf\udcff", "caf\udcff", "cafe", "cafe", "caf\udcff"]})
    text = render(summary)
    assert "caf\\udcff" in text and text.encode("utf-8")
    assert text.rstrip().endswith("the JSON report holds the text exactly.")  # an escape is never silent
    assert "not UTF-8" not in render(summary_of({"fs": "PPPFP"}, {"fs": ["cafe"] * 5}))


def test_why_repetitions_part_adds_up_to_the_gap_printed_with_one_line_of_advice_per_cause() -> None:
    summary = cause_summary()
    text = render(summary)
    tables = {t[0][0]: t for t in map(rows, re.findall(r"<table>.*?</table>", html_of(text), re.S))}
    assert tables["cause"] == [
        ["cause", "tasks", "points of the gap", "95 % interval"],
        ["input", "1", "16.0 pp", "[0.4, 16.0]"],
        ["environment", "1", "8.0 pp", "[1.1, 10.7]"],
        ["sampling", "1", "12.0 pp", "[2.9, 12.0]"],
        ["outside the model", "1", "0.0 pp", "[0.0, 10.7]"],
        ["<strong>all causes</strong>", "4", "<strong>36.0 pp</strong>", ""],
    ]
    assert ["consistency gap", "36.0 pp"] == tables["figure"][4][:2]  # the total is the gap printed
    assert "Intervals conditional on the causes named" in text  # the caveat, once, under the table
    advice = advice_lines(summary.tasks, summary.causes, summary.consistency_gap_pp)
    assert len(advice) == 4
    for line in advice:
        assert f"- {inline(line)}" in text.splitlines()
    assert text.index("### Figures") < text.index("### Why repetitions part") < text.index("### Tasks that need")
    causes = {row[0]: row[5] for row in tables["task"][1:]}
    assert causes == {
        "sampled": "sampling, step 1",
        "clock": "input, step 1",
        "search": "environment, step 2",
        "answers": "outside the model",
    }


def test_each_inconsistent_task_has_its_cause_line_where_its_repetitions_part() -> None:
    summary = cause_summary()
    text = render(summary)
    part = text[text.index("### Where repetitions part") :]
    for task in summary.tasks:
        if task.why is None:
            assert task.task_id == "steady" and f"- {task.task_id}:" not in part
            continue
        assert inline(task.why.line) in part, task.task_id
    assert "- answers: all 5 repetitions took the same 2 step(s)" in part
    assert "\n  - cause outside the model after the last step: all 5 repetitions sent the same" in part


def test_a_consistent_suite_has_no_why_section() -> None:
    text = render(summary_of(STEADY))
    assert "Why repetitions part" not in text and "| cause |" not in text


def test_a_cause_line_is_escaped_and_a_key_in_its_span_redacted() -> None:
    raw = cause_summary(CAUSE_SECRET)
    text = render(redacted(raw, CAUSE_SECRET))
    assert CAUSE_SECRET not in text
    assert '"…&lt;redacted&gt; Now: 09:11" (repetition 1)' in text
    hostile = cause_summary()
    clock = next(t for t in hostile.tasks if t.task_id == "clock")
    assert clock.why is not None
    clock.why = dataclasses.replace(clock.why, detail="<img src=x onerror=alert(1)> | `code` [link](http://x)")
    shown = render(hostile)
    assert "<img" not in shown and "[link](http://x)" not in shown
    assert "<img" not in html_of(shown) and 'href="http://x"' not in html_of(shown)


def test_a_route_change_has_the_arrow_of_every_other_change() -> None:
    """The analysis writes 'old -> new' (the terminal is ASCII); escaped for the page it read '-&gt;' beside the
    '→' of the status column."""
    base = summary_of({"a": "PPPPP"})
    current = summary_of({"a": "PPPPP"})
    compared = compare(base, current, label="base.json")
    current.comparison = dataclasses.replace(compared, route_changes=["model: m -> m2"])
    text = render(current)
    assert "- route change: model: m → m2" in text and "&gt;" not in text


def test_the_summary_gives_the_pass_hat_k_curve() -> None:
    from pytest_consistency.report.markdown import FORMAT

    text = FORMAT.render(build_summary(records({"a": "PPPPF", "b": "PPPPP", "c": "FFFFF"})))
    assert "pass^k by k: pass^1 60.0 %, pass^2 53.3 %, pass^3 46.7 %, pass^4 40.0 %, pass^5 33.3 %." in text
