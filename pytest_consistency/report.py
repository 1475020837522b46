"""The machine-readable JSON report (schema documented in the README, versioned by ``schema``)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .records import SessionSummary, TaskResult

SCHEMA = "pytest-consistency/report/2"


def task_dict(task: TaskResult) -> dict[str, Any]:
    return {
        "task_id": task.task_id,
        "n": task.n,
        "k": task.k,
        "min_pass": task.min_pass,
        "passes": task.passes,
        "scored": task.scored,
        "verdict": task.verdict,
        "outcomes": [r.outcome for r in task.repetitions],
        "answers": [r.answer if r.answer_recorded else None for r in task.repetitions],
        "answer_recorded": [r.answer_recorded for r in task.repetitions],
        "distinct_answers": task.distinct_answers,
        "answers_disagree": task.disagrees,
        "mean_at_k": task.mean_at_k,
        "pass_hat_k": task.pass_hat_k,
        "pass_at_k": task.pass_at_k,
        "consistency_gap_pp": task.gap_pp,
        "attribution": task.attribution,
        "route": task.route,
        "errors": task.errors,
        "repetitions": [
            {
                "repeat": r.repeat,
                "nodeid": r.nodeid,
                "outcome": r.outcome,
                "duration_s": round(r.duration, 6),
                "cassette": r.cassette,
                "reruns": r.reruns,
                "unobserved": r.unobserved,
                "calls": [call.to_dict() for call in r.calls],
                "notes": r.notes,
            }
            for r in task.repetitions
        ],
    }


def to_dict(summary: SessionSummary) -> dict[str, Any]:
    core = {
        "repeat": summary.repeat,
        "k": summary.k,
        "task_count": summary.task_count,
        "mean_at_k": summary.mean_at_k,
        "pass_hat_k": summary.pass_hat_k,
        "pass_at_k": summary.pass_at_k,
        "consistency_gap_pp": summary.consistency_gap_pp,
        "answer_disagreement_pp": summary.answer_disagreement_pp,
        "gates": [asdict(gate) for gate in summary.gates],
        "passed": summary.passed,
        "exit_status": summary.exit_status,
        "interrupted": summary.interrupted,
        "warnings": summary.warnings,
        "errors": summary.errors,
    }
    # Extra figures (route, tokens) follow; none may shadow a field above, which would change the verdict's story.
    extra = {key: value for key, value in summary.extra.items() if key != "terminal_lines" and key not in core}
    return {"schema": SCHEMA, "summary": {**core, **extra}, "tasks": [task_dict(task) for task in summary.tasks]}


def write_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write to a temporary file beside the target and rename it, so readers never see half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=False, allow_nan=False)  # strict JSON, or nothing
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
