"""analysis.compare_table: the experiment A to D as one row per run, and one column per cause (issue 28)."""

from __future__ import annotations

import json
from dataclasses import replace

from cause_summaries import cause_summary

from pytest_consistency.analysis.compare_table import HEADERS, comparison_table, rows
from pytest_consistency.model.cause import CAUSES


def test_one_column_per_cause_whose_points_add_up_to_the_gap_printed() -> None:
    summary = cause_summary()
    before = replace(cause_summary(), causes=None)  # a report made before causes were named
    table = rows([("A", summary), ("B", before)], summary.analysis)
    assert table[0].causes is not None
    assert list(table[0].causes.items()) == list(zip(CAUSES, [0.0, 16.0, 8.0, 12.0, 0.0, 0.0], strict=True))
    assert f"{sum(table[0].causes.values()):.1f}" == f"{summary.consistency_gap_pp:.1f}"
    assert table[1].causes is None
    assert [h for h in HEADERS if h.endswith(" pp") and h[:-3] in CAUSES] == [f"{c} pp" for c in CAUSES]


def test_the_text_markdown_and_json_renderings_carry_the_causes() -> None:
    summary = cause_summary()
    reports = [("A", summary), ("B", replace(cause_summary(), causes=None))]
    text = comparison_table(reports, summary.analysis).splitlines()
    head, first, second = text[0], text[1], text[2]
    # each cause with a task has its interval beside its points, conditional on the causes named; route has none
    # (judge, the last cause, has no task: no interval either)
    shown = ["0.0", "16.0 [0.4, 16.0]", "8.0 [1.1, 10.7]", "12.0 [2.9, 12.0]", "0.0 [0.0, 10.7]", "0.0"]
    assert first[head.index("route pp") :].startswith("  ".join(shown[:1]))
    assert all(cell in first for cell in shown)
    assert second[head.index("route pp") :].split()[:6] == ["-"] * 6
    markdown = comparison_table(reports, summary.analysis, "markdown").splitlines()
    cells = [c.strip() for c in markdown[2].strip("|").split("|")]
    header = [c.strip() for c in markdown[0].strip("|").split("|")]
    assert [cells[header.index(f"{c} pp")] for c in CAUSES] == shown
    data = json.loads(comparison_table(reports, summary.analysis, "json"))
    assert data["rows"][0]["causes"] == {c: v for c, v in zip(CAUSES, [0.0, 16.0, 8.0, 12.0, 0.0, 0.0], strict=True)}
    assert data["rows"][0]["cause_intervals"]["route"] is None
    assert data["rows"][0]["cause_intervals"]["sampling"] == {
        "low": summary.causes["sampling"].interval.low,  # type: ignore[index, union-attr]
        "high": summary.causes["sampling"].interval.high,  # type: ignore[index, union-attr]
    }
    assert data["rows"][1]["causes"] is None and data["rows"][1]["cause_intervals"] is None


def test_each_row_counts_its_verdicts_undecided_among_them() -> None:
    from suites import records

    from pytest_consistency.analysis.summary import build_summary

    rated = build_summary(records({"a": "P" * 20, "b": "P" * 15 + "F" * 5, "c": "PF" * 10}, min_rate=0.8))
    (row,) = rows([("A", rated)], rated.analysis)
    assert row.verdicts == "1 pass, 1 fail, 1 undecided"
    assert "1 pass, 1 fail, 1 undecided" in comparison_table([("A", rated)], rated.analysis, "markdown")


def test_each_row_says_what_its_run_cost_at_least_or_unknown_never_zero_for_no_price() -> None:
    from pytest_consistency.model.result import CostFacts

    def cost(usd: float, unpriced: int, decided: int = 2) -> CostFacts:
        return CostFacts(
            usd=usd,
            calls_usd=usd,
            added_usd=0.0,
            unpriced_calls=unpriced,
            unpriced_models=["local-model"] if unpriced else [],
            per_task=usd / 3,
            per_repetition=usd / 15,
            decided=decided,
            per_decided_verdict=usd / decided,
            prices_as_of="2026-12-07",
        )

    summary = cause_summary()
    reports = [
        ("priced", replace(summary, cost=cost(0.0374, 0))),
        ("partly", replace(summary, cost=cost(0.0374, 4))),
        ("local", replace(summary, cost=cost(0.0, 12))),
        ("before prices", replace(summary, cost=None)),
    ]
    table = rows(reports, summary.analysis)
    assert [(r.cost_usd, r.unpriced_calls, r.cost_per_decided_verdict) for r in table] == [
        (0.0374, 0, 0.0187),
        (0.0374, 4, 0.0187),
        (0.0, 12, 0.0),
        (None, None, None),
    ]
    markdown = comparison_table(reports, summary.analysis, "markdown").splitlines()
    header = [c.strip() for c in markdown[0].strip("|").split("|")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in markdown[2:6]]
    shown = [(row[header.index("cost")], row[header.index("cost/decided")]) for row in cells]
    assert shown == [
        ("$0.0374", "$0.0187"),
        ("at least $0.0374", "at least $0.0187"),
        ("unknown", "unknown"),
        ("-", "-"),
    ]
    data = json.loads(comparison_table(reports, summary.analysis, "json"))
    assert [r["cost_usd"] for r in data["rows"]] == [0.0374, 0.0374, 0.0, None]


def test_the_judge_figures_of_every_later_row_against_the_first_below_the_table() -> None:
    from suites import records

    from pytest_consistency.analysis.judge import judge_summary
    from pytest_consistency.analysis.summary import build_summary

    def judged(pattern: str):  # type: ignore[no-untyped-def]
        reps = records({"a": pattern})
        summary = build_summary(reps)
        summary.judge = judge_summary(reps, samples=2)
        return summary

    flipping, steady = judged("PPFPPP"), judged("PPPPPP")
    plain = build_summary(records({"a": "PPPPPP"}))
    reports = [("A", flipping), ("B", steady), ("C", plain)]
    text = comparison_table(reports, flipping.analysis).splitlines()
    judge = [line for line in text if " vs A: judge" in line]
    assert judge[0].startswith("B vs A: judge a: flip rate 33.3 % -> 0.0 % (-33.3 pp); judge's part of the gap ")
    assert judge[1:] == [
        "C vs A: judge: only the baseline has judge figures (this run is no rejudge session): the judge is not compared"
    ]
    assert text[-1].startswith("intervals: ")
    markdown = comparison_table(reports, flipping.analysis, "markdown")
    assert "\n- B vs A: judge a: flip rate 33.3 % → 0.0 % (-33.3 pp)" in markdown
    assert "\n- C vs A: judge: only the baseline has judge figures" in markdown
    data = json.loads(comparison_table(reports, flipping.analysis, "json"))
    [change] = data["rows"][1]["versus_first"]["judge"]
    assert (change["task_id"], change["baseline_flip_rate"], change["current_flip_rate"]) == ("a", 1 / 3, 0.0)
    assert data["rows"][2]["versus_first"]["judge_missing"].startswith("only the baseline has judge figures")
    # Neither re-judged: not a line more.
    assert " vs A: " not in comparison_table([("A", plain), ("B", plain)], plain.analysis)
