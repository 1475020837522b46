"""The GitHub job summary: GitHub-flavoured Markdown that says first whether the run passed and why.

A reviewer opening a CI run wants the verdict before the figures, and the few tasks that need a look before the
many that passed: so the order is verdict (as a GitHub alert), figures with their intervals, why repetitions part
(the gap by cause, with one line of advice per cause), the tasks that were inconsistent, failed or regressed, route
drift, where each inconsistent task's repetitions part and its cause, and last the answer clusters of each
inconsistent task, folded in ``<details>``. GitHub refuses a step summary over 1 MiB, so when the text would exceed
it the least important parts go first (answer clusters, then task rows beyond the first ones) and a note says how
many were left out and where the whole result is; the verdict (and the gap by cause, five rows at most) is never
left out, so the names, errors and warnings it lists are each shortened instead. The rendering is a pure,
deterministic function of the summary, so ``pytest-consistency show REPORT --format markdown`` prints exactly what
the session wrote.

User text (task ids, answers, warnings) is escaped for the context it lands in: table cells escape Markdown
punctuation and ``|``, and HTML-escape ``<``, ``>`` and ``&``; ``<summary>`` text is HTML-escaped and kept on one
line (a blank line would end the ``<details>`` block). Text UTF-8 cannot encode is written as its escape
(:mod:`.encodable`), with a closing line saying so.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_consistency.analysis.answers import MISSING, canonical_json, default_equivalent, distinct_classes
from pytest_consistency.analysis.cause.attribute import advice_lines, rounded_shares, shown_interval
from pytest_consistency.analysis.judge_change import change_lines as judge_change_lines
from pytest_consistency.analysis.trajectory.tree import segment_text, segments
from pytest_consistency.analysis.verdict import failure_reasons, inconsistent, needs_a_look, tolerated_text
from pytest_consistency.model.records import FAILURE, RepetitionResult
from pytest_consistency.model.result import Comparison, SessionSummary, TaskChange, TaskResult
from pytest_consistency.report.cost import markdown_head, task_text, unknown
from pytest_consistency.report.encodable import ESCAPE_NOTE, needs_escape, visible
from pytest_consistency.report.score import markdown_rows
from pytest_consistency.report.terminal import (
    TARGET_TEXT,
    arrows,
    bracket,
    caveats,
    detectable,
    gate_line,
    pct,
    pp,
    suite_change_text,
    verdict_text,
)
from pytest_consistency.stats.interval import Interval

#: GitHub's limit on one step's summary, in bytes of UTF-8.
MAX_BYTES = 1_048_576
#: Kept free below the limit: redaction may lengthen the text slightly, and other writers may share the step.
MARGIN = 16_384
#: Characters of an answer shown before it is shortened.
ANSWER_CHARS = 400
#: Names listed inline (failed tasks, warnings) before "and N more".
INLINE_MAX = 10
#: Characters of one name (a task id) or one error or warning listed inline before it is shortened: the verdict
#: comes first and is never left out, so each of its parts is bounded instead.
NAME_CHARS = 200
MESSAGE_CHARS = 1000

#: Characters that would start markup inside a line: code, emphasis, links, tables, strikethrough, math.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]|~$])")


def cell(text: str) -> str:
    """``text`` safe inside a GFM table cell: one line, no column breaks, no markup of its own."""
    text = html.escape(text, quote=False)
    text = _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")


def inline(text: str) -> str:
    """``text`` safe in a paragraph or list item: same escaping as :func:`cell`."""
    return cell(text)


def one_line(text: str) -> str:
    """``text`` without line breaks: inside an HTML block (``<details>``) a blank line ends the block, and what
    follows it would render as live Markdown (links, headings)."""
    return re.sub(r"\r\n?|\n", " ", text)


def shorten(text: str, width: int = ANSWER_CHARS) -> str:
    return text if len(text) <= width else f"{text[:width]}… (+{len(text) - width} characters)"


def fraction(interval: Interval | None) -> str:
    """An interval of a rate, in percent: ``[47.8, 100.0] %``; ``–`` when there is none."""
    return "–" if interval is None else bracket(interval, 100).strip() + " %"


def answer_text(rep: RepetitionResult) -> str:
    if not rep.answer_recorded:
        return MISSING
    value = rep.normalized
    return value if isinstance(value, str) else canonical_json(value)


@dataclass(frozen=True)
class AnswerClass:
    """Repetitions of one task whose normalised answers are equivalent (by the default equivalence)."""

    answer: str
    repetitions: list[RepetitionResult]

    @property
    def passed(self) -> int:
        return sum(r.succeeded for r in self.repetitions)


def answer_classes(task: TaskResult) -> list[AnswerClass]:
    """The distinct normalised answers of a task's scored repetitions, in order of first appearance.

    Grouped with the default equivalence (canonical JSON of the normalised answer): the report keeps the
    normalised answers but not the classes a custom ``pytest_consistency_answers_equivalent`` hook made, so a
    task compared by such a hook may show more classes here than ``distinct_answers`` counts.
    """
    scored = [r for r in task.repetitions if r.scored]
    if not any(r.answer_recorded for r in scored):
        return []
    classes = distinct_classes(
        [(r.answer_recorded, r.normalized if r.answer_recorded else MISSING) for r in scored], default_equivalent
    )
    return [AnswerClass(answer_text(scored[group[0]]), [scored[i] for i in group]) for group in classes]


def _rank(task: TaskResult, change: TaskChange | None) -> int:
    """Most important rows first, so the rows a truncation keeps are those that fail the run."""
    if task.verdict in ("fail", "error") or (change is not None and change.regression) or task.errors:
        return 0
    if change is not None and change.status in ("newly failing", "newly flaky"):
        return 1
    return 2


def _more(items: Sequence[str], limit: int = INLINE_MAX) -> str:
    shown = ", ".join(inline(shorten(item, NAME_CHARS)) for item in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def alert(kind: str, lines: Sequence[str]) -> list[str]:
    """A GitHub alert (``> [!CAUTION]``) holding ``lines`` as a list."""
    return [f"> [!{kind}]", *(f"> - {line}" for line in lines), ""]


def verdict_lines(summary: SessionSummary) -> list[str]:
    status = "" if summary.exit_status is None else f" (exit status {summary.exit_status})"
    word = "✅ passed" if summary.passed else "❌ failed"
    if summary.passed and summary.run.shard is not None:
        word = f"⏸️ shard {summary.run.shard}, verdict deferred to `pytest-consistency merge`"
    head = "## Consistency: " + word + status
    lines = [head, ""]
    failing: list[str] = []
    doubtful = [inline(gate_line(g, summary).text) for g in summary.gates if g.state == "undecided" and g.passed]
    open_tasks = [t.task_id for t in summary.tasks if t.verdict == "undecided" and summary.counts_as_passed(t)]
    if open_tasks:
        doubtful.append(
            f"{len(open_tasks)} task(s) undecided, counted as passed (--consistency-inconclusive=pass): "
            + _more(open_tasks)
        )
    errors = 0
    for reason in failure_reasons(summary):
        if reason.gate is not None:
            failing.append(inline(gate_line(reason.gate, summary).text))
        elif reason.kind == "error":
            errors += 1
            if errors <= INLINE_MAX:
                failing.append(inline(shorten(reason.text, MESSAGE_CHARS)))
        else:
            failing.append(reason.text + (": " + _more(reason.tasks) if reason.tasks else ""))
    if errors > INLINE_MAX:
        failing.append(f"and {errors - INLINE_MAX} more error(s): see the JSON report")
    warnings = doubtful + [f"warning: {inline(shorten(text, MESSAGE_CHARS))}" for text in summary.warnings[:INLINE_MAX]]
    if len(summary.warnings) > INLINE_MAX:
        warnings.append(f"and {len(summary.warnings) - INLINE_MAX} more warning(s): see the JSON report")
    if not summary.passed:
        lines += alert("CAUTION", failing or ["the run failed (see the test results)"])
    elif failing:  # not expected: a passing run has no failing reason; shown rather than hidden
        lines += alert("CAUTION", failing)
    if warnings:
        lines += alert("WARNING", warnings)
    if summary.passed and not warnings:
        gates = f"{len(summary.gates)} gate(s) passed" if summary.gates else "no gate set"
        lines += [f"All {summary.task_count} scored task(s) met their bars; {gates}.", ""]
    tolerated = tolerated_text(summary)
    if tolerated and not summary.interrupted:
        lines += [inline(tolerated) + ".", ""]
    return lines


def figure_lines(summary: SessionSummary) -> list[str]:
    k = "k" if summary.k is None else str(summary.k)
    n = "mixed" if summary.repeat is None else str(summary.repeat)
    iv = summary.intervals
    level = f"{(iv.confidence if iv else summary.analysis.confidence) * 100:g} %"
    lines = [
        "### Figures",
        "",
        f"{summary.task_count} scored task(s), n = {n} repetitions, k = {k}.",
        "",
        f"| figure | value | {level} interval |",
        "| --- | ---: | --- |",
        f"| Mean@{k} | {pct(summary.mean_at_k)} | {fraction(iv.mean_at_k if iv else None)} |",
        f"| pass^{k} | {pct(summary.pass_hat_k)} | {fraction(iv.pass_hat_k if iv else None)} |",
        f"| pass@{k} | {pct(summary.pass_at_k)} | {fraction(iv.pass_at_k if iv else None)} |",
        f"| consistency gap | {pp(summary.consistency_gap_pp)} | "
        + (bracket(iv.gap_pp).strip() + " pp" if iv else "–")
        + " |",
        f"| answer disagreement | {pp(summary.answer_disagreement_pp)} | – |",
    ]
    lines += markdown_rows(summary)
    route = summary.route
    if route is not None and route.tasks_with_calls:
        lines.append(
            f"| route drift | {pp(route.drift_pp)} ({len(route.drift_tasks)} of {route.tasks_with_calls} tasks "
            "with calls) | – |"
        )
        average = "" if route.avg_tokens_per_task is None else f" ({route.avg_tokens_per_task:.1f} per repetition)"
        lines.append(f"| tokens | {route.total_tokens}{average} | – |")
    else:
        lines += ["| route drift | n/a | – |", "| tokens | n/a | – |"]
    lines.append("")
    curve = summary.pass_hat_k_curve
    if curve and len(curve) > 1:
        lines += ["pass^k by k: " + ", ".join(f"pass^{k} {pct(value)}" for k, value in enumerate(curve, 1)) + ".", ""]
    if iv is not None:
        note = f"Intervals: {iv.confidence * 100:g} % confidence, for {TARGET_TEXT[iv.target]}"
        lines += [inline(note + (f"; {iv.note}" if iv.note else "")) + ".", ""]
    if summary.adaptive is not None:
        a = summary.adaptive
        lines += [
            f"Adaptive repetitions (n_min {a.n_min}): {a.tasks_curtailed} task(s) stopped early; "
            f"{a.repetitions_used} repetitions run, {a.repetitions_saved} saved (about {a.calls_saved:g} calls).",
            "",
        ]
    if summary.sequential is not None:
        lines += [summary.sequential.text[0].upper() + summary.sequential.text[1:] + ".", ""]
    for facts in (summary.sequential_suite, summary.sequential_regression):
        if facts is not None:
            lines += [facts.text[0].upper() + facts.text[1:] + ".", ""]
    return lines


def cause_lines(summary: SessionSummary) -> list[str]:
    """The gap by cause: one row per cause present, its tasks, its points of the gap (rounded so that the column
    adds up to the total it prints) and their interval (conditional on the causes named), then one line of advice
    per cause. Nothing when no task has a cause."""
    causes = summary.causes
    if not causes or not any(share.tasks for share in causes.values()):
        return []
    shown = rounded_shares(causes, gap=summary.consistency_gap_pp)
    present = [(cause, share) for cause, share in causes.items() if share.tasks]
    level = f"{summary.analysis.confidence * 100:g} %"
    lines = [
        "### Why repetitions part",
        "",
        f"| cause | tasks | points of the gap | {level} interval |",
        "| --- | ---: | ---: | ---: |",
        *(
            f"| {cell(cause)} | {share.tasks} | {shown[cause]:.1f} pp | "
            f"{bracket(shown_interval(share, shown[cause])).strip() or '–'} |"
            for cause, share in present
        ),
        f"| **all causes** | {sum(share.tasks for _, share in present)} | **{sum(shown.values()):.1f} pp** | |",
        "",
    ]
    if any(share.interval is not None for _, share in present):
        lines += [
            "Intervals conditional on the causes named: the repetition noise of the tasks given each cause, not the "
            "chance that a task was given another.",
            "",
        ]
    advice = advice_lines(summary.tasks, causes, summary.consistency_gap_pp)
    lines += [f"- {inline(shorten(line, MESSAGE_CHARS))}" for line in advice]
    return [*lines, ""]


def cause_text(task: TaskResult) -> str:
    """A task's cause as its table cell: ``input, step 2``, ``outside the model``, ``–``."""
    if task.cause is None:
        return "–"
    step = None if task.why is None else task.why.step
    return task.cause + ("" if step is None else f", step {step}")


