"""The HTML report: one self-contained page to look at a session's inconsistency, not only to read its figures.

Why a page beside the terminal summary and the JSON report: the question after "the gap is 24 pp" is *which*
repetitions disagreed, *how* (the answers) and *whether the route moved under them* (the calls). The page answers
that with a tasks x repetitions grid whose cells open the repetition's route and calls, and with a side-by-side of
one passing and one failing repetition of every inconsistent task, up to the first call where they part.

Constraints, each for a reason:

- **One file, nothing fetched.** CSS and JS are inline; no font, image, script or style is loaded from anywhere, so
  the page works opened from disk (``file://``), as a CI artifact, and offline, and leaks nothing when opened.
- **Read in greyscale.** Every state is a symbol as well as a colour: ✓ ✗ ! – ○ · for outcomes, letters A, B, C...
  for answer classes, so colour-blind readers and printouts lose nothing.
- **Small at scale.** The grid is one light ``<td>`` per repetition; per-repetition data (answers, notes, calls) is
  embedded once as JSON, with repeated strings interned, and the details panel is built from it on demand. 500
  tasks x 10 repetitions stay a few MB and load in well under a second (``scripts/html_scale.py`` measures it).
- **Hostile text is inert.** Every string goes through :func:`html.escape`; the JSON block escapes ``<``, ``>`` and
  ``&`` as ``\\u003c`` etc., so an answer holding ``</script>`` cannot close the block; the script only ever sets
  ``textContent``.
- **A pure function of the summary.** No clock, no randomness, no environment: the same report renders the same
  bytes, in the session (``--consistency-html``) and in ``pytest-consistency show REPORT --format html``.

Answer classes here group identical normalised answers (the default equivalence); a session that used a
``pytest_consistency_answers_equivalent`` hook says so on the page, since its grouping may be coarser.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from pytest_consistency.analysis.answers import MISSING, canonical_json, distinct_classes
from pytest_consistency.analysis.trajectory.tree import Segment, segments
from pytest_consistency.analysis.verdict import failure_reasons, tolerated_text
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import Comparison, GateResult, SessionSummary, TaskResult
from pytest_consistency.report.encodable import ESCAPE_NOTE, needs_escape, visible, visible_in_json
from pytest_consistency.report.terminal import (
    GATE_WORD,
    TARGET_TEXT,
    bracket,
    caveats,
    detectable,
    key_facts,
    own_clients_called,
    pct,
    pp,
    suite_change_text,
    unmeasured_drift,
    verdict_text,
)

#: Outcome -> (symbol, CSS class, words). Symbols carry the state without colour.
OUTCOMES: dict[str, tuple[str, str, str]] = {
    "passed": ("✓", "p", "passed"),
    "xpassed": ("✓", "p", "xpassed (unexpectedly passed)"),
    "failed": ("✗", "f", "failed"),
    "xfailed": ("✗", "xf", "xfailed (expected failure)"),
    "error": ("!", "e", "error in setup or teardown"),
    "skipped": ("–", "s", "skipped"),
    "not run": ("○", "n", "not run"),
    "curtailed": ("·", "n", "skipped by adaptive mode (verdict already decided)"),
}
UNKNOWN_OUTCOME = ("?", "n", "unknown outcome")
#: Sort ranks: worst first.
VERDICT_RANK = {"error": 0, "fail": 0, "incomplete": 1, "xfail": 2, "pass": 3, "skipped": 4}
ATTRIBUTION_RANK = {"route drift": 0, "agent": 1}
VERDICT_SYMBOL = {"pass": "✓", "fail": "✗", "error": "⚠", "xfail": "✗", "incomplete": "○", "skipped": "–"}
GATE_SYMBOL = {"pass": "✓", "fail": "✗", "inconclusive": "?"}
#: The symbol of the class of repetitions that recorded no answer.
NO_ANSWER = "∅"
#: Answers longer than this are cut in the side-by-side (the details panel shows up to :data:`ANSWER_LIMIT`).
ANSWER_PREVIEW = 400
#: Answer classes listed per inconsistent task (the largest first); the grid's letters show the others.
CLASSES_SHOWN = 6
ANSWER_LIMIT = 20_000
#: Columns of a grid row before the repetition cells (the script reads it from ``data-lead``).
LEAD_COLUMNS = 6
#: Inconsistent tasks whose diagnosis is open on load; beyond that they start closed, to keep the page short.
OPEN_DIAGNOSES = 12
#: Decisions shown on one line of a trajectory tree (a run of steps without a branch); the rest are counted.
TREE_LABELS = 4


def e(value: object) -> str:
    """Escape for text and for quoted attribute values."""
    return escape(str(value), quote=True)


def letter(index: int) -> str:
    """A, B, ... Z, A1, B1, ...: the name of an answer class."""
    return chr(65 + index % 26) + (str(index // 26) if index >= 26 else "")


def answer_text(value: Any) -> str:
    """An answer as shown: strings as they are, anything else as one line of JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def url_path(call: CallRecord) -> str:
    """The endpoint relative to the call's base URL (``/chat/completions``), or the whole URL elsewhere."""
    if call.base_url and call.url.startswith(call.base_url):
        return call.url[len(call.base_url) :] or "/"
    return call.url


def fmt_num(value: float | None, unit: str = "") -> str:
    if value is None:
        return "n/a"
    return f"{value:.1f}{unit}" if unit else f"{value:g}"


