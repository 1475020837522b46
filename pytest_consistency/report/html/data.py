"""The page's data: the symbols and limits it shows, the answer classes, and the repetitions embedded as JSON.

The grid is one light ``<td>`` per repetition; everything else about a repetition (answers, notes, calls) is embedded
once as JSON (:func:`page_data`), each distinct string stored once and referred to by index (:class:`Strings`), and
``page.js`` builds the details panel from it on demand. :func:`call_data` writes a call's fields in the order the
script reads them (its ``METHOD``, ``URL``... constants). :func:`embedded_json` keeps the block inert.

What a table and its chart both show is read here once, so that they cannot disagree: :func:`rate_marks` (each
task's pass rate and the interval the grid's "pass rate" column prints), :func:`cause_parts` (the points of the gap
the table of causes prints, rounded to add up to it) and :func:`rate_changes` (the counts the baseline comparison
prints, ``9/10 → 6/10``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from html import escape
from typing import Any

from pytest_consistency.analysis.answers import MISSING, canonical_json, distinct_classes
from pytest_consistency.analysis.cause.attribute import rounded_shares, shown_interval
from pytest_consistency.model.cause import CAUSES
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import Comparison, SessionSummary, TaskResult
from pytest_consistency.report.encodable import needs_escape, visible_in_json
from pytest_consistency.stats.interval import Interval

#: Outcome -> (symbol, CSS class, words). Symbols carry the state without colour.
OUTCOMES: dict[str, tuple[str, str, str]] = {
    "passed": ("✓", "p", "passed"),
    "xpassed": ("✓", "p", "xpassed (unexpectedly passed)"),
    "failed": ("✗", "f", "failed"),
    "xfailed": ("✗", "xf", "xfailed (expected failure)"),
    "error": ("!", "e", "error in setup or teardown"),
    "skipped": ("–", "s", "skipped"),
    "not run": ("○", "n", "not run"),
    "curtailed": ("·", "n", "not needed: skipped by adaptive or sequential mode (verdict already decided)"),
}
UNKNOWN_OUTCOME = ("?", "n", "unknown outcome")
#: Sort ranks: worst first.
VERDICT_RANK = {"error": 0, "fail": 0, "undecided": 1, "incomplete": 1, "xfail": 2, "pass": 3, "skipped": 4}
ATTRIBUTION_RANK = {"route drift": 0, "agent": 1}
#: Sort rank of a task's cause: the order a step is read (route first); a task without a cause last.
CAUSE_RANK: dict[str, int] = {cause: rank for rank, cause in enumerate(CAUSES)}
VERDICT_SYMBOL = {
    "pass": "✓",
    "fail": "✗",
    "undecided": "?",
    "error": "⚠",
    "xfail": "✗",
    "incomplete": "○",
    "skipped": "–",
}
#: A task that passed its bar with failed repetitions (min_pass below 1): not the green tick of a task that never
#: failed, whatever the bar tolerated (a 0/5 task at min_pass=0 passes).
TOLERATED_SYMBOL = "◐"
GATE_SYMBOL = {"pass": "✓", "fail": "✗", "undecided": "?"}
#: The symbol of the class of repetitions that recorded no answer.
NO_ANSWER = "∅"
#: Answers longer than this are cut in the side-by-side (the details panel shows up to :data:`ANSWER_LIMIT`).
ANSWER_PREVIEW = 400
#: Answer classes listed per inconsistent task (the largest first); the grid's letters show the others.
CLASSES_SHOWN = 6
ANSWER_LIMIT = 20_000
#: Columns of a grid row before the repetition cells (the script reads it from ``data-lead``).
LEAD_COLUMNS = 7
#: Inconsistent tasks whose diagnosis is open on load; beyond that they start closed, to keep the page short.
OPEN_DIAGNOSES = 12
#: Decisions shown on one line of a trajectory tree (a run of steps without a branch); the rest are counted.
TREE_LABELS = 4


def e(value: object) -> str:
    """Escape for text and for quoted attribute values."""
    return escape(str(value), quote=True)


#: Where a name may wrap: after the separators of a test id (``_ / : , =``), before a bracket.
BREAKS = re.compile(r"(?<=[_/:,=])(?=[^_/:,=])|(?=[\[(])")


def breakable(text: str) -> str:
    """``text`` escaped, with a ``<wbr>`` where it may wrap without breaking a word (``test_<wbr>cause_<wbr>route``):
    a test id has no space, and a narrow column either spills it or, with ``overflow-wrap: anywhere``, cuts it
    mid-word."""
    return "<wbr>".join(e(part) for part in BREAKS.split(text) if part)


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


# --- what the tables and the charts both show -------------------------------------------------------------------


@dataclass(frozen=True)
class RateMark:
    """One task's pass rate as the grid shows it: ``passes/scored``, the rate (Mean@k of the task, c / n) and its
    interval (the report's per-task exact interval, :attr:`.TaskResult.pass_rate_interval`)."""

    index: int
    task_id: str
    passes: int
    scored: int
    rate: float
    interval: Interval


def rate_marks(summary: SessionSummary) -> list[RateMark]:
    """The tasks that have a pass rate (scored at least once), lowest rate first, ties in the suite's order."""
    marks = [
        RateMark(index, task.task_id, task.passes, task.scored, task.mean_at_k, task.pass_rate_interval)
        for index, task in enumerate(summary.tasks)
        if task.mean_at_k is not None and task.pass_rate_interval is not None
    ]
    return sorted(marks, key=lambda mark: (mark.rate, mark.index))


@dataclass(frozen=True)
class CausePart:
    """One cause's part of the consistency gap as the table of causes prints it: its tasks, its points of the gap
    (rounded so that the parts add up to the gap as printed, :func:`.attribute.rounded_shares`), and their interval
    (widened to hold the rounded points, :func:`.attribute.shown_interval`)."""

    cause: str
    tasks: int
    task_ids: tuple[str, ...]
    points: float
    interval: Interval | None


def cause_parts(summary: SessionSummary) -> list[CausePart]:
    """The causes found in at least one task, in the report's order (a step's order: route first); empty when the
    session named none."""
    causes = summary.causes
    if not causes or not any(share.tasks for share in causes.values()):
        return []
    shown = rounded_shares(causes, gap=summary.consistency_gap_pp)
    return [
        CausePart(cause, share.tasks, tuple(share.task_ids), shown[cause], shown_interval(share, shown[cause]))
        for cause, share in causes.items()
        if share.tasks
    ]


#: A run's ``passes/scored`` as the comparison carries it (:attr:`.TaskChange.baseline`, ``current``).
COUNTS = re.compile(r"(\d+)/(\d+)")


def counts(text: str | None) -> tuple[int, int] | None:
    """``(passes, scored)`` of ``9/10``; None for a run the task was not scored in (or text of another shape)."""
    found = COUNTS.fullmatch(text or "")
    if found is None or int(found.group(2)) == 0:
        return None
    return int(found.group(1)), int(found.group(2))


@dataclass(frozen=True)
class RateChange:
    """One task of a baseline comparison: its counts before and after (None in a run it was not scored in), as
    the comparison table prints them, its status and whether it is a significant regression."""

    task_id: str
    status: str
    before: tuple[int, int] | None
    after: tuple[int, int] | None
    regression: bool

    @property
    def drop(self) -> float | None:
        """The fall of the pass rate (positive: worse), None unless both runs scored the task."""
        if self.before is None or self.after is None:
            return None
        return self.before[0] / self.before[1] - self.after[0] / self.after[1]


def rate_changes(comparison: Comparison) -> list[RateChange]:
    """Every task of the comparison with a count in either run: the largest drop first, then the tasks of one run
    only (new, removed), ties in the comparison's order."""
    changes = [
        RateChange(t.task_id, t.status, counts(t.baseline), counts(t.current), t.regression) for t in comparison.tasks
    ]
    kept = [(i, c) for i, c in enumerate(changes) if c.before is not None or c.after is not None]
    kept.sort(key=lambda item: (item[1].drop is None, -(item[1].drop or 0.0), item[0]))
    return [change for _, change in kept]
