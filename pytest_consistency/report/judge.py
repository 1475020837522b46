"""The rejudge figures as text: a ``judge`` block per task and the suite's gap split, for the terminal and Markdown.

Why one module: both views show the same lines from the same typed result (:class:`~..model.judge.JudgeSummary`);
the format modules only place them.
"""

from __future__ import annotations

import html

from pytest_consistency.model.judge import JudgeFigures, JudgeSummary, TaskJudge
from pytest_consistency.model.user import UserFigures
from pytest_consistency.report.wrap import wrapped
from pytest_consistency.stats.interval import Interval


def percent_text(value: float | None, interval: Interval | None) -> str:
    """A rate in percent with its interval (the judge's, or the agent's on a held user script)."""
    if value is None:
        return "n/a (no repetition with two verdicts)"
    shown = f"{value * 100:.1f} %"
    return shown if interval is None else f"{shown} [{interval.low * 100:.1f}, {interval.high * 100:.1f}]"


def kappa_text(f: JudgeFigures | UserFigures) -> str:
    """Fleiss' kappa between samples with its interval; undefined (never a number) when every sample agreed."""
    if f.kappa is None:
        return "undefined (every sample gave one outcome)" if f.repetitions else "n/a"
    if f.kappa_interval is None:
        return f"{f.kappa:.2f}"
    return f"{f.kappa:.2f} [{f.kappa_interval.low:.2f}, {f.kappa_interval.high:.2f}]"


def split_text(f: JudgeFigures) -> str:
    if f.observed_gap_pp is None or f.majority_gap_pp is None or f.judge_gap_pp is None:
        return "gap split: n/a (no repetition with a verdict)"
    interval = (
        "" if f.judge_gap_interval is None else f" [{f.judge_gap_interval.low:.1f}, {f.judge_gap_interval.high:.1f}]"
    )
    return (
        f"gap {f.observed_gap_pp:.1f} pp observed = agent {f.majority_gap_pp:.1f} pp (judge majority) + judge "
        f"{f.judge_gap_pp:.1f} pp{interval}"
    )


def votes_text(f: JudgeFigures, repetitions: int, samples: int) -> str:
    """A votes session's cost and effect: the samples asked of n x M, and the majorities that overruled sample 1."""
    asked, most = f.votes_asked or 0, repetitions * samples
    saved = f" ({most - asked} saved by the stop rule)" if most > asked else ""
    return (
        f"{asked} of {most} sample(s) asked{saved}; the majority changed {f.majority_changed or 0} of {repetitions} "
        "repetition(s) against judge sample 1"
    )


def vote_task_lines(task: TaskJudge) -> list[str]:
    f = task.figures
    method = f" ({f.flip_method}, first pairs)" if f.flip_method else ""
    lines = [
        f"judge votes {task.task_id}: majority of {task.samples} sample(s); "
        f"{votes_text(f, len(task.repetitions), task.samples)}; flip rate {percent_text(f.flip_rate, f.flip_interval)}"
        f"{method}; kappa {kappa_text(f)}",
        f"  votes per repetition: {' '.join(row.verdicts for row in task.repetitions)}; {split_text(f)}",
    ]
    lines += [f"  excluded (not a verdict) {why}" for why in task.excluded]
    return lines


def task_lines(task: TaskJudge) -> list[str]:
    f = task.figures
    method = f" ({f.flip_method})" if f.flip_method else ""
    shares = " ".join(f"{row.passed}/{row.samples}" for row in task.repetitions)
    lines = [
        f"judge {task.task_id}: {task.samples} sample(s) per repetition; flip rate "
        f"{percent_text(f.flip_rate, f.flip_interval)}{method}; kappa {kappa_text(f)}",
        f"  passes per repetition: {shares}; {split_text(f)}",
    ]
    lines += [f"  excluded (not a verdict) {why}" for why in task.excluded]
    return lines


def suite_lines(summary: JudgeSummary) -> list[str]:
    f = summary.suite
    method = f" ({f.flip_method})" if f.flip_method else ""
    if summary.votes:
        rows = sum(len(task.repetitions) for task in summary.tasks)
        return [
            f"judge votes, suite: {votes_text(f, rows, summary.samples)}; flip rate "
            f"{percent_text(f.flip_rate, f.flip_interval)}{method[:-1] + ', first pairs)' if method else ''}; kappa "
            f"{kappa_text(f)}",
            f"  {split_text(f)}",
        ]
    return [
        f"judge, suite: {f.repetitions} repetition(s) x {summary.samples} sample(s); flip rate "
        f"{percent_text(f.flip_rate, f.flip_interval)}{method}; kappa {kappa_text(f)}",
        f"  {split_text(f)}",
    ]


