"""The experiment table of ``pytest-consistency compare``: one row per report, each tested against the first.

This is the users' controlled experiment (groups A to D: route not pinned, key pinned, route pinned, keys rotated)
as a table: model, base URL, key fingerprint, n, tasks, Mean@k, pass^k and the gap with their intervals, answer
disagreement, route drift, retries, errors, tokens and dollars (the run's and per decided verdict), the gap by cause
(one column per cause: the points of the gap attributed to it, rounded so that a row's causes add up to the gap it
prints, with their interval, conditional on the causes named; ``-`` for a report made before causes were named); and
for every row after the first, its difference from the first: the gap change with its paired interval, significant
per-task regressions, and McNemar's p on pass^n flips. Rows are typed (:class:`Row`), and the text, Markdown and
JSON renderings read the same rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_consistency.analysis.baseline import compare
from pytest_consistency.analysis.cause.attribute import rounded_shares, shown_interval
from pytest_consistency.analysis.judge_change import change_lines
from pytest_consistency.analysis.merge import merge_reports
from pytest_consistency.model.cause import CAUSES
from pytest_consistency.model.prices import usd_text
from pytest_consistency.model.result import Analysis, Comparison, SessionSummary
from pytest_consistency.model.serial import to_data
from pytest_consistency.stats.interval import Interval

FORMATS = ("text", "markdown", "json")


@dataclass(frozen=True)
class Row:
    label: str
    model: str | None
    base_url: str | None
    key: str | None
    n: int | None
    tasks: int
    #: The scored tasks' verdicts: ``8 pass, 1 fail, 1 undecided`` (undecided: a min_rate task the repetitions could
    #: not decide).
    verdicts: str
    mean_at_k: float | None
    mean_at_k_interval: Interval | None
    pass_hat_k: float | None
    pass_hat_k_interval: Interval | None
    gap_pp: float | None
    gap_interval: Interval | None
    answer_disagreement_pp: float | None
    route_drift_pp: float | None
    retries: int | None
    errors: int | None
    total_tokens: int | None
    tokens_per_task: float | None
    #: US dollars the run cost (a lower bound while ``unpriced_calls`` is not 0) and per decided verdict; None when
    #: nothing was priced (no token used, or a report made before prices).
    cost_usd: float | None
    unpriced_calls: int | None
    cost_per_decided_verdict: float | None
    #: Points of the gap per cause (every cause, in :data:`CAUSES` order), rounded so that they add up to the gap
    #: as printed; None when the report names no cause (made before causes, or no task scored).
    causes: dict[str, float] | None
    #: The interval of each cause's points (pp), conditional on the causes named; None per cause in a report made
    #: before they had one, and for the whole row when it names no cause.
    cause_intervals: dict[str, Interval | None] | None
    #: Against the first row (None for the first row itself).
    versus_first: Comparison | None


def _reanalysed(label: str, summary: SessionSummary, analysis: Analysis) -> SessionSummary:
    if summary.analysis == analysis:
        return summary
    return merge_reports([(label, summary)], analysis, allow_mixed=True)


def rows(reports: Sequence[tuple[str, SessionSummary]], analysis: Analysis) -> list[Row]:
    summaries = [(label, _reanalysed(label, s, analysis)) for label, s in reports]
    first_label, first = summaries[0]
    result = []
    for index, (label, s) in enumerate(summaries):
        route, iv = s.route, s.intervals
        result.append(
            Row(
                label=label,
                model=route.settings.model if route else None,
                base_url=route.settings.base_url if route else None,
                key=_keys(s),
                n=s.repeat,
                tasks=s.task_count,
                verdicts=_verdicts(s),
                mean_at_k=s.mean_at_k,
                mean_at_k_interval=iv.mean_at_k if iv else None,
                pass_hat_k=s.pass_hat_k,
                pass_hat_k_interval=iv.pass_hat_k if iv else None,
                gap_pp=s.consistency_gap_pp,
                gap_interval=iv.gap_pp if iv else None,
                answer_disagreement_pp=s.answer_disagreement_pp,
                route_drift_pp=route.drift_pp if route else None,
                retries=route.retries if route else None,
                errors=sum(route.errors.values()) if route else None,
                total_tokens=route.total_tokens if route else None,
                tokens_per_task=route.avg_tokens_per_task if route else None,
                cost_usd=s.cost.usd if s.cost else None,
                unpriced_calls=s.cost.unpriced_calls if s.cost else None,
                cost_per_decided_verdict=s.cost.per_decided_verdict if s.cost else None,
                causes=_causes(s),
                cause_intervals=None if s.causes is None else {c: _interval(s, c) for c in CAUSES},
                versus_first=None if index == 0 else compare(first, s, first_label),
            )
        )
    return result


def _verdicts(summary: SessionSummary) -> str:
    counts = {word: sum(t.verdict == word for t in summary.tasks) for word in ("pass", "fail", "undecided", "xfail")}
    return ", ".join(f"{count} {word}" for word, count in counts.items() if count or word in ("pass", "fail")) or "-"


def _causes(summary: SessionSummary) -> dict[str, float] | None:
    if summary.causes is None:
        return None
    shown = rounded_shares(summary.causes, gap=summary.consistency_gap_pp)
    return {cause: shown.get(cause, 0.0) for cause in CAUSES}


def _interval(summary: SessionSummary, cause: str) -> Interval | None:
    """The share's interval as printed beside its rounded points (:func:`.attribute.shown_interval`)."""
    share = (summary.causes or {}).get(cause)
    if share is None or not share.tasks:  # no task: 0, nothing to bound
        return None
    return shown_interval(share, (_causes(summary) or {}).get(cause, share.gap_pp))


