"""The key a replay compares with: the one key its cassettes were recorded on, never an unpinned call's own key.

A replay has no key of its own, so ``summary.route_facts`` pins the route to the key the cassettes were recorded
on. Pinned calls recorded before cassettes kept that key (no ``route_key``) count with the key they were sent
with, so a suite recorded on two keys has no one key to judge every task against; but an unpinned call with
another key is the drift itself, and must neither pick the key nor stop one from being picked.
"""

from __future__ import annotations

from suites import records, route_settings

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.records import CallRecord
from pytest_consistency.model.result import RunFacts

BASE = "http://127.0.0.1:9/v1"


def call(key: str, route_key: str | None = None, pinned: bool = True) -> CallRecord:
    return CallRecord(
        "POST", BASE + "/chat/completions", BASE, key, "m", model_served="m", status=200,
        replayed=True, route_key=route_key, pinned=pinned,
    )  # fmt: skip


def drift_of(calls_per_task: dict[str, list[CallRecord]]) -> dict[str, list[str]]:
    reps = records({task: "P" for task in calls_per_task})
    for rep in reps:
        rep.calls = calls_per_task[rep.task_id]
    summary = build_summary(reps, run=RunFacts(route=route_settings(key_fingerprint=None), record_mode="none"))
    return {task.task_id: task.drift.kinds for task in summary.tasks}


def test_an_unpinned_call_with_another_key_is_drift_against_the_recorded_key() -> None:
    kinds = drift_of(
        {
            "a": [call("sha256:aaaa1111", route_key="sha256:aaaa1111")],
            "b": [call("sha256:bbbb2222", pinned=False)],  # the agent's own client, on another key
        }
    )
    assert kinds["a"] == [] and "key" in kinds["b"], kinds


def test_a_suite_recorded_on_two_keys_judges_each_task_alone() -> None:
    kinds = drift_of(
        {
            "old": [call("sha256:aaaa1111")],  # recorded before cassettes kept the route's key
            "new": [call("sha256:bbbb2222", route_key="sha256:bbbb2222")],
        }
    )
    assert kinds == {"old": [], "new": []}