@dataclass
class Classes:
    """Answer classes of one task: the class letter per repetition (by position) and each class's members."""

    letters: list[str]
    members: list[tuple[str, list[int]]]


def answer_classes(task: TaskResult) -> Classes:
    """Group the scored repetitions' normalised answers, exactly as the summary does with the default equivalence."""
    letters = [""] * len(task.repetitions)
    if task.distinct_answers is None and task.answers_disagree is None:
        return Classes(letters, [])
    scored = [i for i, r in enumerate(task.repetitions) if r.scored]
    answers = [
        (
            task.repetitions[i].answer_recorded,
            task.repetitions[i].normalized if task.repetitions[i].answer_recorded else MISSING,
        )
        for i in scored
    ]
    members: list[tuple[str, list[int]]] = []
    named = 0
    for group in distinct_classes(answers, lambda a, b: canonical_json(a) == canonical_json(b)):
        positions = [scored[i] for i in group]
        if not task.repetitions[positions[0]].answer_recorded:
            name = NO_ANSWER
        else:
            name = letter(named)
            named += 1
        members.append((name, positions))
        for position in positions:
            letters[position] = name
    return Classes(letters, members)


def inconsistent(task: TaskResult) -> bool:
    return bool(task.answers_disagree) or 0 < task.passes < task.scored


