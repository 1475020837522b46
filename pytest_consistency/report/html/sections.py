"""The page's sections above and around the grid: verdict, figures, gates, route, baseline comparison, notes, why
repetitions part (the gap by cause), and the tasks x repetitions grid itself (whose cells ``page.js`` opens)."""

from __future__ import annotations

from pytest_consistency.analysis.cause.attribute import advice_lines
from pytest_consistency.analysis.gates import why_not_measurable
from pytest_consistency.analysis.judge_change import change_lines as judge_change_lines
from pytest_consistency.analysis.verdict import failure_reasons, inconsistent, tolerated_text
from pytest_consistency.model.result import Comparison, GateResult, SessionSummary
from pytest_consistency.report.html.data import (
    ATTRIBUTION_RANK,
    CAUSE_RANK,
    GATE_SYMBOL,
    LEAD_COLUMNS,
    NO_ANSWER,
    OUTCOMES,
    TOLERATED_SYMBOL,
    UNKNOWN_OUTCOME,
    VERDICT_RANK,
    VERDICT_SYMBOL,
    Classes,
    breakable,
    cause_parts,
    e,
    fmt_num,
)
from pytest_consistency.report.terminal import (
    GATE_WORD,
    TARGET_TEXT,
    arrows,
    bracket,
    caveats,
    detectable,
    gate_note,
    key_facts,
    own_clients_called,
    pct,
    pp,
    suite_change_text,
    unmeasured_drift,
    verdict_text,
)

# --- header ----------------------------------------------------------------------------------------------------


def verdict_section(summary: SessionSummary) -> str:
    reasons = [r.text for r in failure_reasons(summary) if r.kind != "error"]
    if summary.errors:
        reasons.append(f"{len(summary.errors)} error(s)")
    open_gates = [g for g in summary.gates if g.state == "undecided" and g.passed]
    if open_gates:
        reasons.append("undecided gates (counted as passed): " + ", ".join(g.option for g in open_gates))
    open_tasks = [t for t in summary.tasks if t.verdict == "undecided" and summary.counts_as_passed(t)]
    if open_tasks:
        reasons.append(f"{len(open_tasks)} undecided task(s) (counted as passed)")
    word, cls, symbol = ("passed", "good", "✓") if summary.passed else ("failed", "bad", "✗")
    if summary.passed and summary.run.shard is not None:
        word, cls, symbol = f"shard {summary.run.shard}: verdict deferred to the merge", "dim", "⏸"
    status = "" if summary.exit_status is None else f" (exit status {summary.exit_status})"
    why = f'<p class="why">{e("; ".join(reasons))}</p>' if reasons else ""
    return f'<div class="verdict {cls}"><span class="big">{symbol} {word}</span>{e(status)}{why}</div>'


def figures_section(summary: SessionSummary) -> str:
    k = "k" if summary.k is None else str(summary.k)
    n = "mixed" if summary.repeat is None else str(summary.repeat)
    iv = summary.intervals
    mean, hat, at, gap = (iv.mean_at_k, iv.pass_hat_k, iv.pass_at_k, iv.gap_pp) if iv else (None, None, None, None)
    cards = [
        ("consistency gap", pp(summary.consistency_gap_pp), bracket(gap).strip(), "Mean@k − pass^k"),
        (f"Mean@{k}", pct(summary.mean_at_k), bracket(mean, 100).strip(), "expected pass rate"),
        (f"pass^{k}", pct(summary.pass_hat_k), bracket(hat, 100).strip(), f"all {k} of {k} pass"),
        (f"pass@{k}", pct(summary.pass_at_k), bracket(at, 100).strip(), f"at least 1 of {k} passes"),
        ("answer disagreement", pp(summary.answer_disagreement_pp), "", "tasks whose answers differ"),
    ]
    parts = ['<div class="cards">']
    for label, value, interval, hint in cards:
        parts.append(
            f'<div class="card"><div class="label">{e(label)}</div><div class="value">{e(value)}</div>'
            f'<div class="interval">{e(interval) or "&nbsp;"}</div><div class="hint">{e(hint)}</div></div>'
        )
    parts.append("</div>")
    scope = f"{summary.task_count} scored task(s), n={n}, k={k if summary.k is not None else 'mixed'}"
    if iv is not None:
        scope += f"; intervals at {iv.confidence * 100:g} % confidence, for {TARGET_TEXT[iv.target]}"
        if iv.note:
            scope += f"; {iv.note}"
    parts.append(f'<p class="dim">{e(scope)}</p>')
    return "".join(parts)


