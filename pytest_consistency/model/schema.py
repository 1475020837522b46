"""The JSON report's schema: its version, the earlier versions this one reads and how each is brought up to date
(one version at a time), and where the report puts what the model keeps elsewhere.

Why apart from :mod:`.result`: the model is the typed summary; this is how its JSON is laid out and how an older
layout is read, which changes with each schema version while the model's classes do not. One layout differs from
the model: a rejudge session's per-task judge figures, which the model keeps with the session's
(:class:`~.judge.JudgeSummary` ``.tasks``, as :mod:`..analysis.judge` builds them) and the report keeps on each task
(``tasks[].judge``), so that every per-task figure of the report is on its task.
"""

from __future__ import annotations

from typing import Any

from pytest_consistency.model.serial import ReportFormatError

#: The report's schema; bumped whenever a field changes meaning or moves (the README documents each version).
SCHEMA = "pytest-consistency/report/5"
#: Earlier schemas this version reads (as baselines and for ``merge``/``show``), and how each is brought up to date
#: (:func:`upgraded`): report/3 called an undecided gate ``inconclusive`` and had no per-task ``min_rate``; report/4
#: kept each task's judge figures in ``summary.judge.tasks[]``, where report/5 keeps them on the task
#: (``tasks[].judge``).
READABLE = ("pytest-consistency/report/3", "pytest-consistency/report/4")


def judge_onto_tasks(judge: dict[str, Any], tasks: list[dict[str, Any]]) -> None:
    """Move each task's judge figures (``judge["tasks"]``, :class:`~.judge.TaskJudge` as data) onto its task's
    entry, as ``judge`` without the ``task_id`` the task already says; a task without figures gets ``null``."""
    figures = {entry.pop("task_id"): entry for entry in judge.pop("tasks")}
    for task in tasks:
        task["judge"] = figures.pop(task["task_id"], None)
    if figures:  # the judge's tasks are the summary's (both are built from one session's repetitions)
        raise ValueError(f"judge figures of {', '.join(sorted(figures))}, which is no task of the summary")


def judge_from_tasks(summary: dict[str, Any], tasks: Any, where: str) -> tuple[dict[str, Any], Any]:
    """The reverse of :func:`judge_onto_tasks`: ``tasks[].judge`` gathered into ``summary.judge.tasks`` (in the
    tasks' order, which is the judge's: both follow the repetitions' order), the model's one place for them."""
    if not isinstance(tasks, list):
        return summary, tasks  # from_data names what is wrong
    gathered: list[Any] = []
    bare = []
    for i, task in enumerate(tasks):
        if not isinstance(task, dict) or "judge" not in task:
            bare.append(task)
            continue
        task = dict(task)
        entry = task.pop("judge")
        if entry is not None:
            if not isinstance(entry, dict):
                raise ReportFormatError(f"{where}.tasks[{i}].judge: expected a mapping, got {entry!r:.80}")
            gathered.append({"task_id": task.get("task_id"), **entry})
        bare.append(task)
    judge = summary.get("judge")
    if isinstance(judge, dict):
        if "tasks" in judge:
            raise ReportFormatError(
                f"{where}.judge: unknown field(s) tasks (since report/5 each task's judge figures are its "
                "tasks[].judge)"
            )
        summary = {**summary, "judge": {**judge, "tasks": gathered}}
    elif gathered:
        raise ReportFormatError(f"{where}: tasks[].judge without summary.judge (the session's judge figures)")
    return summary, bare


def schema_problem(schema: Any) -> str:
    """Why a JSON object with this ``schema`` cannot be read, and what to do: another file (not a report at all), a
    newer plugin (a report from a later version), or a new run (a report too old to upgrade)."""
    family, _, version = str(schema).rpartition("/")
    if not isinstance(schema, str) or family != SCHEMA.rpartition("/")[0] or not version.isdigit():
        return (
            f"not a pytest-consistency report ({'no schema' if schema is None else f'schema {schema!r}'}, a report's "
            f"is {SCHEMA!r}); give the file "
            "--consistency-report (or merge -o) wrote"
        )
    if int(version) > int(SCHEMA.rpartition("/")[2]):
        return f"written by a newer pytest-consistency ({schema}, this version reads {SCHEMA}); upgrade to read it"
    return (
        f"schema {schema!r}, this version reads {SCHEMA!r}; re-run the session with this version to write a current "
        "report"
    )


def upgraded(data: dict[str, Any], where: str = "report") -> dict[str, Any]:
    """A report of an earlier schema (:data:`READABLE`) as this version writes it, one version at a time."""
    if data.get("schema") == "pytest-consistency/report/3":
        data = _from_3(data)
    if data.get("schema") == "pytest-consistency/report/4":
        data = _from_4(data, where)
    return data


def _from_4(data: dict[str, Any], where: str) -> dict[str, Any]:
    """report/4 as report/5: each task's judge figures move from ``summary.judge.tasks[]`` to ``tasks[].judge``
    (nothing else changed)."""
    summary, tasks = data.get("summary"), data.get("tasks")
    judge = summary.get("judge") if isinstance(summary, dict) else None
    if (
        isinstance(summary, dict)
        and isinstance(judge, dict)
        and isinstance(judge.get("tasks"), list)
        and isinstance(tasks, list)
    ):
        entries = judge["tasks"]
        if not all(isinstance(entry, dict) for entry in entries) or not all(isinstance(t, dict) for t in tasks):
            raise ReportFormatError(f"{where}: summary.judge.tasks and tasks must be lists of mappings")
        moved = [dict(t) for t in tasks]
        at = {t.get("task_id"): t for t in moved}
        for i, entry in enumerate(entries):
            task = at.get(entry.get("task_id"))
            if task is None:
                raise ReportFormatError(
                    f"{where}: summary.judge.tasks[{i}] ({entry.get('task_id')!r:.80}) is no task of the report"
                )
            task["judge"] = {key: value for key, value in entry.items() if key != "task_id"}
        for task in moved:
            task.setdefault("judge", None)
        summary = {**summary, "judge": {key: value for key, value in judge.items() if key != "tasks"}}
        data = {**data, "summary": summary, "tasks": moved}
    return {**data, "schema": "pytest-consistency/report/5"}


def _from_3(data: dict[str, Any]) -> dict[str, Any]:
    """report/3 as report/4: report/3 called an undecided gate ``inconclusive`` and kept ``more_repetitions``
    (repetitions to ADD), which is not carried over."""
    summary = dict(data.get("summary") or {})
    gates = []
    for gate in summary.get("gates") or ():
        if isinstance(gate, dict):
            # the advice said how many repetitions to ADD, and the interval was two-sided: neither is carried over
            gate = {key: value for key, value in gate.items() if key not in ("more_repetitions", "advice")}
            if gate.get("interval") is not None:
                gate["interval"] = None
            if gate.get("state") == "inconclusive":
                gate["state"] = "undecided"
        gates.append(gate)
    if "gates" in summary:
        summary["gates"] = gates
    analysis = summary.get("analysis")
    if isinstance(analysis, dict) and analysis.get("suite_regression") is False:
        # report/3 had no way to switch the suite-level test off: false was its default, now "on with a baseline"
        summary["analysis"] = {**analysis, "suite_regression": None}
    return {**data, "schema": "pytest-consistency/report/4", "summary": summary}
