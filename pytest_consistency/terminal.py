"""The terminal summary section, as plain lines so it can be tested without a terminal."""

from __future__ import annotations

from .records import SessionSummary, TaskResult


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f} %"


def pp(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} pp"


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def verdict_text(task: TaskResult) -> str:
    text = task.verdict
    if task.verdict == "pass" and task.passes < task.scored:
        text = f"pass (min_pass {task.min_pass:g})"
    if task.verdict == "xfail":
        text = "xfail (expected failure)"
    if task.attribution:
        text += f", {task.attribution}"
    return text


def task_rows(summary: SessionSummary, width: int) -> list[str]:
    fixed = 8 + 9 + 2
    verdicts = [verdict_text(t) for t in summary.tasks]
    verdict_width = max([7, *(len(v) for v in verdicts)])
    id_width = max(20, width - fixed - verdict_width - 1)
    rows = [f"{'task':<{id_width}} {'passes':>7} {'answers':>8}  verdict"]
    for task, verdict in zip(summary.tasks, verdicts, strict=True):
        if task.errors:
            answers = "error"  # could not be compared: named on an ``error:`` line below
        else:
            answers = "-" if task.distinct_answers is None else str(task.distinct_answers)
        passes = f"{task.passes}/{task.scored}" if task.scored else "-"
        rows.append(f"{_shorten(task.task_id, id_width):<{id_width}} {passes:>7} {answers:>8}  {verdict}")
    return rows


def overall_lines(summary: SessionSummary) -> list[str]:
    k = "k" if summary.k is None else str(summary.k)
    n = "mixed" if summary.repeat is None else str(summary.repeat)
    if summary.task_count:
        scored = f"tasks {summary.task_count}, repetitions n={n}, scored at k={'mixed' if summary.k is None else k}"
    else:
        scored = "tasks 0, nothing scored"
    lines = [
        scored + (" (session interrupted: partial results)" if summary.interrupted else ""),
        f"Mean@{k} {pct(summary.mean_at_k)}   pass^{k} {pct(summary.pass_hat_k)}   pass@{k} {pct(summary.pass_at_k)}",
        f"consistency gap {pp(summary.consistency_gap_pp)}   answer disagreement {pp(summary.answer_disagreement_pp)}",
    ]
    lines.extend(summary.extra.get("terminal_lines", []))
    if not summary.gates:
        lines.append("gates: none set")
    for gate in summary.gates:
        lines.append(f"gate {gate.option}: {gate.describe()}  {'ok' if gate.passed else 'FAILED'}")
    lines.extend(f"warning: {text}" for text in summary.warnings)
    return lines


def render(summary: SessionSummary, verbosity: int, width: int = 80) -> list[str]:
    """All lines of the section; ``-q`` (verbosity < 0) keeps only the overall figures and gates."""
    lines: list[str] = []
    if verbosity >= 0 and summary.tasks:
        lines.extend(task_rows(summary, width))
        lines.append("")
    lines.extend(overall_lines(summary))
    return lines
