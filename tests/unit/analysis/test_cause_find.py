"""The cause of an inconsistent task, from its repetitions' call records (analysis.cause.find via task_finding).

Each test builds the records of real request bodies (tests/support/cause_records.py runs them through capture's
canonicalisation) for repetitions that part for one known reason, and checks the word, the step and what is shown.
The shortcut tests run a tempting simplification on the same records and show it names the wrong cause.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from cause_records import call, chat, chat_after_tool, repetition, text, tool, two_steps
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_consistency.analysis.cause.attribute import task_finding
from pytest_consistency.model.cause import Finding
from pytest_consistency.model.records import RepetitionResult

TASK = "test_agent.py::test_agent[t]"


def finding(reps: list[RepetitionResult], classes: dict[int, int] | None = None) -> Finding:
    found = task_finding(TASK, reps, classes or {})
    assert found is not None
    return found


def test_the_same_request_decided_otherwise_is_sampling() -> None:
    reps = [repetition("t", 1, two_steps(), True), repetition("t", 2, two_steps(), True)]
    reps[1].calls[0].decision = tool("list_emails")
    found = finding(reps)
    assert (found.cause, found.step, found.repeats) == ("sampling", 1, (1, 2))
    assert "temperature (not sent" in found.unpinned[0] and "seed (not sent)" in found.unpinned
    assert f"--consistency-resample='{TASK}@1'" in found.advice


def test_pinned_sampling_says_it_was_pinned() -> None:
    reps = [
        repetition("t", 1, two_steps(temperature=0, seed=7), True),
        repetition("t", 2, two_steps(temperature=0, seed=7), False),
    ]
    reps[1].calls[1].decision = text("total-41")
    found = finding(reps)
    assert (found.cause, found.step, found.unpinned) == ("sampling", 2, ())
    assert dict(found.sampling) == {"temperature": "0", "seed": "7"}
    assert "sampling was pinned" in found.detail


def test_a_clock_in_the_system_prompt_is_input() -> None:
    reps = [
        repetition("t", 1, two_steps("You are a bookkeeper. Now: 2026-12-04 09:13"), True),
        repetition("t", 2, two_steps("You are a bookkeeper. Now: 2026-12-04 09:26"), True, "other"),
    ]
    found = finding(reps, {1: 0, 2: 1})
    assert (found.cause, found.step, found.where) == ("input", 1, "the system message")
    assert [side.text for side in found.sides] == [
        "You are a bookkeeper. Now: 2026-12-04 09:13",
        "You are a bookkeeper. Now: 2026-12-04 09:26",
    ]
    assert "freeze what varies" in found.advice


def test_a_tool_result_after_the_same_decision_is_environment() -> None:
    reps = [
        repetition("t", 1, two_steps(result="stock: 12"), True),
        repetition("t", 2, two_steps(result="stock: 7"), False),
    ]
    reps[1].calls[1].decision = text("total-7")
    found = finding(reps)
    assert (found.cause, found.step, found.where) == ("environment", 2, "the tool result of search")
    assert [side.text for side in found.sides] == ["stock: 12", "stock: 7"]


def test_a_sampling_parameter_changed_at_step_2_is_input() -> None:
    first = chat("You are a bookkeeper.")
    later = chat_after_tool(first, "call_1", "42")
    other = dict(later, temperature=1.0)
    reps = [
        repetition("t", 1, [call(first, tool("search")), call(later, text("a"))], True),
        repetition("t", 2, [call(first, tool("search")), call(other, text("b"))], False),
    ]
    found = finding(reps)
    assert (found.cause, found.step, found.where) == ("input", 2, "`temperature` (sent only by repetition 2)")


def test_another_model_served_is_route_and_outranks_the_decision() -> None:
    reps = [repetition("t", 1, two_steps(), True), repetition("t", 2, two_steps(), False)]
    reps[1].calls[0].model_served = "gpt-test-mini"
    reps[1].calls[0].decision = tool("list_emails")
    found = finding(reps)
    assert (found.cause, found.step, found.kinds, found.outranked) == ("route", 1, ("model_served",), "decision")
    assert "model served gpt-test (repetition 1) vs gpt-test-mini (repetition 2)" in found.detail
    assert "the decisions differ too at this step, the route comes first" in found.detail


def test_a_retried_429_is_route() -> None:
    first = chat("You are a bookkeeper.")
    retried = [call(first, None, status=429, error=None), *two_steps()]
    reps = [repetition("t", 1, two_steps(), True), repetition("t", 2, retried, False, "x")]
    found = finding(reps, {1: 0, 2: 1})
    assert (found.cause, found.step) == ("route", 1)
    assert set(found.kinds) == {"retries", "errors"}


def test_an_extra_embedding_call_is_not_a_route() -> None:
    embedding = call({"model": "embed", "input": "march"}, None)
    embedding.url, embedding.decision, embedding.sent, embedding.texts = (
        "http://127.0.0.1:9/v1/embeddings",
        None,
        None,
        {},
    )
    twice = [embedding, embedding, *two_steps()]
    reps = [repetition("t", 1, [embedding, *two_steps()], True), repetition("t", 2, twice, False)]
    assert finding(reps).cause == "outside the model"


def test_the_same_calls_with_other_outcomes_is_outside_the_model() -> None:
    reps = [repetition("t", r, two_steps(), r % 2 == 1) for r in (1, 2, 3)]
    found = finding(reps)
    assert (found.cause, found.step) == ("outside the model", None)
    assert "all 3 repetitions sent the same 2 request(s)" in found.detail and "2/3 passed" in found.detail


def test_a_repetition_that_stopped_after_the_same_decision_is_environment() -> None:
    reps = [repetition("t", 1, two_steps(), True), repetition("t", 2, two_steps()[:1], False)]
    found = finding(reps)
    assert (found.cause, found.step, found.repeats) == ("environment", 2, (1, 2))
    assert "repetition 2 stopped" in found.detail


def test_later_causes_in_repetitions_already_parted_are_listed() -> None:
    reps = [
        repetition("t", 1, two_steps(result="12"), True),
        repetition("t", 2, two_steps(result="7"), False),
        repetition("t", 3, two_steps(), False),
    ]
    reps[2].calls[0].decision = tool("list_emails")
    found = finding(reps)
    assert (found.cause, found.step) == ("sampling", 1)
    assert found.others == ("environment at step 2",)
    assert found.line.endswith("(also: environment at step 2)")


def test_a_consistent_task_has_no_cause() -> None:
    assert task_finding(TASK, [repetition("t", r, two_steps(), True) for r in (1, 2)], {}) is None


# The shortcuts: tempting simplifications, run on the same records, name the wrong cause.


def shortcut_asked_only(reps: list[RepetitionResult]) -> str:
    """Compare steps on the 240-character ``asked`` excerpt, then the decision."""
    for a, b in zip(reps[0].calls, reps[1].calls, strict=False):
        if a.asked != b.asked:
            return "input"
        if a.decision != b.decision:
            return "sampling"
    return "outside the model"


def shortcut_raw_body(reps: list[RepetitionResult], bodies: list[list[dict[str, Any]]]) -> str:
    """Compare the raw request bodies (keys sorted, ids as sent), then the decision."""
    for step, (a, b) in enumerate(zip(*bodies, strict=False)):
        if (
            hashlib.sha256(json.dumps(a, sort_keys=True).encode()).digest()
            != hashlib.sha256(json.dumps(b, sort_keys=True).encode()).digest()
        ):
            return "input" if step == 0 else "environment"
        left, right = reps[0].calls[step].decision, reps[1].calls[step].decision
        if left is not None and right is not None and left.key() != right.key():
            return "sampling"
    return "outside the model"


def shortcut_sampling_first(reps: list[RepetitionResult]) -> str:
    """Look at the decisions first: a differing decision is sampling, whatever was asked."""
    for a, b in zip(reps[0].calls, reps[1].calls, strict=False):
        if a.decision is not None and b.decision is not None and a.decision.key() != b.decision.key():
            return "sampling"
        if a.sent != b.sent:
            return "input"
    return "outside the model"


def test_a_clock_beyond_the_asked_excerpt_is_input_where_asked_only_says_sampling() -> None:
    rules = "Follow the bookkeeping rules carefully. " * 8  # 320 characters before the clock
    reps = [
        repetition("t", 1, two_steps(rules + "Now: 09:13"), True),
        repetition("t", 2, two_steps(rules + "Now: 09:26"), False),
    ]
    reps[1].calls[0].decision = tool("list_emails")
    assert reps[0].calls[0].asked == reps[1].calls[0].asked  # the excerpt is cut before the clock
    assert shortcut_asked_only(reps) == "sampling"
    found = finding(reps)
    assert (found.cause, found.step) == ("input", 1)
    assert found.sides[0].text.endswith("Now: 09:13") and found.sides[1].text.endswith("Now: 09:26")


def test_fresh_tool_call_ids_are_not_a_different_request_where_raw_bodies_say_environment() -> None:
    reps = [
        repetition("t", 1, two_steps(call_id="call_abc"), True),
        repetition("t", 2, two_steps(call_id="call_xyz"), False),
    ]
    reps[1].calls[1].decision = text("total-41")
    first = chat("You are a bookkeeper.")
    bodies = [[first, chat_after_tool(first, cid, "42 invoices")] for cid in ("call_abc", "call_xyz")]
    assert shortcut_raw_body(reps, bodies) == "environment"
    found = finding(reps)
    assert (found.cause, found.step) == ("sampling", 2)


def test_input_wins_over_sampling_where_sampling_first_says_sampling() -> None:
    reps = [repetition("t", 1, two_steps("Now: 09:13"), True), repetition("t", 2, two_steps("Now: 09:26"), False)]
    reps[1].calls[0].decision = tool("list_emails")
    assert shortcut_sampling_first(reps) == "sampling"
    assert finding(reps).cause == "input"


@settings(max_examples=40, deadline=None)
@given(order=st.permutations([0, 1, 2, 3]), seed=st.integers(0, 2**16))
def test_the_cause_does_not_depend_on_the_order_records_arrive_in(order: list[int], seed: int) -> None:
    import random

    shuffle = random.Random(seed)
    systems = ["Now: 09:13", "Now: 09:13", "Now: 09:26", "Now: 09:13"]
    reps = []
    for index in order:
        body = chat(systems[index])
        items = list(body.items())
        shuffle.shuffle(items)  # the same body, its keys in another order
        reps.append(
            repetition(
                "t",
                index + 1,
                [call(dict(items), tool("search")), call(chat_after_tool(body, f"c{seed}", "1"), text("a"))],
                index != 2,
            )
        )
    found = finding(reps)
    assert (found.cause, found.step, found.repeats) == ("input", 1, (1, 3))


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_every_api_gives_input_and_sampling(api: str) -> None:
    def body(system: str) -> dict[str, Any]:
        if api == "responses":
            return {"model": "m", "instructions": system, "input": [{"role": "user", "content": "hi"}]}
        if api == "anthropic":
            return {"model": "m", "system": system, "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
        return chat(system)

    same = [repetition("t", r, [call(body("s"), text("a" if r == 1 else "b"), api=api)], r == 1) for r in (1, 2)]
    found = finding(same)
    assert found.cause == "sampling"
    assert ("seed (not sent)" in found.unpinned) is (api != "anthropic")
    varied = [repetition("t", r, [call(body(f"s{r}"), text("a"), api=api)], r == 1) for r in (1, 2)]
    assert finding(varied).cause == "input"
