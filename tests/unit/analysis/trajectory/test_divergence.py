"""Alignment, the prefix tree and the per-task figures, with known figures and hostile shapes."""

from __future__ import annotations

import pytest

from pytest_consistency.analysis.trajectory.divergence import divergence_map
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.trajectory import Decision, ToolCall


def tool(name: str, **arguments: object) -> Decision:
    import json

    return Decision.of("", (ToolCall(name, json.dumps(arguments, sort_keys=True, separators=(",", ":"))),))


def text(value: str) -> Decision:
    return Decision.of(value)


def call(decision: Decision | None, error: str | None = None) -> CallRecord:
    return CallRecord("POST", "http://h/v1/chat/completions", "http://h/v1", None, "m", decision=decision, error=error)


def rep(repeat: int, outcome: str, *decisions: Decision | None, n: int = 10) -> RepetitionResult:
    return RepetitionResult(
        "t", f"t[rep{repeat}]", repeat, n, n, 1.0, outcome=outcome, calls=[call(d) for d in decisions]
    )


def hostile() -> list[RepetitionResult]:
    """Five pass through search_invoices, five fail through list_emails; failed attempts, empties and parallel
    calls mixed in, one repetition not scored."""
    search = Decision.of("", (ToolCall("search_invoices", '{"q":"march"}'),), "tool_calls")
    emails = Decision.of("", (ToolCall("list_emails", "{}", "call_9"), ToolCall("search_invoices", "{}")), "tool_calls")
    answer = text("The total is 42.")
    reps = [rep(i, "passed", search, None, answer) for i in range(1, 6)]
    reps[0].calls.insert(1, call(None, error="429"))  # a retried attempt is not a step
    reps += [rep(i, "failed", emails, Decision(), answer) for i in range(6, 11)]
    reps.append(rep(11, "not run", emails, n=11))
    return reps


def test_divergence_map_of_a_task_that_parts_at_step_one() -> None:
    mapped = divergence_map(hostile(), inconsistent=True)
    assert mapped is not None
    assert (mapped.repetitions, mapped.steps, mapped.divergent_step) == (10, 3, 1)
    assert mapped.distinct == [2, 2, 1]
    # tool names: 5 x [search_invoices], 5 x [list_emails, search_invoices]: 25 of 45 pairs at distance 1/2
    assert mapped.tool_distance == pytest.approx(25 * 0.5 / 45, abs=1e-6)
    assert mapped.parts == [
        "repetitions part at step 1 (tool `search_invoices` vs tools `list_emails`, `search_invoices`)",
        "the branch through `search_invoices` passes 5/5, the other 0/5",
    ]
    assert mapped.line == "; ".join(mapped.parts)
    assert [(n.label, n.count, n.passed) for n in mapped.tree if n.step == 2] == [
        ("text: The total is 42.", 5, 5),
        ("(empty)", 5, 0),
    ]


def test_same_tool_other_arguments_names_the_arguments() -> None:
    reps = [rep(1, "passed", tool("search", q="march")), rep(2, "failed", tool("search", q="april"))]
    mapped = divergence_map(reps, inconsistent=True)
    assert mapped is not None
    assert mapped.parts[0] == 'repetitions part at step 1 (tool `search({"q":"march"})` vs `search({"q":"april"})`)'


def test_a_task_whose_repetitions_decide_alike() -> None:
    reps = [rep(i, "passed" if i < 3 else "failed", tool("f"), text("done")) for i in range(1, 5)]
    mapped = divergence_map(reps, inconsistent=True)
    assert mapped is not None and mapped.divergent_step is None and mapped.tool_distance == 0.0
    assert mapped.parts == [
        "all 4 repetitions took the same 2 step(s): the difference is not in the model's decisions (the cause line "
        "says where it is)"
    ]
    assert divergence_map(reps, inconsistent=False).parts == []


def test_stopping_is_a_branch() -> None:
    reps = [rep(1, "passed", tool("f"), text("done")), rep(2, "failed", tool("f"))]
    mapped = divergence_map(reps, inconsistent=True)
    assert mapped is not None and mapped.divergent_step == 2
    assert mapped.parts == [
        "repetitions part at step 2 (text: done vs stopping)",
        "the branch through text: done passes 1/1, the other 0/1",
    ]


def test_no_calls_no_map() -> None:
    assert divergence_map([rep(1, "passed"), rep(2, "failed")], inconsistent=True) is None


def test_many_branches_are_listed_with_their_shares() -> None:
    reps = [rep(i, "passed" if i % 2 else "failed", tool(f"t{i}")) for i in range(1, 7)]
    mapped = divergence_map(reps, inconsistent=True)
    assert mapped is not None
    assert mapped.parts[0] == "repetitions part at step 1 (tool `t1` vs `t2` vs `t3` vs 3 more)"
    assert mapped.parts[1] == "passes per branch: `t1` 1/1, `t2` 0/1, `t3` 1/1, `t4` 0/1, ..."


def test_a_later_clause_goes_after_where_they_part() -> None:
    from pytest_consistency.analysis.trajectory.divergence import add_clause

    reps = [rep(1, "passed", tool("a")), rep(2, "failed", tool("b"))]
    mapped = divergence_map(reps, inconsistent=True)
    assert mapped is not None
    add_clause(mapped, "resampling step 1 alone gives 2 distinct decisions in 10 samples")
    assert mapped.line == (
        "repetitions part at step 1 (tool `a` vs `b`); resampling step 1 alone gives 2 distinct decisions in 10 "
        "samples; the branch through `a` passes 1/1, the other 0/1"
    )
