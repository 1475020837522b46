"""The simulated user's part as text (``--consistency-rejudge-role=agent``): a ``simulated user`` block per task and
the suite's split, for the terminal and Markdown, and its JUnit properties and HTML section.

Why a module of its own beside :mod:`.judge`: the same kind of figures, named for the other roles (the agent is
sampled, the simulated user held); the format modules only place them.
"""

from __future__ import annotations

import html

from pytest_consistency.model.user import TaskUserSplit, UserFigures, UserSplitSummary
from pytest_consistency.report.judge import agreement_properties, kappa_text, percent_text
from pytest_consistency.report.wrap import wrapped

HEADING = "Sampling the agent on a simulated user's recorded turns"


def split_text(f: UserFigures) -> str:
    if f.observed_gap_pp is None or f.user_gap_pp is None or f.agent_gap_pp is None:
        return "gap split: n/a (no repetition with a verdict)"
    interval = (
        "" if f.agent_gap_interval is None else f" [{f.agent_gap_interval.low:.1f}, {f.agent_gap_interval.high:.1f}]"
    )
    return (
        f"gap {f.observed_gap_pp:.1f} pp observed = simulated user {f.user_gap_pp:.1f} pp (agent majority) + agent "
        f"{f.agent_gap_pp:.1f} pp{interval}"
    )


def task_lines(task: TaskUserSplit) -> list[str]:
    f = task.figures
    method = f" ({f.flip_method})" if f.flip_method else ""
    shares = " ".join(f"{row.passed}/{row.samples}" for row in task.repetitions)
    lines = [
        f"simulated user {task.task_id}: {task.samples} agent sample(s) per recorded user; agent flip rate "
        f"{percent_text(f.flip_rate, f.flip_interval)}{method}; kappa {kappa_text(f)}",
        f"  passes per repetition: {shares}; {split_text(f)}",
    ]
    lines += [f"  excluded (not a verdict) {why}" for why in task.excluded]
    return lines


def suite_lines(summary: UserSplitSummary) -> list[str]:
    f = summary.suite
    method = f" ({f.flip_method})" if f.flip_method else ""
    return [
        f"simulated user, suite: {f.repetitions} repetition(s) x {summary.samples} agent sample(s); agent flip rate "
        f"{percent_text(f.flip_rate, f.flip_interval)}{method}; kappa {kappa_text(f)}",
        f"  {split_text(f)}",
    ]


def lines(summary: UserSplitSummary) -> list[str]:
    return [line for task in summary.tasks for line in task_lines(task)] + suite_lines(summary)


def terminal_lines(summary: UserSplitSummary | None, width: int) -> list[str]:
    """The terminal's block (wrapped to ``width``, a blank line after); none outside such a session."""
    return [] if summary is None else [*(part for text in lines(summary) for part in wrapped(text, width)), ""]


def markdown_lines(summary: UserSplitSummary | None) -> list[str]:
    return [] if summary is None else [f"### {HEADING}", "", "```", *lines(summary), "```", ""]


def junit_properties(prefix: str, f: UserFigures) -> list[tuple[str, str]]:
    """``<prefix>.agent_flip_rate`` (``.low``, ``.high``), ``.kappa`` (``n/a`` when undefined) and the split."""
    return agreement_properties(
        prefix, "agent_flip_rate", f, (("user_gap_pp", f.user_gap_pp), ("agent_gap_pp", f.agent_gap_pp))
    )


def junit_task_properties(summary: UserSplitSummary | None, task_id: str) -> list[tuple[str, str]]:
    """A task's ``consistency.task.simulated_user.*`` properties (none outside such a session)."""
    found = [t for t in summary.tasks if t.task_id == task_id] if summary is not None else []
    return junit_properties("consistency.task.simulated_user", found[0].figures) if found else []


def junit_suite_properties(summary: UserSplitSummary | None) -> list[tuple[str, str]]:
    """The suite's ``consistency.simulated_user.*`` properties, with ``consistency.simulated_user.samples`` (M)."""
    if summary is None:
        return []
    prefix = "consistency.simulated_user"
    return [(f"{prefix}.samples", str(summary.samples)), *junit_properties(prefix, summary.suite)]


def html_section(summary: UserSplitSummary | None) -> str:
    """The HTML page's section: per task its figures, and each repetition's agent samples beside it."""
    if summary is None:
        return ""
    e = html.escape
    word = {True: "pass", False: "fail", None: "-"}
    parts = [f'<section id="simulated-user"><h2>{e(HEADING)}: {summary.samples} agent sample(s) per repetition</h2>']
    for task in summary.tasks:
        rows = "".join(
            f"<tr><td class=num>{row.repeat}</td><td><code>{e(' '.join(row.verdicts))}</code></td>"
            f"<td class=num>{row.passed}/{row.samples}</td><td>{word[row.observed]}</td>"
            f"<td>{word[row.majority]}</td></tr>"
            for row in task.repetitions
        )
        excluded = "".join(f"<li class=bad>{e(why)}</li>" for why in task.excluded)
        parts.append(
            f"<h3><code>{e(task.task_id)}</code></h3><p>{e(task_lines(task)[0])}</p><p>{e(split_text(task.figures))}</p>"
            '<table class="plain"><thead><tr><th>repetition</th><th>agent samples (P pass, F fail)</th><th>passed</th>'
            f"<th>observed</th><th>majority</th></tr></thead><tbody>{rows}</tbody></table>"
            + (f"<ul>{excluded}</ul>" if excluded else "")
        )
    parts.append("".join(f"<p>{e(line.strip())}</p>" for line in suite_lines(summary)) + "</section>")
    return "".join(parts)
