"""CI shards (``--consistency-shard=I/N``): a suite split by task over N jobs, its verdicts decided by the merge.

Why by task, not by item: a task's verdict, figures and answer disagreement need all n of its repetitions, and a
shard that holds them all writes a report whose every task is complete, so a reviewer can read one shard's artifact
on its own. Splitting a task's repetitions across shards would also work (``pytest-consistency merge`` pools them),
but no shard could then say anything about that task. Tasks are dealt round-robin in collection order, so the shards
stay within one task of each other in size; unmarked tests are dealt the same way, one unit each.

A shard is part of a run, not a run: its gates and verdicts are computed on its tasks alone, so they are shown but
do not decide its exit status. It exits 0 unless something broke (a collection error, a task in ``error``, an
interruption, an error of the plugin's outputs or hooks); the gates, baseline gates included, are decided once, by
``pytest-consistency merge`` of every shard's report. pytest-split's ``--splits``/``--group`` are read as the same
thing: the items it selects are a shard, and its shards defer in the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pytest_consistency.config.marker import PARAM, task_id_of


def unit_of(item: Any) -> str:
    """What is dealt to a shard: a repeated task as a whole, or an unmarked test."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and PARAM in callspec.params:
        return task_id_of(item.nodeid, int(callspec.params[PARAM]))
    return str(item.nodeid)


def select(items: list[Any], index: int, count: int) -> tuple[list[Any], list[Any]]:
    """(kept, deselected): the items of shard ``index`` of ``count``, every repetition of a task together."""
    position: dict[str, int] = {}
    kept: list[Any] = []
    dropped: list[Any] = []
    for item in items:
        unit = unit_of(item)
        slot = position.setdefault(unit, len(position))
        (kept if slot % count == index - 1 else dropped).append(item)
    return kept, dropped


def shard_of(ours: tuple[int, int] | None, option: Any) -> str | None:
    """``I/N`` of this run when it is a shard (``--consistency-shard``, or pytest-split's ``--splits``/``--group``),
    else None."""
    if ours is not None:
        return f"{ours[0]}/{ours[1]}"
    splits = getattr(option, "splits", None)
    group = getattr(option, "group", None)
    if isinstance(splits, int) and splits > 1 and isinstance(group, int):
        return f"{group}/{splits}"
    return None


#: CI variables that name a run, in order, each shared by all of that run's jobs: (variables joined by "-").
CI_RUN_VARIABLES = (
    ("GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT"),
    ("CI_PIPELINE_ID",),  # GitLab
    ("BUILDKITE_BUILD_ID",),
    ("CIRCLE_WORKFLOW_ID",),
    ("BUILD_TAG",),  # Jenkins
)


def run_id_of(given: str | None, environ: Mapping[str, str]) -> str:
    """The run a session belongs to: ``--consistency-run-id``, else the CI's run (the shards of one CI run share it),
    else a random id of this session alone."""
    if given:
        return given
    for names in CI_RUN_VARIABLES:
        if environ.get(names[0]):
            return "-".join(environ[name] for name in names if environ.get(name))
    return os.urandom(8).hex()