def _keys(summary: SessionSummary) -> str | None:
    """The key fingerprints the calls used when there were several (group D), else the route's."""
    used = sorted(
        {c.key_fingerprint for t in summary.tasks for r in t.repetitions for c in r.calls if c.key_fingerprint}
    )
    if len(used) > 1:
        return f"{len(used)} keys: " + ", ".join(used)
    return summary.route.key_shown if summary.route else None


def _dollars(usd: float | None, unpriced: int | None) -> str:
    """``$0.0374``, ``at least $0.0374`` with unpriced calls, ``unknown`` when nothing was priced (never $0)."""
    if usd is None:
        return "-"
    if unpriced and not usd:
        return "unknown"
    return f"at least {usd_text(usd)}" if unpriced else usd_text(usd)


def _num(value: float | int | None, spec: str = ".1f", unit: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{unit}"


def _with(value: float | None, interval: Interval | None, scale: float) -> str:
    if value is None:
        return "-"
    text = f"{value * scale:.1f}"
    return text if interval is None else f"{text} [{interval.low * scale:.1f}, {interval.high * scale:.1f}]"


def _versus(c: Comparison | None) -> str:
    if c is None:
        return "(reference)"
    if c.untested is not None:
        return "not tested: curtailed counts (--consistency-adaptive)"
    gap = "gap n/a" if c.gap_change_pp is None else f"gap {c.gap_change_pp:+.1f} pp"
    if c.gap_change_interval is not None:
        gap += f" [{c.gap_change_interval.low:+.1f}, {c.gap_change_interval.high:+.1f}]"
    flips = "" if c.flips_p_value is None else f"; McNemar p={c.flips_p_value:.3g}"
    return f"{gap}; {c.regressions} regression(s) ({c.test}, q<={c.alpha:g}){flips}"


HEADERS = (
    "group",
    "model",
    "base URL",
    "key",
    "n",
    "tasks",
    "verdicts",
    "Mean@k %",
    "pass^k %",
    "gap pp",
    "disagree pp",
    "drift pp",
    "retries",
    "errors",
    "tokens",
    "tokens/task-rep",
    "cost",
    "cost/decided",
    *(f"{cause} pp" for cause in CAUSES),
    "vs first",
)


def _cells(row: Row) -> list[str]:
    return [
        row.label,
        row.model or "-",
        row.base_url or "-",
        row.key or "-",
        _num(row.n, "d"),
        str(row.tasks),
        row.verdicts,
        _with(row.mean_at_k, row.mean_at_k_interval, 100),
        _with(row.pass_hat_k, row.pass_hat_k_interval, 100),
        _with(row.gap_pp, row.gap_interval, 1),
        _num(row.answer_disagreement_pp),
        _num(row.route_drift_pp),
        _num(row.retries, "d"),
        _num(row.errors, "d"),
        _num(row.total_tokens, "d"),
        _num(row.tokens_per_task),
        _dollars(row.cost_usd, row.unpriced_calls),
        _dollars(row.cost_per_decided_verdict, row.unpriced_calls),
        *(
            "-" if row.causes is None else _with(row.causes[cause], (row.cause_intervals or {}).get(cause), 1)
            for cause in CAUSES
        ),
        _versus(row.versus_first),
    ]


def comparison_table(reports: Sequence[tuple[str, SessionSummary]], analysis: Analysis, fmt: str = "text") -> str:
    table = rows(reports, analysis)
    target = "this suite of tasks" if analysis.target == "suite" else "the population of tasks"
    note = f"intervals: {analysis.confidence * 100:g} % confidence, for {target}"
    if fmt == "json":
        return json.dumps({"analysis": to_data(analysis), "rows": [to_data(r) for r in table]}, indent=2)
    cells = [_cells(row) for row in table]
    judge = _judge_lines(table)
    if fmt == "markdown":
        lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
        judged = [f"- {text.replace('->', '→')}" for text in judge]
        return "\n".join([*lines, "", *judged, *([""] if judged else []), note])
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(HEADERS)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(HEADERS, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join([*lines, *judge, note])


def _judge_lines(table: Sequence[Row]) -> list[str]:
    """Below the table, each later row's judge figures against the first's (:mod:`.judge_change`): per task where
    both re-judged, one line where only one did, none where neither did."""
    first = table[0].label
    return [
        f"{row.label} vs {first}: {text}"
        for row in table
        if row.versus_first is not None
        for text in change_lines(row.versus_first)
    ]
