"""What the session cost, as text: terminal lines, Markdown lines, an HTML section, JUnit properties.

Why one module: every view shows the same figures (dollars for the session, per task, per repetition and per
decided verdict; each task's dollars and its repetitions'; the models with no price) from the same typed result
(``summary.cost``, ``tasks[].cost_usd``, ``tasks[].repetitions[].cost_usd``); the format modules only place them.
A total with unpriced calls reads "at least", and each model with no price is named with the fix.
"""

from __future__ import annotations

import html

from pytest_consistency.model.prices import NO_PRICE, usd_text
from pytest_consistency.model.result import CostFacts, SessionSummary, TaskResult


def _amount(amount: float | None) -> str:
    return "n/a" if amount is None else usd_text(amount)


def headline(cost: CostFacts) -> str:
    """``cost $0.0123: $0.0041 per task, ...`` (``at least`` with unpriced calls)."""
    total = (
        f"at least {usd_text(cost.usd)} ({cost.unpriced_calls} call(s) unpriced)"
        if cost.at_least
        else usd_text(cost.usd)
    )
    added = f", of which {usd_text(cost.added_usd)} added by tests" if cost.added_usd else ""
    decided = (
        f"{usd_text(cost.per_decided_verdict)} per decided verdict ({cost.decided} decided)"
        if cost.per_decided_verdict is not None
        else "no decided verdict"
    )
    lower = "at least " if cost.at_least else ""
    return (
        f"cost {total}{added}: {lower}{_amount(cost.per_task)} per task, {_amount(cost.per_repetition)} per "
        f"repetition, {decided}"
    )


def unpriced_lines(cost: CostFacts) -> list[str]:
    return [NO_PRICE.format(model=model) for model in cost.unpriced_models]


def task_text(task: TaskResult) -> str:
    """A task's dollars and its repetitions' (``$0.0021 (repetitions $0.0010 $0.0011)``)."""
    at_least = f"at least {usd_text(task.cost_usd)}" if task.unpriced_calls else usd_text(task.cost_usd)
    ran = [r for r in task.repetitions if r.outcome not in ("not run", "curtailed")]
    each = " ".join(usd_text(r.cost_usd) + ("+" if r.unpriced_calls else "") for r in ran)
    return f"{at_least} (repetitions {each})" if each else at_least


def terminal_lines(summary: SessionSummary, verbosity: int = 0) -> list[tuple[str, str]]:
    """The cost line (``warn`` with unpriced calls), the models with no price, and under ``-v`` each task's line."""
    cost = summary.cost
    if cost is None:
        return []
    lines = [(headline(cost), "warn" if cost.at_least else "plain")]
    lines += [(f"  {text}", "warn") for text in unpriced_lines(cost)]
    if verbosity >= 1:
        lines += [(f"  {task.task_id}: {task_text(task)}", "plain") for task in summary.tasks]
    return lines


def markdown_head(cost: CostFacts) -> tuple[str, list[str]]:
    """The *Cost* line after its label (Markdown escapes it as any other text) and a line per model with no price."""
    return f"{headline(cost).removeprefix('cost ')} (prices as of {cost.prices_as_of})", unpriced_lines(cost)


def html_section(summary: SessionSummary) -> str:
    """The page's *Cost* section: the headline, each model with no price, and a table of the tasks' dollars."""
    cost = summary.cost
    if cost is None:
        return ""
    warnings = "".join(f'<p class="warn">{html.escape(text)}</p>' for text in unpriced_lines(cost))
    rows = "".join(
        f"<tr><td>{html.escape(t.task_id)}</td><td>{html.escape(task_text(t))}</td></tr>" for t in summary.tasks
    )
    return (
        f'<section id="cost"><h2>Cost</h2><p>{html.escape(headline(cost))} (prices as of '
        f"{html.escape(cost.prices_as_of)})</p>{warnings}"
        '<table class="plain"><thead><tr><th>priced task</th><th>US dollars (per repetition)</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></section>"
    )


def suite_properties(cost: CostFacts | None) -> list[tuple[str, str]]:
    """The suite's JUnit properties (dollars as plain numbers, ``repr`` of the float: exact)."""
    if cost is None:
        return []
    figures = [
        ("consistency.cost_usd", cost.usd),
        ("consistency.cost_usd.added", cost.added_usd),
        ("consistency.cost_usd.per_task", cost.per_task),
        ("consistency.cost_usd.per_repetition", cost.per_repetition),
        ("consistency.cost_usd.per_decided_verdict", cost.per_decided_verdict),
    ]
    properties = [(name, repr(value)) for name, value in figures if value is not None]
    properties.append(("consistency.cost.unpriced_calls", str(cost.unpriced_calls)))
    if cost.unpriced_models:
        properties.append(("consistency.cost.unpriced_models", ", ".join(cost.unpriced_models)))
    properties.append(("consistency.cost.prices_as_of", cost.prices_as_of))
    return properties
