"""The terminal summary, rendered from the typed session result as styled lines.

The session (``pytest_terminal_summary``) and ``pytest-consistency show REPORT`` print the same
:func:`render` of the same :class:`~.result.SessionSummary`, so a report shows exactly what its session printed.
Each line carries a style chosen where the data is known (a failed gate is ``bad``); :data:`MARKUP` maps styles to
colours in one table, and no line is ever coloured by matching its text.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Literal

from pytest_consistency.analysis.cause.attribute import advice_lines, rounded_shares, shown_interval
from pytest_consistency.analysis.gates import label_of, why_not_measurable
from pytest_consistency.analysis.judge_change import change_lines as judge_change_lines
from pytest_consistency.analysis.sequential import budget_stopped
from pytest_consistency.analysis.verdict import (
    failure_reasons,
    met_threshold_text,
    needs_a_look,
    rate_verdict_text,
    tolerated_text,
)
from pytest_consistency.model.result import (
    Comparison,
    GateResult,
    RouteFacts,
    RouteSettings,
    SessionSummary,
    TaskResult,
)
from pytest_consistency.report.cost import terminal_lines as cost_lines
from pytest_consistency.report.judge import terminal_lines as judge_lines
from pytest_consistency.report.score import terminal_lines as score_lines
from pytest_consistency.report.wrap import wrapped
from pytest_consistency.stats.interval import Interval

Style = Literal["plain", "bad", "warn", "good"]
#: Keyword arguments of pytest's ``TerminalWriter`` per style.
MARKUP: dict[Style, dict[str, bool]] = {
    "plain": {},
    "bad": {"red": True, "bold": True},
    "warn": {"yellow": True},
    "good": {"green": True},
}
GATE_WORD = {"pass": "ok", "fail": "FAILED", "undecided": "UNDECIDED"}
TARGET_TEXT = {
    "suite": "this suite of tasks (repetition noise only)",
    "population": "the population of tasks like these (task sampling too)",
}


@dataclass(frozen=True)
class Line:
    """One line of the terminal section and its style."""

    text: str
    style: Style = "plain"


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f} %"


def pp(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} pp"


def bracket(interval: Interval | None, scale: float = 1.0) -> str:
    """`` [19.8, 29.1]`` or nothing when there is no interval."""
    return "" if interval is None else f" [{interval.low * scale:.1f}, {interval.high * scale:.1f}]"


def _forms(task_id: str) -> list[str]:
    """A task id from most to least specific: whole, without its file, its last ``::`` part."""
    forms = [task_id]
    _module, sep, rest = task_id.partition("::")
    if sep and rest:
        forms.append(rest)
        last = rest.rsplit("::", 1)[-1]
        if last != rest:
            forms.append(last)
    return forms


def display_ids(ids: list[str], width: int) -> list[str]:
    """The ids as the task table shows them: whole when they fit, else the most specific form that fits and still
    tells every task apart, else the shortest form that does (those longer than ``width`` wrap). Never cut: a cut
    id can read as another task (two ``…nned[invoice-sender]`` rows of two tests)."""
    forms = [_forms(task_id) for task_id in ids]
    levels = max((len(f) for f in forms), default=1)

    def at(level: int) -> list[str]:
        return [f[min(level, len(f) - 1)] for f in forms]

    distinct = len(set(ids))
    unique = [level for level in range(levels) if len(set(at(level))) == distinct]
    for level in unique:
        names = at(level)
        if all(len(name) <= width for name in names):
            return names
    return at(unique[-1]) if unique else list(ids)


def verdict_text(task: TaskResult) -> str:
    text: str = task.verdict
    if task.min_rate is not None and task.verdict in ("pass", "fail", "undecided"):
        text = rate_verdict_text(task)
    elif task.verdict == "pass" and task.passes < task.scored:
        text = met_threshold_text(task)
    if task.verdict == "xfail":
        text = "xfail (expected failure)"
    if task.decided_by == "cap":
        text += ", stopped by the repetition budget" if budget_stopped(task.repetitions) else ", at the cap"
    elif task.decided_by is not None and task.decided_by != "curtailed":
        text += ", by evidence" if task.decided_by == "evidence" else ", on the repetitions its rounds ran"
    if task.curtailed:
        text += f", stopped after {task.scored} of {task.n}"
    if task.attribution:
        text += f", {task.attribution}"
    return text


def task_rows(summary: SessionSummary, width: int) -> list[Line]:
    """One row per task; when an id does not fit beside the figures, every id goes on a line of its own (shown
    in the most specific form that fits the whole width) with its figures indented under it."""
    level = f"{summary.analysis.confidence * 100:g} %"
    verdicts = [verdict_text(t) for t in summary.tasks]
    rates = [bracket(t.pass_rate_interval, 100).strip() or "-" for t in summary.tasks]
    rate_width = max(len(f"pass rate {level}"), *(len(r) for r in rates))
    verdict_width = max([7, *(len(v) for v in verdicts)])
    id_width = max(20, width - 8 - 9 - rate_width - 4 - verdict_width)
    ids = [t.task_id for t in summary.tasks]
    names = display_ids(ids, id_width)
    stacked = any(len(name) > id_width for name in names)
    if stacked:
        names, id_width = display_ids(ids, width), 2
    figures = f"{'passes':>7} {'answers':>8}  {f'pass rate {level}':<{rate_width}}  verdict"
    rows = [Line("task") if stacked else Line(f"{'task':<{id_width}} {figures}")]
    if stacked:
        rows.append(Line(f"{'':<{id_width}} {figures}"))
    for task, name, verdict, rate in zip(summary.tasks, names, verdicts, rates, strict=True):
        if task.errors:
            answers = "error"  # could not be compared: named on an ``error:`` line below
        else:
            answers = "-" if task.distinct_answers is None else str(task.distinct_answers)
        passes = f"{task.passes}/{task.scored}" if task.scored else "-"
        style: Style = (
            "bad" if task.verdict in ("fail", "error") else "warn" if task.verdict == "undecided" else "plain"
        )
        if stacked:
            rows.append(Line(name, style))
            name = ""
        text = f"{name:<{id_width}} {passes:>7} {answers:>8}  {rate:<{rate_width}}  {verdict}"
        rows.append(Line(text, style))
    return rows


def rates(parts: list[str], width: int) -> list[Line]:
    """The three rates on one line, or pass@k on a line of its own when that line would not fit."""
    line = "   ".join(parts)
    return [Line(line)] if len(line) <= width else [Line("   ".join(parts[:2])), Line(parts[2])]


def figure_lines(summary: SessionSummary, width: int) -> list[Line]:
    k = "k" if summary.k is None else str(summary.k)
    n = "mixed" if summary.repeat is None else str(summary.repeat)
    if summary.task_count:
        scored = f"tasks {summary.task_count}, repetitions n={n}, scored at k={'mixed' if summary.k is None else k}"
    else:
        scored = "tasks 0, nothing scored"
    iv = summary.intervals
    mean, hat, at, gap = (iv.mean_at_k, iv.pass_hat_k, iv.pass_at_k, iv.gap_pp) if iv else (None, None, None, None)
    lines = [
        Line(
            scored + (" (session interrupted: partial results)" if summary.interrupted else ""),
            "warn" if summary.interrupted else "plain",
        ),
        *rates(
            [
                f"Mean@{k} {pct(summary.mean_at_k)}{bracket(mean, 100)}",
                f"pass^{k} {pct(summary.pass_hat_k)}{bracket(hat, 100)}",
                f"pass@{k} {pct(summary.pass_at_k)}{bracket(at, 100)}",
            ],
            width,
        ),
        Line(
            f"consistency gap {pp(summary.consistency_gap_pp)}{bracket(gap)}   "
            f"answer disagreement {pp(summary.answer_disagreement_pp)}"
        ),
        *curve_lines(summary, width),
        *map(Line, score_lines(summary)),
    ]
    if iv is not None:
        text = f"intervals: {iv.confidence * 100:g} % confidence, for {TARGET_TEXT[iv.target]}"
        lines.append(Line(text + (f"; {iv.note}" if iv.note else ""), "warn" if iv.note else "plain"))
    return lines + cause_lines(summary, width)


def curve_lines(summary: SessionSummary, width: int) -> list[Line]:
    """pass^k for k = 1 .. n, τ-bench's headline curve (when the tasks share n > 1), in percent."""
    curve = summary.pass_hat_k_curve
    if not curve or len(curve) < 2:
        return []
    text = f"pass^k for k = 1..{len(curve)}: " + " ".join(f"{value * 100:.1f}" for value in curve) + " %"
    return [Line(line) for line in wrapped(text, width)]