def comparison_lines(c: Comparison) -> list[str]:
    gap = "n/a" if c.gap_change_pp is None else f"{c.gap_change_pp:+.1f} pp"
    flips = f"pass^n flips: {c.flips_worse} worse, {c.flips_better} better" + (
        "" if c.flips_p_value is None else f" (McNemar p = {c.flips_p_value:.3g})"
    )
    lines = [
        "### Baseline",
        "",
        f"- baseline {inline(c.baseline)}: {c.common_tasks} tasks in both runs; {c.regressions} significant "
        f"regression(s) ({c.test}, one-sided, Benjamini-Hochberg q ≤ {c.alpha:g})",
        f"- gap change {gap}{bracket(c.gap_change_interval)}; {flips}",
        f"- minimum detectable drop from a clean baseline: {inline(detectable(c))}",
    ]
    if c.suite_change is not None:
        strong = "**" if c.suite_regression else ""
        lines.insert(3, f"- {strong}{inline(arrows(suite_change_text(c)))}{strong}")
    lines += [f"- {inline(text)}" for text in caveats(c)]
    removed = [t.task_id for t in c.tasks if t.status == "removed"]
    if removed:
        lines.append(f"- {len(removed)} task(s) only in the baseline: " + _more(removed))
    lines += [f"- route change: {inline(arrows(text))}" for text in c.route_changes]
    lines += [f"- {inline(arrows(text))}" for text in judge_change_lines(c)]
    if c.baseline_tokens_per_task and c.current_tokens_per_task:
        before, after = c.baseline_tokens_per_task, c.current_tokens_per_task
        lines.append(
            f"- tokens per task-repetition {before:.1f} → {after:.1f} ({(after - before) * 100 / before:+.1f} %)"
        )
    return [*lines, ""]