class Strings:
    """Interned strings of the embedded data: each distinct string is stored once and referred to by index."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self.index: dict[str, int] = {}

    def __call__(self, value: str | None) -> int | None:
        if value is None:
            return None
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.table)
            self.table.append(value)
        return found


def call_data(call: CallRecord, s: Strings) -> list[Any]:
    """One call as an array (the script's ``CALL`` field order)."""
    return [
        s(call.method),
        s(call.url),
        s(call.base_url),
        s(call.key_fingerprint),
        s(call.model_requested),
        s(call.model_served),
        call.status,
        s(call.error),
        s(call.detail),
        call.retry_index,
        None if call.latency_ms is None else round(call.latency_ms, 1),
        call.prompt_tokens,
        call.completion_tokens,
        call.total_tokens,
        int(call.replayed) + 2 * int(call.stream) + 4 * int(call.tokens_estimated),
    ]


def repetition_data(rep: RepetitionResult, name: str, s: Strings) -> dict[str, Any]:
    data: dict[str, Any] = {"o": rep.outcome, "r": rep.repeat}
    if rep.message:
        data["f"] = s(cut(rep.message, ANSWER_LIMIT))
    if rep.infrastructure:
        data["e"] = s(rep.infrastructure)
    if name:
        data["c"] = name
    if rep.answer_recorded:
        # One-line JSON (the fast encoder); the script indents it for display. ``j``: the answer is not a string.
        data["a"] = s(cut(answer_text(rep.answer), ANSWER_LIMIT))
        if not isinstance(rep.answer, str):
            data["j"] = 1
        if rep.normalized != rep.answer:
            data["z"] = s(cut(answer_text(rep.normalized), ANSWER_LIMIT))
            if not isinstance(rep.normalized, str):
                data["y"] = 1
    if rep.notes:
        data["m"] = [s(note) for note in rep.notes]
    if rep.calls:
        data["k"] = [call_data(call, s) for call in rep.calls]
    data["d"] = round(rep.duration, 3)
    if rep.cassette:
        data["x"] = s(rep.cassette)
    if rep.reruns:
        data["u"] = rep.reruns
    if rep.unobserved:
        data["w"] = rep.unobserved
    return data


def embedded_json(data: Any) -> tuple[str, bool]:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` can end or open a tag; and
    whether it had to escape text UTF-8 cannot encode (see :mod:`.encodable`)."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = visible_in_json(raw).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text, needs_escape(raw)


# --- header ----------------------------------------------------------------------------------------------------


def verdict_section(summary: SessionSummary) -> str:
    reasons = [r.text for r in failure_reasons(summary) if r.kind != "error"]
    if summary.errors:
        reasons.append(f"{len(summary.errors)} error(s)")
    open_gates = [g for g in summary.gates if g.state == "inconclusive" and g.passed]
    if open_gates:
        reasons.append("inconclusive gates (counted as passed): " + ", ".join(g.option for g in open_gates))
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
    value = "not measurable" if gate.value is None else fmt_num(gate.value, unit) + bracket(gate.interval)
    if gate.value is None and gate.name == "route_drift":
        value += f": {unmeasured_drift(summary)}"
    sign = "≤" if gate.direction == "max" else "≥"
    threshold = f"{sign} {fmt_num(gate.threshold, unit)}"
    note = ""
    if gate.state == "inconclusive":
        more = (
            f"about {gate.more_repetitions} more repetitions per task would likely decide it"
            if gate.more_repetitions is not None
            else "more repetitions alone will not decide it"
        )
        more = gate.advice or more
        note = f"{more}; counted as {'a pass' if gate.passed else 'a failure'}"
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
            f"{pp(route.drift_pp)} ({len(route.drift_tasks)} of {route.tasks_with_calls} tasks with calls)",
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
        facts.insert(4, ("suite-level change", suite_change_text(c).removeprefix("suite-level change: ")))
    facts += [("note", text) for text in caveats(c)]
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
            + "".join(f'<li class="warn">⚠ route change: {e(x)}</li>' for x in c.route_changes)
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


# --- grid ------------------------------------------------------------------------------------------------------


def task_label(task_id: str) -> str:
    """The test name first, its file below it, small: ids share long prefixes."""
    head, sep, tail = task_id.rpartition("::")
    if not sep:
        return e(task_id)
    return f'{e(tail)}<span class="tf">{e(head)}::</span>'


def grid_section(summary: SessionSummary, classes: list[Classes]) -> str:
    width = max((len(t.repetitions) for t in summary.tasks), default=0)
    level = f"{summary.analysis.confidence * 100:g} %"
    reps = "".join(f'<th class="rh">{i}</th>' for i in range(1, width + 1))
    parts = [
        '<section class="gridwrap"><h2>Tasks × repetitions</h2>',
        '<p class="legend">✓ passed · ✗ failed · ! error · – skipped · ○ not run · · stopped by adaptive mode; '
        f"A, B, C… the answer class (same letter, same normalised answer), {NO_ANSWER} no answer recorded. "
        "Click a cell (or focus it and press Enter; arrow keys move) for that repetition's route, calls and answer. "
        "Sort by the column buttons.</p>",
        f'<table id="grid" data-lead="{LEAD_COLUMNS}"><thead><tr>',
        '<th class="tid"><button type="button" data-sort="order">task</button></th>',
        "<th>passes</th>",
        f'<th class="opt">pass rate {e(level)}</th>',
        '<th class="opt"><button type="button" data-sort="gap">gap</button></th>',
        '<th><button type="button" data-sort="verdict">verdict</button></th>',
        '<th class="opt"><button type="button" data-sort="attribution">attribution</button></th>',
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
        vcls = {"fail": "bad", "error": "bad", "pass": "good"}.get(task.verdict, "dim")
        if task.attribution:
            target = f"why-{index}" if inconsistent(task) else f"row-{index}"
            mark = "⚠ " if task.attribution == "route drift" else ""
            attribution = f'<a href="#{target}">{mark}{e(task.attribution)}</a>'
        else:
            attribution = ""
        if task.errors:
            attribution += ' <span class="bad" title="' + e("; ".join(task.errors)) + '">✗ error</span>'
        row = [
            f'<tr id="row-{index}" data-i="{index}" data-gap="{gap}" data-vr="{VERDICT_RANK.get(task.verdict, 9)}"'
            f' data-ar="{ATTRIBUTION_RANK.get(task.attribution or "", 2)}">',
            f'<th class="tid" scope="row">{task_label(task.task_id)}</th>',
            f'<td class="num">{passes}</td><td class="num opt">{e(rate)}</td><td class="num opt">{gap or "-"}</td>',
            f'<td class="v {vcls}">{VERDICT_SYMBOL.get(task.verdict, "?")} <span class="vw">{e(verdict)}</span></td>'
            f'<td class="opt">{attribution}</td>',
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
    parts.append("</tbody></table></section>")
    return "".join(parts)


# --- inconsistent tasks ----------------------------------------------------------------------------------------

CALL_FIELDS = ("endpoint", "model", "key", "tokens", "status")


def call_facts(call: CallRecord) -> dict[str, str]:
    model = call.model_requested or "-"
    if call.model_served and call.model_served != call.model_requested:
        model += f" → {call.model_served}"
    status = "-" if call.status is None else str(call.status)
    if call.error:
        status += f" {call.error}"
    return {
        "endpoint": f"{call.method} {url_path(call)}",
        "key": call.key_fingerprint or "-",
        "model": model,
        "tokens": f"{call.prompt_tokens}+{call.completion_tokens}={call.total_tokens}",
        "status": status,
    }


def first_difference(left: Sequence[CallRecord], right: Sequence[CallRecord]) -> int | None:
    """Index of the first call that differs in endpoint, model, key, tokens or status; None when they match."""
    for index in range(max(len(left), len(right))):
        if index >= len(left) or index >= len(right) or call_facts(left[index]) != call_facts(right[index]):
            return index
    return None


def calls_table(calls: Sequence[CallRecord], other: Sequence[CallRecord], upto: int | None) -> str:
    if not calls:
        return '<p class="dim">no calls recorded</p>'
    end = len(calls) if upto is None else min(upto + 1, len(calls))
    rows = []
    missing = (
        ""
        if upto is None or upto < len(calls)
        else f'<tr class="diff"><td>{upto + 1}</td><td colspan="{len(CALL_FIELDS)}">'
        f"<mark>no call {upto + 1}</mark></td></tr>"
    )
    for index in range(end):
        mine = call_facts(calls[index])
        theirs = call_facts(other[index]) if index < len(other) else None
        cells = []
        for name in CALL_FIELDS:
            text = e(mine[name])
            if index == upto and (theirs is None or theirs[name] != mine[name]):
                text = f"<mark>{text}</mark>"
            cells.append(f"<td>{text}</td>")
        cls = ' class="diff"' if index == upto else ""
        rows.append(f"<tr{cls}><td>{index + 1}</td>{''.join(cells)}</tr>")
    more = len(calls) - end
    tail = f'<p class="dim">… {more} later call(s) not shown</p>' if more else ""
    head = "<th>#</th>" + "".join(f"<th>{name}</th>" for name in CALL_FIELDS)
    rows.append(missing)
    return f'<table class="plain calls"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>{tail}'


def side(title: str, rep: RepetitionResult, name: str, calls_html: str) -> str:
    symbol, cls, words = OUTCOMES.get(rep.outcome, UNKNOWN_OUTCOME)
    answer = cut(answer_text(rep.answer), ANSWER_PREVIEW) if rep.answer_recorded else "(no answer recorded)"
    label = f", answer {name}" if name else ""
    return (
        f'<div class="side"><h4>{e(title)}: repetition {rep.repeat} <span class="tag {cls}">{symbol} {e(words)}'
        f"</span>{e(label)}</h4><pre>{e(answer)}</pre>{calls_html}</div>"
    )


def pair_of(task: TaskResult, named: Classes) -> tuple[int, int, str, str] | None:
    """Positions of the two repetitions to set side by side: one passing and one failing, else two answer classes."""
    reps = task.repetitions
    passing = next((i for i, r in enumerate(reps) if r.scored and r.succeeded), None)
    failing = next((i for i, r in enumerate(reps) if r.scored and not r.succeeded), None)
    if passing is not None and failing is not None:
        return passing, failing, "passing", "failing"
    if len(named.members) >= 2:
        a, b = named.members[0], named.members[1]
        return a[1][0], b[1][0], f"answer {a[0]}", f"answer {b[0]}"
    return None


def diagnosis(index: int, task: TaskResult, named: Classes, opened: bool) -> str:
    parts = [
        f'<details id="why-{index}"{" open" if opened else ""}><summary><b>{e(task.task_id)}</b> '
        f'<span class="dim">{task.passes}/{task.scored} passed, {len(named.members) or "no"} answer class(es)'
        f"{', ' + e(task.attribution) if task.attribution else ''}</span></summary>"
    ]
    if named.members:
        parts.append(
            '<table class="plain answers"><thead><tr><th>class</th><th>count</th><th>first</th>'
            "<th>answer</th></tr></thead><tbody>"
        )
        ranked = sorted(named.members, key=lambda item: -len(item[1]))  # stable: ties keep letter order
        for name, members in ranked[:CLASSES_SHOWN]:
            rep = task.repetitions[members[0]]
            answer = cut(answer_text(rep.answer), ANSWER_PREVIEW) if rep.answer_recorded else "(no answer recorded)"
            parts.append(
                f"<tr><td><b>{e(name)}</b></td><td>{len(members)}</td><td>rep {rep.repeat}</td>"
                f"<td><pre>{e(answer)}</pre></td></tr>"
            )
        parts.append("</tbody></table>")
        if len(ranked) > CLASSES_SHOWN:
            more = len(ranked) - CLASSES_SHOWN
            parts.append(
                f'<p class="dim">… and {more} more answer class(es) of one repetition or so: see the grid.</p>'
            )
    pair = pair_of(task, named)
    if pair is not None:
        left_at, right_at, left_title, right_title = pair
        left, right = task.repetitions[left_at], task.repetitions[right_at]
        upto = first_difference(left.calls, right.calls)
        if not left.calls and not right.calls:
            how = "Neither repetition recorded a call."
        elif upto is None:
            how = "Their calls match in endpoint, model, key, tokens and status: the difference is in the answers."
        else:
            how = f"Calls up to the first that differs (call {upto + 1}, highlighted)."
        parts.append(f'<p class="dim">{e(how)}</p><div class="pair">')
        parts.append(side(left_title, left, named.letters[left_at], calls_table(left.calls, right.calls, upto)))
        parts.append(side(right_title, right, named.letters[right_at], calls_table(right.calls, left.calls, upto)))
        parts.append("</div>")
    parts.append("</details>")
    return "".join(parts)


def diagnoses_section(summary: SessionSummary, classes: list[Classes]) -> str:
    chosen = [(i, t, c) for i, (t, c) in enumerate(zip(summary.tasks, classes, strict=True)) if inconsistent(t)]
    if not chosen:
        return '<section><h2>Inconsistent tasks</h2><p class="dim">None: every task repeated itself.</p></section>'
    opened = len(chosen) <= OPEN_DIAGNOSES
    body = "".join(diagnosis(i, t, c, opened) for i, t, c in chosen)
    return (
        f'<section><h2>Inconsistent tasks ({len(chosen)})</h2><p class="dim">Answers disagree or some but not all '
        f"repetitions passed. Each shows its distinct answers, then one passing and one failing repetition side by "
        f"side.</p>{body}</section>"
    )


def segment_html(segment: Segment) -> str:
    """One run of steps without a branch: its pass share as a bar, its steps, its decisions, its counts."""
    share = segment.passed / segment.count if segment.count else 0.0
    where = f"step {segment.first}" if segment.first == segment.last else f"steps {segment.first}–{segment.last}"
    labels = list(segment.labels)
    if len(labels) > TREE_LABELS:
        labels = [*labels[: TREE_LABELS - 1], f"… {len(labels) - TREE_LABELS} more …", labels[-1]]
    cls = "good" if segment.passed == segment.count else "bad" if not segment.passed else "warn"
    return (
        f'<span class="share" title="{segment.passed} of {segment.count} passed">'
        f'<span style="width:{share * 100:.0f}%"></span></span> <span class="where">{e(where)}</span> '
        f'<span class="steps">{" → ".join(e(label) for label in labels)}</span> '
        f'<span class="{cls}">{segment.passed}/{segment.count} passed</span>'
    )


def tree_html(shown: Sequence[Segment]) -> str:
    """The tree as nested lists; a segment with branches below is a ``<details>``, open at the first branch
    point only (the rest collapsed), so 20 repetitions over 30 steps read as a few lines until opened."""
    out = ['<ul class="tree">']
    for index, segment in enumerate(shown):
        below = shown[index + 1].depth if index + 1 < len(shown) else 0
        if below > segment.depth:
            opened = " open" if segment.depth == 0 else ""
            out.append(f'<li><details class="node"{opened}><summary>{segment_html(segment)}</summary><ul>')
            continue
        out.append(f'<li><div class="leaf">{segment_html(segment)}</div></li>')
        out.extend("</ul></details></li>" for _ in range(segment.depth - below))
    out.append("</ul>")
    return "".join(out)


def trajectories_section(summary: SessionSummary) -> str:
    """Where each task's repetitions part: the attribution line and the trajectory tree, per task that parts."""
    chosen = [
        t for t in summary.tasks if t.trajectory is not None and (t.trajectory.parts or t.trajectory.divergent_step)
    ]
    if not chosen:
        return ""
    opened = len(chosen) <= OPEN_DIAGNOSES
    parts = [
        f'<section id="trajectories"><h2>Where repetitions part ({len(chosen)})</h2><p class="dim">The prefix tree '
        "of each task's model steps: repetitions that decided alike share a line; the bar is the share that passed. "
        "Open a line to see the branches below it.</p>"
    ]
    for task in chosen:
        mapped = task.trajectory
        assert mapped is not None
        distance = "n/a" if mapped.tool_distance is None else f"{mapped.tool_distance:.2f}"
        step = "never" if mapped.divergent_step is None else f"at step {mapped.divergent_step}"
        line = mapped.line or f"repetitions part {step}"
        parts.append(
            f'<details class="trajectory"{" open" if opened else ""}><summary><b>{e(task.task_id)}</b> '
            f'<span class="dim">{e(line)}</span></summary>'
            f'<p class="dim">{mapped.repetitions} repetitions, up to {mapped.steps} steps; first divergent step: '
            f"{e(step)}; distinct decisions per step: {e(' '.join(map(str, mapped.distinct)))}; tool-sequence "
            f"distance {e(distance)}</p>{tree_html(segments(mapped.tree))}</details>"
        )
    parts.append("</section>")
    return "".join(parts)


# --- page ------------------------------------------------------------------------------------------------------


def page_data(summary: SessionSummary, classes: list[Classes]) -> dict[str, Any]:
    s = Strings()
    tasks = []
    for task, named in zip(summary.tasks, classes, strict=True):
        reps = [repetition_data(rep, named.letters[i], s) for i, rep in enumerate(task.repetitions)]
        tasks.append({"id": s(task.task_id), "n": task.n, "r": reps})
    pinned: dict[str, Any] = {}
    if summary.run.route is not None:
        r = summary.run.route
        pinned = {"base": r.base_url, "model": r.model, "key": r.key_fingerprint, "retries": r.retries_max}
    outcomes = {name: [symbol, words] for name, (symbol, _, words) in OUTCOMES.items()}
    return {"s": s.table, "t": tasks, "p": pinned, "o": outcomes}


def render(summary: SessionSummary) -> str:
    classes = [answer_classes(task) for task in summary.tasks]
    title = f"pytest-consistency: {'passed' if summary.passed else 'failed'}, gap {pp(summary.consistency_gap_pp)}"
    body = [
        "<header><h1>pytest-consistency report</h1>",
        verdict_section(summary),
        figures_section(summary),
        "</header><main>",
        '<div class="top">',
        gates_section(summary),
        route_section(summary),
        "</div>",
        comparison_section(summary.comparison) if summary.comparison is not None else "",
        notes_section(summary),
        resample_section(summary),
        '<div class="work">',
        grid_section(summary, classes),
        '<aside id="details" aria-live="polite" tabindex="-1"><h2>Repetition</h2>'
        '<p class="dim">Select a cell of the grid to see its route, calls and answer here.</p></aside>',
        "</div>",
        trajectories_section(summary),
        diagnoses_section(summary, classes),
        "</main>",
    ]
    data, escaped = embedded_json(page_data(summary, classes))
    if escaped or any(needs_escape(part) for part in body):
        body.insert(4, f'<p class="dim">{e(ESCAPE_NOTE)}</p>')
    return visible(
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'\">"
        f"<title>{e(title)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(part for part in body if part)
        + f'\n<script type="application/json" id="pc-data">{data}</script>'
        + f"\n<script>{SCRIPT}</script>\n</body></html>\n"
    )


def resample_section(summary: SessionSummary) -> str:
    if summary.resample is None:
        return ""
    from pytest_consistency.report.resample import html_section

    return html_section(summary.resample)


class HtmlFormat:
    """The whole session as one self-contained HTML page."""

    name = "html"
    suffix = ".html"

    def render(self, summary: SessionSummary) -> str:
        return render(summary)


FORMAT = HtmlFormat()


CSS = """
.tree{list-style:none;margin:4px 0;padding-left:0}.tree ul{list-style:none;padding-left:18px;margin:0;
border-left:1px dotted var(--line)}.tree li{margin:2px 0}.tree details.node{border:0;padding:0;margin:0}
.tree .leaf,.tree summary{overflow-wrap:anywhere}.tree .where{color:var(--dim);font-size:12px}
.share{display:inline-block;width:48px;height:8px;background:var(--f);border-radius:3px;vertical-align:middle;
overflow:hidden}.share>span{display:block;height:100%;background:var(--good)}
:root{--fg:#1b1f24;--dim:#5b636d;--bg:#fff;--panel:#f5f6f8;--line:#d6d9de;--good:#146c2e;--bad:#b3261e;
--warn:#8a5a00;--p:#d8f0dc;--f:#f9d6d3;--e:#f4c38a;--s:#e4e6e9;--n:#fff;--sel:#0b57d0;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);
background:var(--bg)}
body{margin:0;padding:16px 20px}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:18px 0 8px}h3{font-size:14px;margin:12px 0 6px}
h4{font-size:13px;margin:0 0 6px}
code,pre,.c,.num{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;font-size:12px;background:var(--panel);padding:4px 6px;
border-radius:4px;max-height:16em;overflow:auto}
.dim{color:var(--dim)}.good{color:var(--good)}.bad{color:var(--bad)}.warn{color:var(--warn)}
.verdict{display:inline-block;padding:6px 12px;border-radius:6px;border:2px solid currentColor;margin-bottom:10px}
.verdict .big{font-size:18px;font-weight:700;text-transform:uppercase}.verdict .why{margin:2px 0 0;font-size:13px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:6px 0}
.card{border:1px solid var(--line);border-radius:6px;padding:8px 12px;min-width:150px;background:var(--panel)}
.card .label{color:var(--dim);font-size:12px}.card .value{font-size:20px;font-weight:650}
.card .interval{font-family:ui-monospace,monospace;font-size:12px}.card .hint{color:var(--dim);font-size:11px}
.top{display:flex;flex-wrap:wrap;gap:8px 32px}.top>section{flex:1 1 420px;min-width:0}
table.plain{border-collapse:collapse;font-size:13px}
table.plain th,table.plain td{border-bottom:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0;font-size:13px}
dl.facts dt{color:var(--dim)}dl.facts dd{margin:0;overflow-wrap:anywhere}
ul.events{margin:4px 0;padding-left:18px;font-size:13px}
.work{display:flex;gap:16px;align-items:flex-start}
.gridwrap{flex:1 1 auto;min-width:0;overflow-x:auto}
.legend{font-size:12px;color:var(--dim);margin:0 0 6px}
#grid{border-collapse:collapse;font-size:13px}
#grid th,#grid td{border:1px solid var(--line);padding:2px 6px;text-align:left;white-space:nowrap}
#grid thead th{position:sticky;top:0;background:var(--panel);z-index:1}
#grid th.tid{white-space:normal;min-width:12em;max-width:24em;font-weight:500}
#grid td.v{white-space:normal;min-width:7em}
#grid .tf{display:block;font-size:11px;color:var(--dim);font-weight:400;overflow-wrap:anywhere}
#grid .num{text-align:right}
#grid th button{font:inherit;font-weight:600;border:0;background:none;padding:0;cursor:pointer;color:var(--sel);
text-decoration:underline dotted}
#grid th[aria-sort=ascending] button::after{content:" ▲"}#grid th[aria-sort=descending] button::after{content:" ▼"}
#grid th.rh{text-align:center;min-width:2.2em}
#grid td.c{text-align:center;cursor:pointer;font-weight:700;border-bottom-width:4px;min-width:2.2em}
#grid td.c:focus{outline:3px solid var(--sel);outline-offset:-3px}
#grid td.c.sel{outline:3px solid var(--sel);outline-offset:-3px}
.c.p,.tag.p{background:var(--p)}.c.f,.tag.f{background:var(--f)}.c.xf,.tag.xf{background:var(--s)}
.c.e,.tag.e{background:var(--e)}.c.s,.tag.s{background:var(--s);color:var(--dim)}
.c.n,.tag.n{background:var(--n);color:var(--dim)}
.h0{border-bottom-color:#0072b2!important}.h1{border-bottom-color:#e69f00!important}
.h2{border-bottom-color:#009e73!important}.h3{border-bottom-color:#cc79a7!important}
.h4{border-bottom-color:#56b4e9!important}.h5{border-bottom-color:#d55e00!important}
.h6{border-bottom-color:#f0e442!important}.h7{border-bottom-color:#000!important}
.tag{padding:0 5px;border-radius:3px;font-weight:600}
#details{flex:0 0 360px;position:sticky;top:8px;max-height:calc(100vh - 16px);overflow:auto;
border:1px solid var(--line);border-radius:6px;padding:8px 12px;background:var(--bg);font-size:13px}
#details h2{margin-top:4px}#details table{font-size:12px;width:100%}
#details table th,#details table td{padding:2px 4px}#details table td:nth-child(2){overflow-wrap:anywhere}
#details .ne{color:var(--bad);font-weight:600}
details{border:1px solid var(--line);border-radius:6px;padding:6px 10px;margin:8px 0;
content-visibility:auto;contain-intrinsic-size:auto 48px}
summary{cursor:pointer}
.pair{display:flex;gap:12px;flex-wrap:wrap}.side{flex:1 1 380px;min-width:0}
tr.diff{background:#fff4c2}mark{background:#ffd54f;color:inherit;font-weight:700;padding:0 2px}
table.answers pre{max-height:8em}
a{color:var(--sel)}
@media (max-width:1100px){.work{display:block}#details{position:static;max-height:none;margin-top:12px}}
#details .close{display:none;float:right;font:inherit;font-size:18px;border:0;background:none;cursor:pointer}
@media (max-width:640px){body{margin:8px}.opt,#grid .vw{display:none}
#grid th.tid{min-width:0;max-width:34vw;position:sticky;left:0;background:var(--bg);z-index:2;font-size:12px}
#grid td.v{min-width:0}#grid .tf{display:none}#grid th,#grid td{padding:2px 3px}#grid td.c,#grid th.rh{min-width:1.9em}
table.plain{width:100%}table.plain td,table.plain th{overflow-wrap:anywhere;padding:3px 4px}
.pair .side{flex-basis:100%}.card{min-width:0;flex:1 1 40%}
#details{position:fixed;top:auto;left:0;right:0;bottom:0;max-height:55vh;margin:0;border-radius:10px 10px 0 0;z-index:5;
box-shadow:0 -4px 16px rgba(0,0,0,.25)}body:not(.open) #details{display:none}#details .close{display:block}}
@media print{#details{display:none}details{break-inside:avoid}}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("pc-data").textContent);
  var S = D.s, grid = document.getElementById("grid"), panel = document.getElementById("details");
  var body = grid.tBodies[0], lead = +grid.getAttribute("data-lead"), selected = null;
  // Call fields, in the order html.py writes them.
  var METHOD = 0, URL = 1, BASE = 2, KEY = 3, ASKED = 4, SERVED = 5, STATUS = 6, ERROR = 7, DETAIL = 8,
      RETRY = 9, LATENCY = 10, PROMPT = 11, COMPLETION = 12, TOTAL = 13, FLAGS = 14;
  function str(i) { return i === null || i === undefined ? null : S[i]; }
  function pretty(text, json) {
    if (!json || text === null) return text;
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }  // cut: as it is
  }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function distinct(calls, field) {
    var seen = [];
    calls.forEach(function (c) { var v = str(c[field]); if (v !== null && seen.indexOf(v) < 0) seen.push(v); });
    return seen;
  }
  function fact(dl, label, value, pinned) {
    dl.appendChild(el("dt", null, label));
    var dd = el("dd", null, value === null || value === "" ? "-" : value);
    if (pinned) dd.appendChild(el("span", "ne", " ≠ pinned " + pinned));
    dl.appendChild(dd);
  }
  function routeValue(values, pin) {
    var text = values.length ? values.join(", ") : null;
    var off = pin && values.some(function (v) { return v !== pin; }) ? pin : null;
    return [text, off];
  }
  function show(ti, ri, cell) {
    var task = D.t[ti], rep = task.r[ri], calls = rep.k || [], pin = D.p || {};
    var outcome = D.o[rep.o] || ["?", rep.o];
    if (selected) selected.classList.remove("sel");
    selected = cell; if (cell) cell.classList.add("sel");
    panel.textContent = "";
    var close = el("button", "close", "×");
    close.type = "button"; close.setAttribute("aria-label", "close");
    close.addEventListener("click", function () { document.body.classList.remove("open"); if (cell) cell.focus(); });
    panel.appendChild(close);
    document.body.classList.add("open");
    panel.appendChild(el("h2", null, "Repetition " + rep.r + " of " + task.n));
    panel.appendChild(el("p", "tid", str(task.id)));
    var dl = el("dl", "facts");
    fact(dl, "outcome", outcome[0] + " " + outcome[1]);
    if (rep.f !== undefined) fact(dl, "why it failed", str(rep.f));
    if (rep.e !== undefined) fact(dl, "setup error (not the agent)", str(rep.e));
    fact(dl, "answer class", rep.c ? (rep.c === "∅" ? "∅ no answer recorded" : rep.c) : null);
    var base = routeValue(distinct(calls, BASE), pin.base);
    var asked = routeValue(distinct(calls, ASKED), pin.model);
    var key = routeValue(distinct(calls, KEY), pin.key);
    fact(dl, "base URL", base[0], base[1]);
    fact(dl, "model asked", asked[0], asked[1]);
    fact(dl, "model served", distinct(calls, SERVED).join(", "));
    fact(dl, "key fingerprint", key[0], key[1]);
    var retries = 0, maxRetry = 0, p = 0, c = 0, t = 0, latency = 0, timed = false;
    calls.forEach(function (x) {
      if (x[RETRY] > 0) retries++;
      maxRetry = Math.max(maxRetry, x[RETRY]);
      p += x[PROMPT]; c += x[COMPLETION]; t += x[TOTAL];
      if (x[LATENCY] !== null) { latency += x[LATENCY]; timed = true; }
    });
    fact(dl, "calls", calls.length + (rep.w ? " (+" + rep.w + " unobserved)" : ""));
    var allowed = pin.retries !== undefined && maxRetry > pin.retries ? "max " + pin.retries : null;
    fact(dl, "retries", String(retries), allowed);
    fact(dl, "tokens", t + " (" + p + " prompt + " + c + " completion)");
    fact(dl, "latency", timed ? latency.toFixed(1) + " ms" : null);
    fact(dl, "duration", rep.d + " s");
    if (rep.x !== undefined) fact(dl, "cassette", str(rep.x));
    if (rep.u) fact(dl, "reruns", String(rep.u));
    panel.appendChild(dl);
    panel.appendChild(el("h3", null, "Answer"));
    panel.appendChild(el("pre", null, rep.a !== undefined ? pretty(str(rep.a), rep.j) : "(no answer recorded)"));
    if (rep.z !== undefined) {
      panel.appendChild(el("h3", null, "Normalised"));
      panel.appendChild(el("pre", null, pretty(str(rep.z), rep.y)));
    }
    if (rep.m && rep.m.length) {
      panel.appendChild(el("h3", null, "Notes"));
      var ul = el("ul", "events");
      rep.m.forEach(function (m) { ul.appendChild(el("li", null, str(m))); });
      panel.appendChild(ul);
    }
    panel.appendChild(el("h3", null, "Calls (" + calls.length + ")"));
    if (!calls.length) { panel.appendChild(el("p", "dim", "no calls recorded")); return; }
    var table = el("table", "plain calls"), head = el("tr");
    ["#", "call", "status", "model", "tokens", "ms"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(el("thead")).appendChild(head);
    var tb = el("tbody");
    calls.forEach(function (x, i) {
      var tr = el("tr"), url = str(x[URL]) || "", b = str(x[BASE]) || "";
      var path = b && url.indexOf(b) === 0 ? url.slice(b.length) || "/" : url;
      tr.appendChild(el("td", null, i + 1 + (x[RETRY] ? " (retry " + x[RETRY] + ")" : "")));
      var td = el("td", null, (str(x[METHOD]) || "") + " " + path); td.title = url; tr.appendChild(td);
      var status = x[STATUS] === null ? "-" : String(x[STATUS]);
      if (x[ERROR] !== null) status += " " + str(x[ERROR]);
      td = el("td", x[ERROR] !== null || x[STATUS] >= 400 ? "bad" : null, status);
      if (x[DETAIL] !== null) td.title = str(x[DETAIL]);
      tr.appendChild(td);
      var model = str(x[ASKED]) || "-", served = str(x[SERVED]);
      if (served && served !== str(x[ASKED])) model += " → " + served;
      tr.appendChild(el("td", null, model));
      tr.appendChild(el("td", null, x[PROMPT] + "+" + x[COMPLETION] + "=" + x[TOTAL] + (x[FLAGS] & 4 ? " est." : "")));
      tr.appendChild(el("td", null, x[LATENCY] === null ? "-" : String(x[LATENCY])));
      tb.appendChild(tr);
      if (x[DETAIL] !== null) {
        var note = el("tr"), cell = el("td", "dim", str(x[DETAIL])); cell.colSpan = 6;
        note.appendChild(cell); tb.appendChild(note);
      }
    });
    table.appendChild(tb);
    panel.appendChild(table);
  }
  function cellOf(target) {
    while (target && target !== grid) {
      if (target.nodeName === "TD" && target.classList.contains("c")) return target;
      target = target.parentNode;
    }
    return null;
  }
  function open(cell) {
    var tr = cell.parentNode;
    show(+tr.getAttribute("data-i"), cell.cellIndex - lead, cell);
  }
  function focusCell(from, to, scroll) {
    if (!to || !to.classList.contains("c")) return;
    from.tabIndex = -1; to.tabIndex = 0; to.focus({ preventScroll: scroll === false });
  }
  grid.addEventListener("click", function (ev) {
    var cell = cellOf(ev.target);
    if (!cell) return;
    focusCell(grid.querySelector("td.c[tabindex='0']") || cell, cell, false);
    open(cell);
  });
  grid.addEventListener("keydown", function (ev) {
    var cell = cellOf(ev.target);
    if (!cell) return;
    var tr = cell.parentNode, i = cell.cellIndex, next = null;
    if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); open(cell); return; }
    if (ev.key === "ArrowRight") next = tr.cells[i + 1];
    else if (ev.key === "ArrowLeft") next = tr.cells[i - 1];
    else if (ev.key === "ArrowDown") next = tr.nextElementSibling && tr.nextElementSibling.cells[i];
    else if (ev.key === "ArrowUp") next = tr.previousElementSibling && tr.previousElementSibling.cells[i];
    else return;
    ev.preventDefault();
    focusCell(cell, next);
  });
  var KEYS = {
    order: function (tr) { return +tr.getAttribute("data-i"); },
    gap: function (tr) { var g = tr.getAttribute("data-gap"); return g === "" ? null : +g; },
    verdict: function (tr) { return +tr.getAttribute("data-vr"); },
    attribution: function (tr) { return +tr.getAttribute("data-ar"); }
  };
  var FIRST = { order: 1, gap: -1, verdict: 1, attribution: 1 }, current = "order", direction = 1;
  Array.prototype.forEach.call(grid.querySelectorAll("th button[data-sort]"), function (button) {
    button.addEventListener("click", function () {
      var name = button.getAttribute("data-sort"), key = KEYS[name];
      direction = name === current ? -direction : FIRST[name];
      current = name;
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var ka = key(a), kb = key(b);
        if (ka !== kb) {
          if (ka === null) return 1;  // no figure: last, whichever the direction
          if (kb === null) return -1;
          return ka < kb ? -direction : direction;
        }
        return KEYS.order(a) - KEYS.order(b);
      });
      var fragment = document.createDocumentFragment();
      rows.forEach(function (tr) { fragment.appendChild(tr); });
      body.appendChild(fragment);
      Array.prototype.forEach.call(grid.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
      button.parentNode.setAttribute("aria-sort", direction > 0 ? "ascending" : "descending");
    });
  });
})();
"""