def route_lines(summary: SessionSummary, route: RouteFacts) -> list[Line]:
    if not route.tasks_with_calls:
        return []
    pinned: list[tuple[str | None, RouteSettings, str]] = (
        [(None, route.settings, route.key_shown)] if route.route_used else []
    )
    pinned += [(o.name, o, route.other_keys_shown.get(o.name, "")) for o in route.other_routes]
    lines = [
        Line(
            f"route{f' ({provider})' if provider else ''}: {s.base_url}  model {s.model or '(per request)'}  "
            + " ".join(key_facts(s, key, summary.tasks))
            + f"  {limits_text(s, summary.tasks)}"
        )
        for provider, s, key in pinned
    ]
    by_provider = ", ".join(f"{name} {count}" for name, count in route.calls_by_provider.items())
    average = (
        f"avg per task-repetition {route.avg_tokens_per_task:.1f}" if route.avg_tokens_per_task is not None else ""
    )
    lines += [
        Line(
            f"calls {route.calls}{f' ({by_provider})' if by_provider else ''} (retries {route.retries})   "
            f"tokens {route.total_tokens}   {average}"
            + (f"   waited for slots {route.wait_ms / 1000:.2f}s" if route.wait_ms else "")
        ),
        Line(
            f"route drift {pp(route.drift_pp)} "
            f"({len(route.drift_tasks)} of the {route.tasks_with_calls} tasks with calls drifted)",
            "warn" if route.drift_tasks else "plain",
        ),
    ]
    for task in summary.tasks:
        if task.drift is not None and task.drifted:
            lines.append(Line(f"  {task.task_id}: " + "; ".join(task.drift.details), "warn"))
    return lines


