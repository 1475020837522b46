"""analysis.cause.attribute: the suite's gap by cause, and the shown points adding up to the gap shown."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from cause_records import call, chat, repetition, text, tool, two_steps
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_consistency.analysis.cause.attribute import advice_lines, rounded_shares
from pytest_consistency.analysis.merge import gated_merge
from pytest_consistency.analysis.summary import build_summary, conclude, default_equivalence
from pytest_consistency.model.cause import CAUSES, CauseShare
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import RunFacts, SessionSummary


def suite() -> list:
    reps = []
    for r in range(1, 6):  # sampling: 3/5 passed
        calls = two_steps()
        if r > 3:
            calls[0].decision = tool("list_emails")
        reps.append(repetition("sampled", r, calls, r <= 3))
    for r in range(1, 6):  # input: 4/5 passed
        reps.append(repetition("clock", r, two_steps(f"Now: 09:{10 + r}"), r != 5))
    for r in range(1, 6):  # consistent
        reps.append(repetition("steady", r, two_steps(), True))
    for r in range(1, 6):  # answers only: every repetition passed
        reps.append(repetition("answers", r, two_steps(), True, answer=f"a{r % 2}"))
    return reps


def test_the_shares_add_up_to_the_gap_and_name_their_tasks() -> None:
    summary = build_summary(suite())
    causes = summary.causes
    assert causes is not None and list(causes) == list(CAUSES)
    assert sum(share.gap_pp for share in causes.values()) == pytest.approx(summary.consistency_gap_pp)
    assert (causes["sampling"].tasks, causes["input"].tasks, causes["outside the model"].tasks) == (1, 1, 1)
    assert causes["outside the model"].gap_pp == 0.0  # answers only: no gap, still a task of its cause
    gaps = {t.task_id: t.gap_pp for t in summary.tasks}
    assert causes["sampling"].gap_pp == pytest.approx(gaps["sampled"] / 4)
    assert {t.task_id: t.cause for t in summary.tasks} == {
        "sampled": "sampling",
        "clock": "input",
        "steady": None,
        "answers": "outside the model",
    }
    lines = advice_lines(summary.tasks, causes)
    assert [line.split(":")[0] for line in lines] == ["input", "sampling", "outside the model"]


def test_no_scored_task_has_nothing_to_attribute() -> None:
    assert build_summary([]).causes is None


@given(st.lists(st.floats(0, 100, allow_nan=False), min_size=1, max_size=5))
def test_rounded_shares_add_up_to_the_rounded_gap(values: list[float]) -> None:
    scale = 100 / sum(1 for _ in values)
    causes = {cause: CauseShare(1, value * scale / 100) for cause, value in zip(CAUSES, values, strict=False)}
    shown = rounded_shares(causes)
    # the points as printed add up to the gap as printed (f"{gap:.1f}"), even at a tie hidden by float noise
    assert f"{sum(shown.values()):.1f}" == f"{sum(c.gap_pp for c in causes.values()):.1f}"
    assert all(abs(shown[c] - causes[c].gap_pp) < 0.1 + 1e-9 for c in causes)


def test_a_tie_hidden_by_float_noise_rounds_as_the_gap_prints() -> None:
    # three shares of 0.25/3 (as 100/3 % of 0.25): 0.25 summed, 2.5000000000000004 summed after scaling by ten;
    # the gap prints 0.2, so the points must add up to 0.2, not 0.3
    causes = {c: CauseShare(1, 0.25 * (100 / 3) / 100) for c in CAUSES[:3]}
    assert f"{sum(rounded_shares(causes).values()):.1f}" == f"{sum(c.gap_pp for c in causes.values()):.1f}"


def test_three_thirds_show_as_points_that_add_up() -> None:
    causes = {c: CauseShare(1, 10 / 3) for c in CAUSES[:3]}
    assert sorted(rounded_shares(causes).values()) == [3.3, 3.3, 3.4]


#: How one repetition of a generated task differs from the task's usual one (the first difference names the cause).
VARIANTS = ("same", "clock", "tool result", "decision", "served", "retried")


def varied(variant: str, call_id: str) -> list[CallRecord]:
    """Two chat steps, changed by ``variant``; ``call_id`` is the id the server generated for the tool call."""
    if variant == "clock":
        return two_steps("You are a bookkeeper. Now: 09:14", call_id=call_id)
    if variant == "tool result":
        return two_steps(result="41 invoices", call_id=call_id)
    calls = two_steps(call_id=call_id)
    if variant == "decision":
        calls[1].decision = text("total-41")
    if variant == "served":
        calls[0].model_served = "gpt-other"
    if variant == "retried":
        failed = call(chat("You are a bookkeeper."), None, status=429, error="rate limited")
        calls.insert(0, failed)
    return calls


@st.composite
def cause_suites(draw: Any) -> dict[str, Any]:
    tasks = draw(st.integers(1, 6))
    n = draw(st.integers(2, 4))
    variant = st.tuples(st.sampled_from(VARIANTS), st.booleans(), st.integers(0, 999).map(lambda i: f"call_{i}"))
    plan = {f"t{i}": [draw(variant) for _ in range(n)] for i in range(tasks)}
    return {"plan": plan, "shards": draw(st.integers(1, 3)), "deal": draw(st.randoms(use_true_random=False))}


def oracle(repeats: list[tuple[str, bool, str]]) -> str | None:
    """The cause a task of ``repeats`` must be given, from how its variants were built (the generated ids never
    count): the route of step 1 outranks its request; a request at step 2 comes before its decision."""
    if len({passed for _, passed, _ in repeats}) < 2:
        return None  # every repetition passed, or none: no answers recorded, so consistent
    kinds = {variant for variant, _, _ in repeats}
    if len(kinds) == 1:
        return "outside the model"
    for variants, cause in (({"served", "retried"}, "route"), ({"clock"}, "input"), ({"tool result"}, "environment")):
        if kinds & variants:
            return cause
    return "sampling"


def cause_records(suite: dict[str, Any]) -> list[RepetitionResult]:
    reps = []
    for task, repeats in suite["plan"].items():
        for r, (variant, passed, call_id) in enumerate(repeats, 1):
            rep = repetition(task, r, varied(variant, call_id), passed)
            rep.n = rep.k = len(repeats)
            reps.append(rep)
    return reps


def summarised(reps: list[RepetitionResult], shard: str | None = None) -> SessionSummary:
    """A session's summary as the plugin writes it, read back from its JSON."""
    summary = build_summary([replace(r) for r in reps], default_equivalence, RunFacts(shard=shard))
    conclude(summary, {})
    summary.exit_status = 0 if summary.passed else 1
    return SessionSummary.from_dict(json.loads(json.dumps(summary.to_dict())))


