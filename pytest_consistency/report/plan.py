"""The plan before the run, as text (a plain table) and as JSON (the typed :class:`..analysis.plan.Plan`, serialised).

Renders only: every figure is computed in :mod:`..analysis.plan`.
"""

from __future__ import annotations

import json

from pytest_consistency.analysis.plan import Plan, TaskPlan
from pytest_consistency.model.prices import NO_PRICE, usd_text
from pytest_consistency.model.serial import to_data

#: The JSON plan's schema.
PLAN_SCHEMA = "pytest-consistency/plan/1"


def _percent(chance: float | None) -> str:
    return "n/a" if chance is None else f"{100.0 * chance:.1f}%"


def _number(value: float | None, digits: int = 0) -> str:
    return "unknown" if value is None else f"{value:,.{digits}f}"


def _usd(task: TaskPlan) -> str:
    if task.expected_usd is not None:
        return usd_text(task.expected_usd)
    if task.unpriced_models:
        return "no price"
    return "unknown"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(row: list[str]) -> str:
        cells = (
            cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        return "  ".join(cells).rstrip()

    return [line(row) for row in rows]


def plan_lines(plan: Plan) -> list[str]:
    """The plan as a plain table, a line per task, then the gates, the totals and what is assumed."""
    mode = f"sequential (alpha {plan.alpha:g}; n is the cap)" if plan.sequential else f"fixed n (alpha {plan.alpha:g})"
    lines = [f"consistency plan from {plan.source}: {mode}, concurrency {plan.concurrency}"]
    header = ["task", "bar", "history", "n", "P(decided)", f"n@{plan.power:g}", "reps", "tokens", "usd", "minutes"]
    rows = [header]
    for t in plan.tasks:
        rows.append(
            [
                t.task_id,
                t.bar,
                t.history or ("cassettes" if t.cassettes else "none"),
                str(t.n),
                _percent(t.decided) + ("*" if t.bar.startswith("min_pass") else ""),
                "none" if t.n_to_decide is None else str(t.n_to_decide),
                _number(t.expected_repetitions, 1),
                _number(t.expected_tokens),
                _usd(t),
                _number(t.expected_minutes, 1),
            ]
        )
    lines += _table(rows)
    if any(t.bar.startswith("min_pass") for t in plan.tasks):
        lines.append("* min_pass is a rule on the count, always decided: the chance shown is of a PASS")
    for t in plan.tasks:
        if t.assumed:
            lines.append(f"{t.task_id}: {t.assumed}")
    for model in plan.unpriced_models:
        lines.append(NO_PRICE.format(model=model))
    for g in plan.gates:
        value = "n/a" if g.value is None else f"{g.value:g}"
        head = f"gate {g.option} {g.threshold:g}: last run {value} ({g.state})"
        if g.decided is not None:
            head += f", P(decided) at the planned n {_percent(g.decided)}"
        if g.state == "undecided":
            head += ", " + ("no n is likely to decide it" if g.n_to_decide is None else f"n = {g.n_to_decide} would")
        lines.append(head + (f"; {g.note}" if g.note else ""))

    def at_least(complete: bool) -> str:
        return "" if complete else "at least "

    usd = usd_text(plan.expected_usd) if plan.expected_usd or plan.usd_complete else "unknown"
    lines.append(
        f"total: {plan.expected_repetitions:,.1f} repetitions, {at_least(plan.tokens_complete)}"
        f"{plan.expected_tokens:,.0f} tokens, {at_least(plan.usd_complete)}{usd}, "
        f"{at_least(plan.minutes_complete)}{plan.expected_minutes:,.1f} minutes"
    )
    return lines


def plan_text(plan: Plan) -> str:
    return "\n".join(plan_lines(plan)) + "\n"


def plan_json(plan: Plan) -> str:
    """The plan as JSON: ``schema`` and the :class:`Plan` serialised field by field (:func:`..model.serial.to_data`)."""
    return json.dumps({"schema": PLAN_SCHEMA, "plan": to_data(plan)}, indent=2, allow_nan=False) + "\n"