def key_facts(settings: RouteSettings, shown: str, tasks: list[TaskResult]) -> tuple[str, str]:
    """``("key", fingerprint)`` of a route line, or ``("keys", ...)`` when a replay shows several recorded keys: each
    with the number of tasks whose calls carried it, whether each task kept one (several keys, no key drift: tasks
    recorded at different times), and a key only the agent's own clients sent."""
    if settings.key_fingerprint is not None:
        return "key", shown
    by_task: list[set[str]] = []
    pinned: set[str] = set()
    for task in tasks:
        keys = set()
        for call in (c for r in task.repetitions for c in r.calls):
            if call.provider == settings.provider and call.replayed and call.key_fingerprint:
                keys.add(call.key_fingerprint)
                if call.pinned:
                    pinned.add(call.key_fingerprint)
        if keys:
            by_task.append(keys)
    counts = Counter(key for keys in by_task for key in keys)
    if len(counts) < 2:
        return "key", shown

    def one(key: str, n: int) -> str:
        whose = "" if key in pinned else ", the agent's own client"
        return f"{key} ({n} task{'' if n == 1 else 's'}{whose})"

    listed = ", ".join(one(key, n) for key, n in sorted(counts.items()))
    return "keys", f"{listed} as recorded" + (", one per task" if all(len(keys) == 1 for keys in by_task) else "")


def limits_text(settings: RouteSettings, tasks: list[TaskResult]) -> str:
    """The route's timeout and retries, said to be the pinned clients' when a client the agent built made calls too
    (it keeps the SDK's, or what the agent set)."""
    limits = f"timeout {settings.timeout:g}s"
    if not own_clients_called(settings, tasks):
        return f"{limits}  retries {settings.max_retries}"
    return f"pinned clients: {limits}, retries {settings.max_retries}; the agent's own clients: the SDK's unless set"