def attribution(summary: SessionSummary) -> tuple[Any, ...]:
    causes = {c: (s.tasks, round(s.gap_pp, 9), sorted(s.task_ids)) for c, s in (summary.causes or {}).items()}
    return tuple((t.task_id, t.cause, t.why.step if t.why else None) for t in summary.tasks), causes


PROPERTIES = settings(max_examples=60, derandomize=True, deadline=None, database=None)


@PROPERTIES
@given(cause_suites())
def test_the_merge_of_shards_attributes_as_the_unsharded_run_and_the_shares_add_up(suite: dict[str, Any]) -> None:
    reps = cause_records(suite)
    whole = summarised(reps)
    count = suite["shards"]
    where = {task: suite["deal"].randrange(count) for task in suite["plan"]}
    shards = [
        (f"s{i + 1}.json", summarised([r for r in reps if where[r.task_id] == i], f"{i + 1}/{count}"))
        for i in range(count)
    ]
    merged = gated_merge(shards, {})
    assert attribution(merged) == attribution(whole)
    assert {t.task_id: t.cause for t in whole.tasks} == {task: oracle(r) for task, r in suite["plan"].items()}
    # every task whose repetitions passed and failed has a cause, and the causes' shares add up to the gap
    for task in whole.tasks:
        if task.gap_pp:
            assert task.cause is not None, task.task_id
    total = sum(s.gap_pp for s in (whole.causes or {}).values())
    assert abs(total - (whole.consistency_gap_pp or 0.0)) < 1e-9
    shown = rounded_shares(whole.causes or {})
    assert f"{sum(shown.values()):.1f}" == f"{total:.1f}"


@PROPERTIES
@given(cause_suites(), st.randoms(use_true_random=False))
def test_the_cause_does_not_depend_on_the_order_repetitions_arrive_in(suite: dict[str, Any], rnd: Any) -> None:
    reps = cause_records(suite)
    shuffled = list(reps)
    rnd.shuffle(shuffled)
    assert attribution(summarised(shuffled)) == attribution(summarised(reps))