def task_header(summary: SessionSummary) -> list[str]:
    level = f"{summary.analysis.confidence * 100:g} %"
    columns = ["task", "passes", f"pass rate {level}", "verdict", "attribution", "cause"]
    aligns = ["---", "---:", "---", "---", "---", "---"]
    if summary.comparison is not None:
        columns += ["baseline", "p", "q"]
        aligns += ["---", "---:", "---:"]
    return ["| " + " | ".join(columns) + " |", "| " + " | ".join(aligns) + " |"]


def task_row(task: TaskResult, change: TaskChange | None, comparison: bool) -> str:
    passes = f"{task.passes}/{task.scored}" if task.scored else "–"
    verdict = verdict_text(task).replace(f", {task.attribution}", "") if task.attribution else verdict_text(task)
    if task.errors:
        verdict += "; error: " + "; ".join(task.errors)
    cells = [
        cell(task.task_id),
        passes,
        fraction(task.pass_rate_interval),
        cell(verdict),
        cell(task.attribution or "–"),
        cell(cause_text(task)),
    ]
    if comparison:
        if change is None:
            cells += ["–", "–", "–"]
        else:
            status = f"{change.status} {change.baseline or '–'} → {change.current or '–'}"
            if change.regression:
                status += " **REGRESSION**"
            if change.confounded:
                status += " (route drift: confounded)"
            p = "–" if change.p_value is None else f"{change.p_value:.3g}"
            q = "–" if change.q_value is None else f"{change.q_value:.3g}"
            cells += [status, p, q]
    return "| " + " | ".join(cells) + " |"