def own_clients_called(settings: RouteSettings, tasks: list[TaskResult]) -> bool:
    """A client the test built itself (calls ``pinned: false``) called this route's provider in the route's role."""
    calls = (c for t in tasks for r in t.repetitions for c in r.calls)
    return any(not c.pinned and c.provider == settings.provider and c.role == settings.role for c in calls)


def unmeasured_drift(summary: SessionSummary) -> str:
    """Why route drift is not measurable: it counts the scored tasks that made a call, and there is none."""
    repetitions = [r for t in summary.tasks for r in t.repetitions]
    if any(r.calls for r in repetitions):
        return "the tasks that made calls are not scored (in error, or incomplete)"
    stopped = [r for r in repetitions if r.infrastructure]
    if stopped:
        why = sorted({str(r.infrastructure).split(":")[0] for r in stopped})
        return (
            f"no call was recorded: {len(stopped)} of {len(repetitions)} repetitions failed before their first "
            f"call ({', '.join(why)})"
        )
    return "no call was recorded: no repetition called a model through a client the plugin observes (httpx, httpx2)"


def comparison_lines(comparison: Comparison) -> list[Line]:
    c = comparison
    lines = [
        Line(
            f"baseline {c.baseline}: {c.common_tasks} tasks in both runs; {c.regressions} significant "
            f"regression(s) ({c.test}, one-sided, Benjamini-Hochberg q <= {c.alpha:g})",
            "bad" if c.regressions else "plain",
        ),
        Line(
            f"gap change {'n/a' if c.gap_change_pp is None else f'{c.gap_change_pp:+.1f} pp'}"
            f"{bracket(c.gap_change_interval)}   pass^n flips: {c.flips_worse} worse, {c.flips_better} better"
            + ("" if c.flips_p_value is None else f" (McNemar p = {c.flips_p_value:.3g})")
        ),
        Line("minimum detectable drop from a clean baseline: " + detectable(c)),
    ]
    if c.suite_change is not None:
        lines.insert(2, Line(suite_change_text(c), "bad" if c.suite_regression else "plain"))
    lines += [Line(f"  {text}", "warn") for text in caveats(c)]
    for change in c.tasks:
        if change.status == "unchanged" and not change.regression:
            continue
        stats = "" if change.p_value is None else f"  p = {change.p_value:.3g}, q = {change.q_value:.3g}"
        flag = "  REGRESSION" if change.regression else ""
        confounded = "  (route drift: confounded, not blamed on the agent)" if change.confounded else ""
        counts = f"{change.baseline or '-'} -> {change.current or '-'}"
        style: Style = "bad" if change.regression else "plain"
        lines.append(Line(f"  {change.task_id}: {change.status} {counts}{stats}{flag}{confounded}", style))
    lines.extend(Line(f"  route change: {text}", "warn") for text in c.route_changes)
    lines.extend(Line(f"  {text}") for text in judge_change_lines(c))  # both runs re-judged, or which one did
    if c.baseline_tokens_per_task and c.current_tokens_per_task:
        before, after = c.baseline_tokens_per_task, c.current_tokens_per_task
        relative = f" ({(after - before) * 100 / before:+.1f} %)"
        lines.append(Line(f"  tokens per task-repetition {before:.1f} -> {after:.1f}{relative}"))
    return lines


def caveats(c: Comparison) -> list[str]:
    """What the reader must know to read the comparison: tests not run (curtailed counts), how k and n were
    matched."""
    return ([f"not tested: {c.untested}"] if c.untested else []) + c.notes


def detectable(c: Comparison) -> str:
    def drop(value: int | None) -> str:
        return "none at this n" if value is None else f"{value} of n"

    return (
        f"{drop(c.minimum_detectable_drop)} ({c.test}, one task at {c.alpha:g}); "
        f"{drop(c.minimum_detectable_drop_all)} when it is the only change among {c.common_tasks} tasks "
        f"(q <= {c.alpha:g})"
    )


