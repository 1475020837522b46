"""The dollars of a merge are the dollars of the unsharded run, to the last bit (Hypothesis): every call's price and
every added cost summed exactly, whatever the shards and the order the reports come in; a model with no price stays
unpriced through the JSON round trip and the merge."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suites import records

from pytest_consistency.analysis.merge import gated_merge
from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.prices import Price, price_calls
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import CostBudget, RunFacts, SessionSummary

EXAMPLES = settings(
    max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
TABLE = {
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "claude-x": Price(3.0, 15.0, 0.30, 3.75),
    "odd": Price(0.1, 0.3, 0.07),
}
MODELS = ("gpt-4o-mini", "gpt-4o-mini-2024-07-18", "claude-x", "odd", "no-price")
AMOUNTS = st.sampled_from([0.0, 0.0, 0.1, 0.2, 0.3, 1e-7, 0.01, 1 / 3])


@st.composite
def suites(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 4))
    tasks = draw(st.integers(1, 6))
    patterns = {f"t{i}": "".join(draw(st.sampled_from("PPF")) for _ in range(n)) for i in range(tasks)}
    calls = {
        (task, repeat): [
            (
                draw(st.sampled_from(MODELS)),
                draw(st.integers(0, 5000)),
                draw(st.integers(0, 900)),
                draw(st.integers(0, 64)),
            )
            for _ in range(draw(st.integers(0, 3)))
        ]
        for task in patterns
        for repeat in range(1, n + 1)
    }
    added = {key: draw(AMOUNTS) for key in calls}
    return {
        "patterns": patterns,
        "calls": calls,
        "added": added,
        "shards": draw(st.integers(1, 4)),
        "deal": draw(st.randoms()),
    }


def suite_records(suite: dict[str, Any]) -> list[RepetitionResult]:
    reps = records(suite["patterns"])
    for rep in reps:
        for model, prompt, completion, cached in suite["calls"][(rep.task_id, rep.repeat)]:
            rep.calls.append(
                CallRecord(
                    "POST",
                    "http://h/v1/chat/completions",
                    "http://h/v1",
                    None,
                    model,
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    total_tokens=prompt + completion,
                    cached_prompt_tokens=min(cached, prompt),
                )
            )
        rep.added_cost_usd = suite["added"][(rep.task_id, rep.repeat)]
    price_calls([call for rep in reps for call in rep.calls], TABLE)  # as the session end does
    return reps


def session(reps: list[RepetitionResult], shard: str | None = None, budget: float | None = None) -> SessionSummary:
    spent = sum(c.cost_usd or 0 for r in reps for c in r.calls) + sum(r.added_cost_usd for r in reps)
    run = RunFacts(shard=shard, cost_budget=None if budget is None else CostBudget(budget, spent))
    summary = build_summary([replace(r, calls=[replace(c) for c in r.calls]) for r in reps], run=run)
    conclude(summary, {})
    summary.exit_status = 0 if summary.passed else 1
    return SessionSummary.from_dict(json.loads(json.dumps(summary.to_dict())))


def dollars(summary: SessionSummary) -> Any:
    return (
        summary.cost,
        [(t.task_id, t.cost_usd, t.unpriced_calls) for t in summary.tasks],
        [(r.nodeid, r.cost_usd, r.unpriced_calls) for t in summary.tasks for r in t.repetitions],
    )


@EXAMPLES
@given(suites())
def test_the_merge_of_every_shard_costs_what_the_unsharded_run_costs(suite: dict[str, Any]) -> None:
    reps = suite_records(suite)
    count = suite["shards"]
    where = {task: suite["deal"].randrange(count) for task in suite["patterns"]}
    reports = [
        (f"s{i + 1}.json", session([r for r in reps if where[r.task_id] == i], f"{i + 1}/{count}"))
        for i in range(count)
    ]
    suite["deal"].shuffle(reports)
    whole = session(reps)
    merged = gated_merge(reports, {})
    assert dollars(merged) == dollars(whole)
    if whole.cost is not None:
        unpriced = sum(
            1 for r in reps for c in r.calls if c.cost_usd is None and (c.prompt_tokens or c.completion_tokens)
        )
        assert whole.cost.unpriced_calls == unpriced
        assert whole.cost.unpriced_models == (["no-price"] if unpriced else [])


def test_a_merge_sums_the_shards_cost_budgets_and_keeps_the_shard_that_was_over_its_own() -> None:
    reps = suite_records(
        {
            "patterns": {"a": "P", "b": "P"},
            "calls": {("a", 1): [("gpt-4o-mini", 1000, 500, 0)], ("b", 1): [("gpt-4o-mini", 1000, 500, 0)]},
            "added": {("a", 1): 0.5, ("b", 1): 0.0},
        }
    )
    one = session([r for r in reps if r.task_id == "a"], "1/2", budget=0.25)
    two = session([r for r in reps if r.task_id == "b"], "2/2", budget=0.25)
    merged = gated_merge([("s1.json", one), ("s2.json", two)], {})
    assert merged.run.cost_budget == CostBudget(0.5, 0.50045 + 0.00045, ("s1.json",))
    assert not merged.passed
    assert any("cost budget exceeded in s1.json" in w for w in merged.warnings)