def drift_line(task: TaskResult) -> str:
    assert task.drift is not None
    return f"- {cell(task.task_id)}: " + "; ".join(inline(d) for d in task.drift.details)


def cluster_block(task: TaskResult, classes: list[AnswerClass], equivalence: str) -> list[str]:
    summary = (
        f"{one_line(html.escape(task.task_id))}: {len(classes)} distinct answer(s) in {task.scored} repetitions, "
        f"{task.passes} passed"
    )
    lines = [f"<details><summary>{summary}</summary>", ""]
    if equivalence != "default" and task.distinct_answers is not None and task.distinct_answers != len(classes):
        lines += [
            f"Grouped by normalised answer; the session's equivalence ({cell(equivalence)}) counted "
            f"{task.distinct_answers} class(es).",
            "",
        ]
    lines += ["| # | answer | count | passed | repetitions |", "| ---: | --- | ---: | ---: | --- |"]
    for number, group in enumerate(classes, start=1):
        answer = "*(no answer recorded)*" if group.answer == MISSING else cell(shorten(group.answer))
        reps = ", ".join(f"{r.repeat} ✗" if r.outcome in FAILURE else str(r.repeat) for r in group.repetitions)
        lines.append(f"| {number} | {answer} | {len(group.repetitions)} | {group.passed} | {reps} |")
    return [*lines, "", "</details>", ""]