def arrows(text: str) -> str:
    """The terminal's ASCII "old -> new" with the arrow of the Markdown and HTML pages (escaped there, "->" read
    "-&gt;" in Markdown's source beside the "→" of the status columns)."""
    return text.replace(" -> ", " → ")


def suite_change_text(c: Comparison) -> str:
    """The suite-level test in one sentence: task-averaged pass rates, their change and interval, the exact p-value."""
    s = c.suite_change
    assert s is not None
    verdict = f"a significant DROP (p <= {c.alpha:g})" if c.suite_regression else f"no significant drop at {c.alpha:g}"
    return (
        f"suite-level change: task-averaged pass rate {s.baseline_rate * 100:.1f} % -> {s.current_rate * 100:.1f} %, "
        f"{s.change_pp:+.1f} pp{bracket(s.change_interval)}; exact stratified test over {s.informative} informative "
        f"of {c.common_tasks} tasks p = {s.p_value:.3g}: {verdict}"
    )


def level_text(gate: GateResult, summary: SessionSummary) -> str:
    """The level a statistical gate was decided at: ``level 0.025 = 0.05 / 2 gates (Bonferroni)``; "" for a fact."""
    if gate.level is None:
        return ""
    if gate.family <= 1:
        return f"level {gate.level:.3g}"
    return f"level {gate.level:.3g} = {gate.level * gate.family:.3g} / {gate.family} gates (Bonferroni)"


def gate_figure(gate: GateResult, summary: SessionSummary) -> str:
    """The gate's figure against its threshold, in words: ``consistency gap 23.0 pp, one-sided bounds [14.2, 31.0]
    > 12.0 pp``; ``... not measurable ...``."""
    label = label_of(gate.name)
    unit = f" {gate.unit}" if gate.unit else ""
    threshold = f"{gate.threshold:g}{unit}" if not gate.unit else f"{gate.threshold:.1f}{unit}"
    if gate.value is None:
        reason = unmeasured_drift(summary) if gate.name == "route_drift" else why_not_measurable(gate.name, summary)
        why = f": {reason}" if reason else ""
        return f"{label}: not measurable in this session{why} (threshold {threshold})"
    value = f"{gate.value:.3g}{unit}" if not gate.unit else f"{gate.value:.1f}{unit}"
    if gate.name == "suite_regression_p":
        threshold = f"{gate.threshold:.3g}"
        return f"suite regression p {value} {'<=' if gate.state == 'fail' else '>'} {threshold}"
    shown = value + (f", one-sided bounds{bracket(gate.interval)}" if gate.interval is not None else "")
    if gate.state == "undecided":
        return f"{label} {shown} hold {threshold}"
    if gate.name == "mcnemar_p" and gate.level is not None:  # rejects at P / m
        threshold = f"{gate.level:.3g}"
    good = gate.state == "pass"
    sign = {"max": ("<=", ">"), "min": (">=", "<")}[gate.direction][0 if good else 1]
    return f"{label} {shown} {sign} {threshold}"


def gate_note(gate: GateResult, summary: SessionSummary) -> str:
    """What else the reader needs: the level it was decided at; for an undecided gate, what to do and how the exit
    status counts it."""
    parts = [text] if (text := level_text(gate, summary)) else []
    if gate.state == "undecided":
        counted = "a pass" if gate.passed else "a failure"
        parts.append(gate.advice or "the evidence shows neither side")
        parts.append(f"counted as {counted}: --consistency-inconclusive={summary.analysis.inconclusive}")
    return "; ".join(parts)


def gate_line(gate: GateResult, summary: SessionSummary) -> Line:
    note = gate_note(gate, summary)
    text = f"gate {gate.option}: {gate_figure(gate, summary)}  {GATE_WORD[gate.state]}"
    if note:
        text += f" ({note})"
    style: Style = "plain" if gate.state == "pass" else ("bad" if not gate.passed else "warn")
    return Line(text, style)