def lines(summary: JudgeSummary) -> list[str]:
    each = vote_task_lines if summary.votes else task_lines
    return [line for task in summary.tasks for line in each(task)] + suite_lines(summary)


def terminal_lines(summary: JudgeSummary | None, width: int) -> list[str]:
    """The terminal's block (wrapped to ``width``, a blank line after); none outside a rejudge session."""
    return [] if summary is None else [*(part for text in lines(summary) for part in wrapped(text, width)), ""]


def markdown_lines(summary: JudgeSummary) -> list[str]:
    return ["### Judge votes" if summary.votes else "### Re-judging", "", "```", *lines(summary), "```", ""]


def _number(value: float | None) -> str:
    return "n/a" if value is None else repr(float(value))


def agreement_properties(
    prefix: str, rate: str, f: JudgeFigures | UserFigures, parts: tuple[tuple[str, float | None], ...]
) -> list[tuple[str, str]]:
    """JUnit properties of some figures: ``<prefix>.<rate>`` (the flip rate; ``.low``, ``.high``), ``.kappa``
    (``n/a`` when undefined) and the gap split's ``parts`` (name, points)."""
    props = [(f"{prefix}.{rate}", _number(f.flip_rate))]
    if f.flip_interval is not None:
        props += [(f"{prefix}.{rate}.low", _number(f.flip_interval.low))]
        props += [(f"{prefix}.{rate}.high", _number(f.flip_interval.high))]
    return [*props, (f"{prefix}.kappa", _number(f.kappa)), *((f"{prefix}.{n}", _number(v)) for n, v in parts)]


def junit_properties(prefix: str, f: JudgeFigures) -> list[tuple[str, str]]:
    """The judge's: ``<prefix>.flip_rate``, ``.kappa``, ``.judge_gap_pp`` and ``.agent_gap_pp``."""
    return agreement_properties(
        prefix, "flip_rate", f, (("judge_gap_pp", f.judge_gap_pp), ("agent_gap_pp", f.majority_gap_pp))
    )


def junit_task_properties(summary: JudgeSummary | None, task_id: str) -> list[tuple[str, str]]:
    """A task's ``consistency.task.judge.*`` properties (none outside a rejudge session)."""
    found = [t for t in summary.tasks if t.task_id == task_id] if summary is not None else []
    return junit_properties("consistency.task.judge", found[0].figures) if found else []


def junit_suite_properties(summary: JudgeSummary | None) -> list[tuple[str, str]]:
    """The suite's ``consistency.judge.*`` properties, with ``consistency.judge.samples`` (M)."""
    if summary is None:
        return []
    return [("consistency.judge.samples", str(summary.samples)), *junit_properties("consistency.judge", summary.suite)]


def html_section(summary: JudgeSummary | None) -> str:
    """The HTML page's ``judge`` section: per task its figures, and each repetition's judge samples beside it."""
    if summary is None:
        return ""
    e = html.escape
    word = {True: "pass", False: "fail", None: "-"}
    title = (
        f"Judge votes: the majority of {summary.samples} judge sample(s) per repetition (. not asked)"
        if summary.votes
        else f"Re-judging: {summary.samples} judge sample(s) per repetition"
    )
    each = vote_task_lines if summary.votes else task_lines
    parts = [f'<section id="judge"><h2>{title}</h2>']
    for task in summary.tasks:
        rows = "".join(
            f"<tr><td class=num>{row.repeat}</td><td><code>{e(' '.join(row.verdicts))}</code></td>"
            f"<td class=num>{row.passed}/{row.samples}</td><td>{word[row.observed]}</td>"
            f"<td>{word[row.majority]}</td></tr>"
            for row in task.repetitions
        )
        excluded = "".join(f"<li class=bad>{e(why)}</li>" for why in task.excluded)
        parts.append(
            f"<h3><code>{e(task.task_id)}</code></h3><p>{e(each(task)[0])}</p><p>{e(split_text(task.figures))}</p>"
            '<table class="plain"><thead><tr><th>repetition</th><th>judge samples (P pass, F fail)</th><th>passed</th>'
            f"<th>observed</th><th>majority</th></tr></thead><tbody>{rows}</tbody></table>"
            + (f"<ul>{excluded}</ul>" if excluded else "")
        )
    parts.append("".join(f"<p>{e(line.strip())}</p>" for line in suite_lines(summary)) + "</section>")
    return "".join(parts)