def failure_block(task: TaskResult) -> list[str]:
    """Why each failed repetition of a task failed, one line each, folded: the reviewer of a CI artifact sees why
    repetition 3 failed without the log."""
    failed = [r for r in task.repetitions if r.outcome in FAILURE and (r.message or r.infrastructure)]
    if not failed:
        return []
    lines = [f"<details><summary>{html.escape(task.task_id)}: why {len(failed)} repetition(s) failed</summary>", ""]
    for rep in failed:
        why = rep.infrastructure if rep.infrastructure else rep.message
        setup = " (setup, not the agent)" if rep.infrastructure else ""
        lines.append(f"- repetition {rep.repeat} {rep.outcome}{setup}: {inline(shorten(why or ''))}")
    return [*lines, "", "</details>", ""]


def trajectory_block(task: TaskResult) -> list[str]:
    """Where an inconsistent task's repetitions part (its attribution line) and why (its cause line, as the terminal
    prints it), and its trajectory tree folded, one list item per run of steps without a branch. A task with a
    cause but no branch in its decisions (another tool result, a check outside the model) shows its cause alone."""
    mapped = task.trajectory
    why = [] if task.why is None else [f"  - cause {inline(shorten(task.why.line, MESSAGE_CHARS))}"]
    if mapped is None or not mapped.parts:
        if task.why is None:
            return []
        return [f"- {cell(task.task_id)}: cause {inline(shorten(task.why.line, MESSAGE_CHARS))}", ""]
    lines = [f"- {cell(task.task_id)}: {inline(mapped.line or '')}", *why]
    shown = segments(mapped.tree)
    if mapped.divergent_step is None or not shown:
        return [*lines, ""]
    distance = "n/a" if mapped.tool_distance is None else f"{mapped.tool_distance:.2f}"
    lines += [
        "",
        f"  <details><summary>trajectory tree: {mapped.repetitions} repetitions, up to {mapped.steps} steps, "
        f"tool-sequence distance {distance}</summary>",
        "",
    ]
    for segment in shown[:60]:
        lines.append("  " + "  " * min(segment.depth, 10) + f"- {inline(segment_text(segment))}")
    if len(shown) > 60:
        lines.append(f"  - … {len(shown) - 60} more branches (in the JSON report and the HTML page)")
    return [*lines, "", "  </details>", ""]


def cost_lines(summary: SessionSummary) -> list[str]:
    """What the session cost (``at least`` with unpriced calls), and an alert naming each model with no price."""
    if summary.cost is None:
        return []
    text, unpriced = markdown_head(summary.cost)
    return [
        f"**Cost** {inline(text)}",
        "",
        *(alert("WARNING", [inline(line) for line in unpriced]) if unpriced else []),
    ]


def _size(lines: Sequence[str]) -> int:
    return sum(len(visible(line).encode("utf-8")) + 1 for line in lines)


def _prefix(blocks: Sequence[list[str]], budget: int) -> int:
    """How many leading blocks fit in ``budget`` bytes."""
    used = 0
    for count, block in enumerate(blocks):
        used += _size(block)
        if used > budget:
            return count
    return len(blocks)