def overall_lines(summary: SessionSummary, width: int, figures: bool = True, verbosity: int = 0) -> list[Line]:
    """The figures (none when no task was scored for want of a recording: nothing to pretend), the route, the cost
    (each task's under ``-v``), the comparison, the gates, warnings, errors and the closing line."""
    lines = figure_lines(summary, width) if figures else []
    if summary.route is not None and figures:
        lines.extend(route_lines(summary, summary.route))
    for text, style in cost_lines(summary, verbosity):
        lines.extend(Line(part, style) for part in wrapped(text, width))  # type: ignore[arg-type]
    if summary.comparison is not None:
        lines.extend(comparison_lines(summary.comparison))
    if summary.adaptive is not None:
        a = summary.adaptive
        lines.append(
            Line(
                f"adaptive (n_min {a.n_min}): {a.tasks_curtailed} task(s) stopped early once their verdict was "
                f"decided; {a.repetitions_used} repetitions run, {a.repetitions_saved} saved (about "
                f"{a.calls_saved:g} calls)"
            )
        )
    if summary.sequential is not None:
        lines.append(Line(summary.sequential.text))
    if not summary.gates:
        lines.append(Line("gates: none set"))
    lines.extend(gate_line(gate, summary) for gate in summary.gates)
    for facts in (summary.sequential_suite, summary.sequential_regression):  # suite gates in rounds
        if facts is not None:  # a line per round under -v, then the end
            lines.extend(Line(text) for text in (facts.round_lines() if verbosity > 0 else []))
            lines.append(Line(facts.text))
    lines.extend(Line(f"warning: {text}", "warn") for text in summary.warnings)
    tolerated = sum(t.tolerated_failures for t in summary.tasks)
    if tolerated and summary.interrupted:
        lines.append(
            Line(f"{tolerated} failed repetition(s) within min_pass, not tolerated: the session stopped early", "bad")
        )
    elif tolerated:
        lines.append(Line(str(tolerated_text(summary)), "warn"))
    lines.extend(Line(f"error: {error}", "bad") for error in summary.errors)
    if summary.run.shard is not None:
        lines.append(
            Line(
                f"shard {summary.run.shard}: the figures and gates above are this shard's alone; the verdict is "
                "decided by `pytest-consistency merge` of every shard's report",
                "warn",
            )
        )
    if not summary.passed:
        status = "" if summary.exit_status is None else f" (exit status {summary.exit_status})"
        why = [r.text for r in failure_reasons(summary) if r.kind != "error"]
        lines.append(Line(f"consistency: FAILED{status}" + (": " + "; ".join(why) if why else ""), "bad"))
    return lines


def cause_lines(summary: SessionSummary, width: int = 80) -> list[Line]:
    """The gap by cause (the points add up to the gap as printed), each with its interval (conditional on the causes
    named), and one line of advice per cause present."""
    causes = summary.causes
    if not causes or not any(share.tasks for share in causes.values()):
        return []
    shown = rounded_shares(causes, gap=summary.consistency_gap_pp)
    parts = [
        f"{cause} {shown[cause]:.1f} pp{bracket(shown_interval(share, shown[cause]))} "
        f"({share.tasks} task{'s' if share.tasks != 1 else ''})"
        for cause, share in causes.items()
        if share.tasks
    ]
    text = "gap by cause: " + ", ".join(parts)
    if any(share.interval is not None for share in causes.values() if share.tasks):
        text += "; intervals conditional on the causes named"
    lines = [Line(text, "warn") for text in wrapped(text, width)]
    for line in advice_lines(summary.tasks, causes, summary.consistency_gap_pp):
        lines += [Line(text) for text in wrapped(f"  advice, {line}", width)]
    return lines


