"""Why the inconsistent tasks were inconsistent: each one's cause (:func:`finding_html`: the step, what the calls
show, the advice, and the two differing requests or tool results side by side), its answer classes and a passing
and a failing repetition side by side, their calls up to the first that differs (:func:`first_difference`); and
where each task's repetitions part, as a collapsed trajectory tree."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_consistency.analysis.trajectory.tree import Segment, segments
from pytest_consistency.analysis.verdict import inconsistent
from pytest_consistency.model.cause import Evidence, Finding
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import SessionSummary, TaskResult
from pytest_consistency.report.html.data import (
    ANSWER_PREVIEW,
    CLASSES_SHOWN,
    OPEN_DIAGNOSES,
    OUTCOMES,
    TREE_LABELS,
    UNKNOWN_OUTCOME,
    Classes,
    answer_text,
    cut,
    e,
    url_path,
)

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


def marked(text: str, other: str) -> str:
    """``text`` escaped, with what differs from ``other`` (between their common start and common end) marked."""
    start = 0
    limit = min(len(text), len(other))
    while start < limit and text[start] == other[start]:
        start += 1
    end = 0
    while end < limit - start and text[len(text) - 1 - end] == other[len(other) - 1 - end]:
        end += 1
    middle = text[start : len(text) - end]
    if not middle:
        return e(text)
    return f"{e(text[:start])}<mark>{e(middle)}</mark>{e(text[len(text) - end :])}"


def evidence_html(mine: Evidence, theirs: Evidence, where: str) -> str:
    """One side of the differing span: the repetition, its text with the difference marked."""
    beyond = (
        '<p class="dim">The kept texts are equal: the difference lies past the text a call record keeps.</p>'
        if mine.beyond
        else ""
    )
    return (
        f'<div class="side"><h4>repetition {mine.repeat}: {e(where)}</h4>'
        f"<pre>{marked(mine.text, theirs.text) if not mine.beyond else e(mine.text)}</pre>{beyond}</div>"
    )


def finding_html(index: int, why: Finding) -> str:
    """The cause of one task: the word and the step, what the calls show, the advice, and the two sides."""
    step = "after the last step" if why.step is None else f"step {why.step}"
    facts = [("cause", f"{why.cause}, {step}"), ("where", why.where), ("what the calls show", why.detail)]
    if why.kinds:
        facts.append(("route kinds", ", ".join(why.kinds)))
    if why.sampling:
        facts.append(("sampling sent", ", ".join(f"{name}={value}" for name, value in why.sampling)))
    if why.unpinned:
        facts.append(("not pinned", ", ".join(why.unpinned)))
    if why.outranked:
        facts.append(("also at this step", why.outranked))
    if why.others:
        facts.append(("found later", ", ".join(why.others)))
    if why.confirmed is not None:
        facts.append(("resampling", "agrees" if why.confirmed else "does not agree"))
    facts.append(("advice", why.advice))
    body = "".join(f"<dt>{e(label)}</dt><dd>{e(value)}</dd>" for label, value in facts)
    parts = [f'<div class="cause" id="cause-{index}"><dl class="facts">{body}</dl>']
    if len(why.sides) >= 2:
        a, b = why.sides[0], why.sides[1]
        parts.append(f'<div class="pair sides">{evidence_html(a, b, why.where)}{evidence_html(b, a, why.where)}</div>')
    parts.append("</div>")
    return "".join(parts)


def diagnosis(index: int, task: TaskResult, named: Classes, opened: bool) -> str:
    cause = "" if task.why is None else f", cause: {task.why.cause}"
    parts = [
        f'<details id="why-{index}"{" open" if opened else ""}><summary><b>{e(task.task_id)}</b> '
        f'<span class="dim">{task.passes}/{task.scored} passed, {len(named.members) or "no"} answer class(es)'
        f"{', ' + e(task.attribution) if task.attribution else ''}{e(cause)}</span></summary>"
    ]
    if task.why is not None:
        parts.append(finding_html(index, task.why))
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
        f"repetitions passed. Each shows its cause (the first thing that differed between its repetitions, with the "
        f"two differing texts side by side), its distinct answers, then one passing and one failing repetition side "
        f"by side.</p>{body}</section>"
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