def render(summary: SessionSummary, max_bytes: int = MAX_BYTES) -> str:
    """The whole summary; parts are left out, least important first, to keep it within ``max_bytes``."""
    changes = {c.task_id: c for c in summary.comparison.tasks} if summary.comparison else {}
    head = verdict_lines(summary) + figure_lines(summary) + cost_lines(summary) + cause_lines(summary)
    if summary.comparison is not None:
        head += comparison_lines(summary.comparison)

    shown = [t for t in summary.tasks if needs_a_look(t, changes.get(t.task_id))]
    shown.sort(key=lambda t: _rank(t, changes.get(t.task_id)))  # stable: summary order within a rank
    rows = [[task_row(t, changes.get(t.task_id), summary.comparison is not None)] for t in shown]
    drifted = [t for t in summary.tasks if t.drifted]
    drift = [[drift_line(t)] for t in drifted]
    clustered = [(t, answer_classes(t)) for t in shown if inconsistent(t)]
    clusters = [cluster_block(t, c, summary.run.equivalence) for t, c in clustered if c]
    trajectories = [block for block in (trajectory_block(t) for t in shown) if block]
    failures = [block for block in (failure_block(t) for t in shown) if block]
    priced = summary.cost is not None and not unknown(summary.cost)
    costs = [[f"| {cell(t.task_id)} | {cell(task_text(t))} |"] for t in summary.tasks] if priced else []

    table_head = [f"### Tasks that need a look ({len(shown)} of {len(summary.tasks)})", "", *task_header(summary)]
    drift_head = [f"### Route drift ({len(drifted)} task(s))", ""]
    cluster_head = ["### Answers of inconsistent tasks", ""]
    failure_head = ["### Why repetitions failed", ""]
    trajectory_head = ["### Where repetitions part", ""]
    cost_head = [
        "<details><summary>Cost per task and repetition</summary>",
        "",
        "| priced task | US dollars (per repetition) |",
        "|---|---|",
    ]
    heads = _size(table_head) + _size(drift_head) + _size(cluster_head) + _size(failure_head) + _size(trajectory_head)
    heads += _size(cost_head) + _size(["", "</details>"])
    budget = max_bytes - MARGIN - _size(head) - heads - 2048
    kept_rows = _prefix(rows, budget)
    budget -= _size([line for block in rows[:kept_rows] for line in block])
    kept_drift = _prefix(drift, budget)
    budget -= _size([line for block in drift[:kept_drift] for line in block])
    kept_trajectories = _prefix(trajectories, budget)
    budget -= _size([line for block in trajectories[:kept_trajectories] for line in block])
    kept_clusters = _prefix(clusters, budget)
    budget -= _size([line for block in clusters[:kept_clusters] for line in block])
    kept_failures = _prefix(failures, budget)
    budget -= _size([line for block in failures[:kept_failures] for line in block])
    kept_costs = _prefix(costs, budget)

    lines = list(head)
    if summary.resample is not None:
        from pytest_consistency.report.resample import markdown_lines

        lines += markdown_lines(summary.resample)
    if summary.judge is not None:
        from pytest_consistency.report.judge import markdown_lines as judge_markdown

        lines += judge_markdown(summary.judge)
    if summary.simulated_user is not None:
        from pytest_consistency.report.user import markdown_lines as user_markdown

        lines += user_markdown(summary.simulated_user)
    if shown:
        lines += table_head + [line for block in rows[:kept_rows] for line in block] + [""]
    elif summary.tasks:
        lines += ["No task was inconsistent, failed or regressed.", ""]
    if drifted:
        lines += drift_head + [line for block in drift[:kept_drift] for line in block] + [""]
    if trajectories and kept_trajectories:
        lines += trajectory_head + [line for block in trajectories[:kept_trajectories] for line in block]
    if clusters and kept_clusters:
        lines += cluster_head + [line for block in clusters[:kept_clusters] for line in block]
    if failures and kept_failures:
        lines += failure_head + [line for block in failures[:kept_failures] for line in block]
    if costs and kept_costs:
        lines += [*cost_head, *(line for block in costs[:kept_costs] for line in block), "", "</details>", ""]
    left_out = [
        f"{len(what) - kept} of {len(what)} {name}"
        for what, kept, name in (
            (rows, kept_rows, "task rows"),
            (drift, kept_drift, "route drift lines"),
            (trajectories, kept_trajectories, "cause lines and trajectory trees"),
            (clusters, kept_clusters, "answer clusters"),
            (failures, kept_failures, "failure messages"),
            (costs, kept_costs, "task cost rows"),
        )
        if kept < len(what)
    ]
    if left_out:
        lines += alert(
            "WARNING",
            [
                "Truncated to stay under GitHub's 1 MiB step-summary limit: left out "
                + ", ".join(left_out)
                + ". The whole result is in the JSON report (`--consistency-report`) and the HTML report "
                "(`--consistency-html`, or `pytest-consistency show REPORT --format html`)."
            ],
        )
    text = "\n".join(lines).rstrip("\n") + "\n"
    if needs_escape(text):
        text += "\n" + inline(ESCAPE_NOTE) + "\n"
    return visible(text)


class MarkdownFormat:
    """GitHub-flavoured Markdown for a job summary (``--consistency-md``, ``$GITHUB_STEP_SUMMARY``)."""

    name = "markdown"
    suffix = ".md"

    def render(self, summary: SessionSummary) -> str:
        return render(summary)


FORMAT = MarkdownFormat()