def trajectory_lines(summary: SessionSummary, verbosity: int, width: int) -> list[Line]:
    """Per inconsistent task, the attribution line (where its repetitions part, each branch's passes); with ``-v``
    the trajectory tree of every task whose repetitions part, as collapsed segments, and its figures."""
    lines: list[Line] = []
    for task in summary.tasks:
        mapped = task.trajectory
        if task.why is not None and (mapped is None or not mapped.parts):
            lines += [Line(text, "warn") for text in wrapped(f"{task.task_id}: cause {task.why.line}", width)]
        if mapped is None or not (mapped.parts or (verbosity > 0 and mapped.divergent_step is not None)):
            continue
        lines.append(Line(f"{task.task_id}: {mapped.line or 'repetitions part'}", "warn"))
        if task.why is not None:
            lines += [Line(text, "warn") for text in wrapped(f"  cause {task.why.line}", width)]
        if verbosity <= 0:
            continue
        distance = "n/a" if mapped.tool_distance is None else f"{mapped.tool_distance:.2f}"
        lines.append(
            Line(
                f"  {mapped.repetitions} repetitions, up to {mapped.steps} steps, distinct decisions per step "
                f"{' '.join(map(str, mapped.distinct[:30]))}{' ...' if len(mapped.distinct) > 30 else ''}, "
                f"tool-sequence distance {distance}"
            )
        )
        from pytest_consistency.analysis.trajectory.tree import segment_text, segments  # only with a tree to print

        shown = segments(mapped.tree)
        for segment in shown[:40]:
            lines.append(Line("  " + "  " * min(segment.depth, 10) + segment_text(segment)))
        if len(shown) > 40:
            lines.append(Line(f"  ... {len(shown) - 40} more branches (the JSON report and HTML page hold the tree)"))
    if lines:
        lines.append(Line(""))
    return lines


def render(summary: SessionSummary, verbosity: int = 0, width: int = 80) -> list[Line]:
    """All lines of the section. ``-q`` (verbosity -1) keeps the rows of the tasks that need a look (failed,
    undecided, inconsistent, regressed, in error), as pytest's ``-q`` keeps its failures, and the overall figures and
    gates; ``-qq`` the overall figures and gates only."""
    lines: list[Line] = []
    # A task with no cassette yet is one line saying how to record it (on CI, where it fails the run, its error line).
    unrecorded = [t for t in summary.tasks if t.not_recorded is not None]
    if unrecorded:
        lines += [Line(f"{t.task_id}: {t.not_recorded}", "warn") for t in unrecorded if t.verdict == "skipped"]
        if len(unrecorded) == len(summary.tasks):
            return lines + overall_lines(summary, width, figures=False)
        lines.append(Line(""))
    recorded = replace(summary, tasks=[t for t in summary.tasks if t.not_recorded is None]) if unrecorded else summary
    if verbosity >= 0 and recorded.tasks:
        lines.extend(task_rows(recorded, width))
        lines.append(Line(""))
        lines.extend(trajectory_lines(recorded, verbosity, width))
    elif verbosity == -1:
        changes = {c.task_id: c for c in summary.comparison.tasks} if summary.comparison else {}
        shown = [t for t in recorded.tasks if needs_a_look(t, changes.get(t.task_id))]
        if shown:
            hidden = len(recorded.tasks) - len(shown)
            lines.extend(task_rows(replace(summary, tasks=shown), width))
            lines.extend([Line(f"(-q: {hidden} task(s) that need no look not shown)")] if hidden else [])
            lines.append(Line(""))
    if summary.resample is not None:
        from pytest_consistency.report.resample import terminal_lines

        lines.extend(Line(text, style) for text, style in terminal_lines(summary.resample))  # type: ignore[arg-type]
        lines.append(Line(""))
    lines.extend(map(Line, judge_lines(summary.judge, width)))  # --consistency-rejudge: per task, the suite's split
    if summary.simulated_user is not None:  # --consistency-rejudge-role=agent: the simulated user's part
        from pytest_consistency.report.user import terminal_lines as user_lines

        lines.extend(map(Line, user_lines(summary.simulated_user, width)))
    lines.extend(overall_lines(summary, width, verbosity=verbosity))
    return lines


class TerminalFormat:
    """The terminal summary as plain text (what ``pytest-consistency show`` prints)."""

    name = "terminal"
    suffix = ".txt"

    def __init__(self, verbosity: int = 0, width: int = 80) -> None:
        self.verbosity = verbosity
        self.width = width

    def render(self, summary: SessionSummary) -> str:
        return "\n".join(line.text for line in render(summary, self.verbosity, self.width)) + "\n"


FORMAT = TerminalFormat()
