"""The machine-readable JSON report: written atomically, read back strictly (schema documented in the README).

The report is :meth:`~.result.SessionSummary.to_dict`, so it holds every figure and what recomputes it. Reading
one (``--consistency-baseline``, ``pytest-consistency merge/show/compare``) either gives the whole typed summary
or a :class:`ReportError` naming the file and what is wrong with it: never half a report.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import typing
from pathlib import Path
from typing import Any

from pytest_consistency.analysis.answers import MAX_ANSWER_DEPTH
from pytest_consistency.config.marker import MAX_REPETITIONS
from pytest_consistency.model.records import OUTCOMES
from pytest_consistency.model.result import SessionSummary, Target
from pytest_consistency.model.serial import REPORT_DEPTH, ReportFormatError, check_values
from pytest_consistency.report.json_layout import layout

#: Largest report read: a report of 1000 tasks x 1000 repetitions with calls is far below it.
MAX_REPORT_BYTES = 1 << 30


class ReportError(ValueError):
    """A report file cannot be read: missing, not JSON, another schema, or not the report model."""


def write_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write strict JSON (no NaN, or nothing) atomically, laid out by :func:`.json_layout.layout`."""
    write_text_atomic(path, layout(data) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write to a temporary file beside the target and rename it, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # what open() would give: readable as a CI artifact, not 0600
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_report(path: Path) -> SessionSummary:
    """The typed summary of a JSON report written by this version of the plugin."""
    try:
        if path.is_dir():
            raise ReportError(f"{path} is a directory; pass the path of a JSON report")
        if path.stat().st_size > MAX_REPORT_BYTES:
            raise ReportError(f"{path} is larger than {MAX_REPORT_BYTES} bytes; not a pytest-consistency report")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(f"{path} does not exist; pass the path of a JSON report (--consistency-report)") from None
    except OSError as exc:
        raise ReportError(f"cannot read {path} ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ReportError(f"{path} is not UTF-8 text; not a pytest-consistency report") from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise ReportError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); the report may be truncated, write it again"
        ) from None
    except ValueError as exc:  # NaN or Infinity: never written by the plugin, which writes strict JSON
        raise ReportError(f"{path}: {exc}; a pytest-consistency report is strict JSON") from None
    except RecursionError:
        raise ReportError(f"{path}: nested too deeply to be a pytest-consistency report") from None
    try:
        check_values(data, str(path), REPORT_DEPTH + MAX_ANSWER_DEPTH)
        summary = SessionSummary.from_dict(data, where=str(path))
    except ReportFormatError as exc:
        raise ReportError(str(exc)) from None
    problems = check(summary)
    if problems:
        raise ReportError(f"{path}: " + "; ".join(problems[:5]) + ("; ..." if len(problems) > 5 else ""))
    return summary


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def check(summary: SessionSummary) -> list[str]:
    """What makes a well-formed report impossible to compute from: counts out of range, settings out of bounds.

    Types are checked by the model; this checks the arithmetic the statistics rely on, so a hand-edited or damaged
    report is refused by name instead of failing deep inside a computation.
    """
    problems = []
    analysis = summary.analysis
    if not 0.5 <= analysis.confidence < 1:
        problems.append(f"analysis.confidence {analysis.confidence} is not within [0.5, 1)")
    targets = typing.get_args(Target)
    if summary.intervals is not None and summary.intervals.target not in targets:
        problems.append(f"summary.intervals.target {summary.intervals.target!r} is not one of {', '.join(targets)}")
    if summary.run.shard is not None and summary.run.shard_position is None:
        problems.append(f"summary.run.shard {summary.run.shard!r:.40} is not I/N with 1 <= I <= N")
    if summary.repeat is not None and (summary.repeat not in {t.n for t in summary.tasks} or summary.repeat < 1):
        problems.append(f"summary.repeat {summary.repeat} is not the n of the report's tasks")
    for i, task in enumerate(summary.tasks):
        where = f"tasks[{i}] ({task.task_id})"
        if task.n > MAX_REPETITIONS:
            problems.append(f"{where}: n={task.n} is above the maximum of {MAX_REPETITIONS} repetitions per task")
            continue
        if not (1 <= task.k <= task.n and 0 <= task.passes <= task.scored <= task.n and 0 <= task.min_pass <= 1):
            problems.append(
                f"{where}: needs 1 <= k <= n, 0 <= passes <= scored <= n and 0 <= min_pass <= 1 "
                f"(k={task.k}, n={task.n}, passes={task.passes}, scored={task.scored}, min_pass={task.min_pass})"
            )
        if task.min_rate is not None and not 0 < task.min_rate < 1:
            problems.append(f"{where}: min_rate={task.min_rate!r:.40} is not strictly between 0 and 1")
        for j, rep in enumerate(task.repetitions):
            at = f"{where}.repetitions[{j}]"
            mine = (rep.task_id, rep.n, rep.k, rep.min_pass, rep.min_rate)
            theirs = (task.task_id, task.n, task.k, task.min_pass, task.min_rate)
            if mine != theirs:
                problems.append(
                    f"{at}: task_id, n, k, min_pass, min_rate {mine!r:.200} differ from its task's {theirs!r:.200}"
                )
            elif not 1 <= rep.repeat <= task.n:
                problems.append(f"{at}: repeat {rep.repeat} is not within 1..n={task.n}")
            elif rep.outcome not in OUTCOMES:
                problems.append(f"{at}: outcome {rep.outcome!r:.80} is not one of {', '.join(OUTCOMES)}")
            elif not math.isfinite(rep.duration) or any(
                not math.isfinite(c.latency_ms) for c in rep.calls if c.latency_ms is not None
            ):
                problems.append(f"{where}: repetition {rep.repeat} has a duration or latency that is not finite")
            elif any(value is not None and not 0 <= value <= 1 for value in (rep.score, rep.score_min)):
                problems.append(
                    f"{at}: score {rep.score!r:.40} or score_min {rep.score_min!r:.40} is not within [0, 1]"
                )
    return problems


class JsonFormat:
    """The machine-readable report: :meth:`~..result.SessionSummary.to_dict` as strict JSON."""

    name = "json"
    suffix = ".json"

    def render(self, summary: SessionSummary) -> str:
        return layout(summary.to_dict()) + "\n"


FORMAT = JsonFormat()