def gate_row(gate: GateResult, summary: SessionSummary) -> str:
    unit = f" {gate.unit}" if gate.unit else ""
    bounds = f", one-sided bounds{bracket(gate.interval)}" if gate.interval is not None else ""
    value = "not measurable" if gate.value is None else fmt_num(gate.value, unit) + bounds
    if gate.value is None:
        reason = unmeasured_drift(summary) if gate.name == "route_drift" else why_not_measurable(gate.name, summary)
        value += f": {reason}" if reason else ""
    sign = "≤" if gate.direction == "max" else "≥"
    threshold = f"{sign} {fmt_num(gate.threshold, unit)}"
    if gate.name == "mcnemar_p" and gate.level is not None:
        threshold = f"{sign} {gate.level:.3g}"
    note = gate_note(gate, summary)
    cls = "good" if gate.state == "pass" else ("bad" if not gate.passed else "warn")
    state = f"{GATE_SYMBOL[gate.state]} {GATE_WORD[gate.state]}"
    return (
        f"<tr><td><code>{e(gate.option)}</code></td><td>{e(value)}</td><td>{e(threshold)}</td>"
        f'<td>{e(gate.on)}</td><td class="{cls}">{e(state)}</td><td>{e(note)}</td></tr>'
    )


def gates_section(summary: SessionSummary) -> str:
    if not summary.gates:
        return '<section><h2>Gates</h2><p class="dim">No gate set.</p></section>'
    rows = "".join(gate_row(gate, summary) for gate in summary.gates)
    return (
        '<section><h2>Gates</h2><table class="plain"><thead><tr><th>gate</th><th>value</th><th>threshold</th>'
        f"<th>decided on</th><th>state</th><th></th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def route_section(summary: SessionSummary) -> str:
    route = summary.route
    if route is None:
        return ""
    if not route.tasks_with_calls:  # a suite that made no HTTP call has no route to show (the terminal says none)
        return '<section><h2>Route</h2><p class="dim">No task made an HTTP call: no route was used.</p></section>'
    s = route.settings
    word, keys = key_facts(s, route.key_shown, summary.tasks)
    limits = f"{s.timeout:g} s / {s.max_retries}"
    own = own_clients_called(s, summary.tasks)
    facts = [
        ("base URL", s.base_url),
        ("model", s.model or "(per request)"),
        ("key fingerprints" if word == "keys" else "key fingerprint", keys),
        (
            ("timeout / retries (pinned clients)", f"{limits}; the agent's own clients: the SDK's unless set")
            if own
            else ("timeout / retries", limits)
        ),
        ("calls", f"{route.calls} ({route.retries} retries)"),
        (
            "tokens",
            f"{route.total_tokens} ({route.prompt_tokens} prompt + {route.completion_tokens} completion)"
            + ("" if route.avg_tokens_per_task is None else f"; {route.avg_tokens_per_task:.1f} per task-repetition"),
        ),
        (
            "route drift",
            f"{pp(route.drift_pp)} ({len(route.drift_tasks)} of the {route.tasks_with_calls} tasks with calls drifted)",
        ),
    ]
    if route.errors:
        facts.append(("errors", ", ".join(f"{kind} ×{count}" for kind, count in sorted(route.errors.items()))))
    if summary.run.record_mode:
        facts.append(("cassette mode", summary.run.record_mode))
    body = "".join(f"<dt>{e(label)}</dt><dd>{e(value)}</dd>" for label, value in facts)
    parts = [f'<section><h2>Route</h2><dl class="facts">{body}</dl>']
    drifted = [(i, t) for i, t in enumerate(summary.tasks) if t.drift is not None and (t.drifted or t.drift.warnings)]
    if drifted:
        parts.append('<h3>Route drift events</h3><ul class="events">')
        for index, task in drifted:
            assert task.drift is not None
            items = [f'<li class="warn">⚠ {e(detail)}</li>' for detail in task.drift.details]
            items += [f'<li class="dim">{e(warning)}</li>' for warning in task.drift.warnings]
            kinds = f" ({e(', '.join(task.drift.kinds))})" if task.drift.kinds else ""
            parts.append(f'<li><a href="#row-{index}">{e(task.task_id)}</a>{kinds}<ul>{"".join(items)}</ul></li>')
        parts.append("</ul>")
    parts.append("</section>")
    return "".join(parts)


def comparison_section(c: Comparison) -> str:
    gap = "n/a" if c.gap_change_pp is None else f"{c.gap_change_pp:+.1f} pp{bracket(c.gap_change_interval)}"
    flips = f"{c.flips_worse} worse, {c.flips_better} better" + (
        "" if c.flips_p_value is None else f" (McNemar p = {c.flips_p_value:.3g})"
    )
    facts = [
        ("baseline", c.baseline),
        ("tasks in both runs", str(c.common_tasks)),
        ("regressions", f"{c.regressions} ({c.test}, one-sided, Benjamini–Hochberg q ≤ {c.alpha:g})"),
        ("gap change", gap),
        ("pass^n flips", flips),
        ("minimum detectable drop", detectable(c)),
    ]
    if c.suite_change is not None:
        facts.insert(4, ("suite-level change", arrows(suite_change_text(c)).removeprefix("suite-level change: ")))
    facts += [("note", text) for text in caveats(c)]
    facts += [("judge", arrows(text.removeprefix("judge "))) for text in judge_change_lines(c)]
    if c.baseline_tokens_per_task and c.current_tokens_per_task:
        before, after = c.baseline_tokens_per_task, c.current_tokens_per_task
        facts.append(
            ("tokens per task-repetition", f"{before:.1f} → {after:.1f} ({(after - before) * 100 / before:+.1f} %)")
        )
    body = "".join(f"<dt>{e(label)}</dt><dd>{e(value)}</dd>" for label, value in facts)
    cls = "bad" if c.regressions or c.suite_regression else ""
    parts = [f'<section><h2>Baseline comparison</h2><dl class="facts {cls}">{body}</dl>']
    shown = [t for t in c.tasks if t.status != "unchanged" or t.regression]
    if shown:
        parts.append(
            '<table class="plain"><thead><tr><th>task</th><th>status</th><th>baseline → current</th><th>p</th>'
            "<th>q</th><th>regression</th></tr></thead><tbody>"
        )
        for t in shown:
            p = "" if t.p_value is None else f"{t.p_value:.3g}"
            q = "" if t.q_value is None else f"{t.q_value:.3g}"
            flag = "✗ REGRESSION" if t.regression else ""
            if t.confounded:
                flag += " (route drift: confounded)"
            parts.append(
                f'<tr class="{"bad" if t.regression else ""}"><td>{e(t.task_id)}</td><td>{e(t.status)}</td>'
                f"<td>{e(t.baseline or '-')} → {e(t.current or '-')}</td><td>{e(p)}</td><td>{e(q)}</td>"
                f"<td>{e(flag)}</td></tr>"
            )
        parts.append("</tbody></table>")
    unchanged = len(c.tasks) - len(shown)
    if unchanged:
        parts.append(f'<p class="dim">{unchanged} task(s) unchanged.</p>')
    if c.route_changes:
        parts.append(
            '<ul class="events">'
            + "".join(f'<li class="warn">⚠ route change: {e(arrows(x))}</li>' for x in c.route_changes)
            + "</ul>"
        )
    parts.append("</section>")
    return "".join(parts)


def notes_section(summary: SessionSummary) -> str:
    items: list[str] = []
    a = summary.adaptive
    if a is not None:
        items.append(
            f"<li>adaptive (n_min {a.n_min}): {a.tasks_curtailed} task(s) stopped early once their verdict was "
            f"decided; {a.repetitions_used} repetitions run, {a.repetitions_saved} saved (about {a.calls_saved:g} "
            "calls)</li>"
        )
    if summary.sequential is not None:
        items.append(f"<li>{e(summary.sequential.text)}</li>")
    tolerated = tolerated_text(summary)
    if tolerated:
        items.append(f"<li>{e(tolerated)}</li>")
    if summary.run.equivalence != "default":
        items.append(
            f"<li>answers were compared with {e(summary.run.equivalence)}; the class letters here group identical "
            "normalised answers, so they may split a class the hook merged</li>"
        )
    items += [f'<li class="warn">⚠ warning: {e(text)}</li>' for text in summary.warnings]
    items += [f'<li class="bad">✗ error: {e(text)}</li>' for text in summary.errors]
    if not items:
        return ""
    return f'<section><h2>Notes</h2><ul class="events">{"".join(items)}</ul></section>'


def causes_section(summary: SessionSummary) -> str:
    """Why repetitions part: per cause present, its tasks (linked to their diagnosis), its points of the gap, rounded
    so that the column adds up to the total it shows, and their interval (conditional on the causes named); then one
    line of advice per cause."""
    parts = cause_parts(summary)  # what the chart of the gap by cause draws, too
    if not parts:
        return ""
    causes = summary.causes
    index = {task.task_id: i for i, task in enumerate(summary.tasks) if inconsistent(task)}
    rows = []
    for part in parts:
        links = ", ".join(
            f'<a href="#why-{index[task_id]}">{e(task_id)}</a>' if task_id in index else e(task_id)
            for task_id in part.task_ids
        )
        rows.append(
            f'<tr><td>{e(part.cause)}</td><td class="num">{part.tasks}</td><td class="num">{part.points:.1f} pp</td>'
            f'<td class="num">{e(bracket(part.interval).strip()) or "–"}</td>'
            f"<td>{links}</td></tr>"
        )
    total = sum(part.tasks for part in parts)
    rows.append(
        f'<tr><th scope="row">all causes</th><td class="num">{total}</td>'
        f'<td class="num"><b>{sum(part.points for part in parts):.1f} pp</b></td><td></td><td></td></tr>'
    )
    advice = "".join(f"<li>{e(line)}</li>" for line in advice_lines(summary.tasks, causes, summary.consistency_gap_pp))
    level = f"{summary.analysis.confidence * 100:g} %"
    return (
        '<section id="causes"><h2>Why repetitions part</h2><p class="dim">The first thing that differed between '
        "an inconsistent task's repetitions and separates those that passed from those that failed, from the calls "
        "they made; each task's share of the gap goes to its cause. Intervals at "
        f"{level} confidence, conditional on the causes named.</p>"
        '<table class="plain"><thead><tr><th>cause</th><th>tasks</th><th>points of the gap</th>'
        f"<th>interval</th><th>which</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f'<h3>Advice</h3><ul class="events">{advice}</ul></section>'
    )


# --- grid ------------------------------------------------------------------------------------------------------


def task_label(task_id: str) -> str:
    """The test name first, its file below it, small: ids share long prefixes. Both may wrap only between the parts
    of a name (:func:`.data.breakable`), never inside a word."""
    head, sep, tail = task_id.rpartition("::")
    if not sep:
        return breakable(task_id)
    return f'{breakable(tail)}<span class="tf">{breakable(head + "::")}</span>'


def grid_section(summary: SessionSummary, classes: list[Classes]) -> str:
    width = max((len(t.repetitions) for t in summary.tasks), default=0)
    level = f"{summary.analysis.confidence * 100:g} %"
    reps = "".join(f'<th class="rh">{i}</th>' for i in range(1, width + 1))
    parts = [
        '<section id="tasks"><h2>Tasks × repetitions</h2>',
        '<p class="legend">✓ passed · ✗ failed · ! error · – skipped · ○ not run · · not needed (verdict decided); '
        f"A, B, C… the answer class (same letter, same normalised answer), {NO_ANSWER} no answer recorded; "
        f"verdict {TOLERATED_SYMBOL}: the task met a min_pass below 1 with failed repetitions. "
        "Click a cell (or focus it and press Enter; arrow keys move) for that repetition's route, calls and answer. "
        "Sort by the column buttons.</p>",
        # The grid scrolls in its own box; the details panel sits beside it when both fit, else below it (flex-wrap
        # decides on the grid's own width), so that it never covers a repetition.
        '<div class="work"><div class="gridwrap">',
        f'<table id="grid" data-lead="{LEAD_COLUMNS}"><thead><tr>',
        '<th class="tid"><button type="button" data-sort="order">task</button></th>',
        "<th>passes</th>",
        f'<th class="opt">pass rate {e(level)}</th>',
        '<th class="opt"><button type="button" data-sort="gap">gap</button></th>',
        '<th><button type="button" data-sort="verdict">verdict</button></th>',
        '<th class="opt"><button type="button" data-sort="attribution">attribution</button></th>',
        '<th class="opt"><button type="button" data-sort="cause">cause</button></th>',
        f"{reps}</tr></thead><tbody>",
    ]
    first = True
    for index, (task, named) in enumerate(zip(summary.tasks, classes, strict=True)):
        verdict = verdict_text(task)
        if task.attribution and verdict.endswith(f", {task.attribution}"):
            verdict = verdict[: -len(task.attribution) - 2]
        gap = "" if task.gap_pp is None else f"{task.gap_pp:.1f}"
        rate = bracket(task.pass_rate_interval, 100).strip() or "-"
        passes = f"{task.passes}/{task.scored}" if task.scored else "-"
        vcls = {"fail": "bad", "error": "bad", "pass": "good", "undecided": "warn"}.get(task.verdict, "dim")
        symbol = VERDICT_SYMBOL.get(task.verdict, "?")
        if task.verdict == "pass" and task.passes < task.scored:  # met a min_pass below 1 (0/5 at min_pass=0 too)
            vcls, symbol = "warn", TOLERATED_SYMBOL
        if task.attribution:
            target = f"why-{index}" if inconsistent(task) else f"row-{index}"
            mark = "⚠ " if task.attribution == "route drift" else ""
            attribution = f'<a href="#{target}">{mark}{e(task.attribution)}</a>'
        else:
            attribution = ""
        if task.errors:
            attribution += ' <span class="bad" title="' + e("; ".join(task.errors)) + '">✗ error</span>'
        cause = ""
        if task.cause is not None:
            step = "" if task.why is None or task.why.step is None else f" @{task.why.step}"
            target = f"why-{index}" if inconsistent(task) else f"row-{index}"
            cause = f'<a href="#{target}">{e(task.cause)}{e(step)}</a>'
        row = [
            f'<tr id="row-{index}" data-i="{index}" data-gap="{gap}" data-vr="{VERDICT_RANK.get(task.verdict, 9)}"'
            f' data-ar="{ATTRIBUTION_RANK.get(task.attribution or "", 2)}"'
            f' data-cr="{CAUSE_RANK.get(task.cause or "", len(CAUSE_RANK))}">',
            f'<th class="tid" scope="row">{task_label(task.task_id)}</th>',
            f'<td class="num">{passes}</td><td class="num opt">{e(rate)}</td><td class="num opt">{gap or "-"}</td>',
            f'<td class="v {vcls}">{symbol} <span class="vw">{e(verdict)}</span></td>'
            f'<td class="opt">{attribution}</td><td class="opt">{cause}</td>',
        ]
        for position, rep in enumerate(task.repetitions):
            symbol, cls, _ = OUTCOMES.get(rep.outcome, UNKNOWN_OUTCOME)
            name = named.letters[position]
            hue = "" if not name or name == NO_ANSWER else f" h{(ord(name[0]) - 65) % 8}"
            tab = ' tabindex="0"' if first else ""
            first = False
            row.append(f'<td class="c {cls}{hue}"{tab}>{symbol}{e(name)}</td>')
        row.append("<td></td>" * (width - len(task.repetitions)))
        row.append("</tr>")
        parts.append("".join(row))
    parts.append(
        '</tbody></table></div><aside id="details" aria-live="polite" tabindex="-1"><h2>Repetition</h2>'
        '<p class="dim">Select a cell of the grid to see its route, calls and answer here.</p></aside></div></section>'
    )
    return "".join(parts)


def resample_section(summary: SessionSummary) -> str:
    if summary.resample is None:
        return ""
    from pytest_consistency.report.resample import html_section

    return html_section(summary.resample)
