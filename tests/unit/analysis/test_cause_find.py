"""The cause of an inconsistent task, from its repetitions' call records (analysis.cause.find via task_finding).

Each test builds the records of real request bodies (tests/support/cause_records.py runs them through capture's
canonicalisation) for repetitions that part for one known reason, and checks the word, the step and what is shown.
The shortcut tests run a tempting simplification on the same records and show it names the wrong cause.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

import pytest
from cause_records import call, chat, chat_after_tool, repetition, text, three_steps, tool, two_steps
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
        repetition("t", 2, two_steps(result="7"), True),
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


# The cause that explains the failures (issue 40): the first event at which the repetitions that part are split as
# their outcomes are (every group of repetitions that agree there ended alike), not merely the first difference.


def pppff(outcomes: str = "PPPFF") -> list[RepetitionResult]:
    """Five repetitions: repetition 2 saw another tool result at step 2 (``(cached)``), repetitions 4 and 5 decided
    otherwise at step 3 (another tool call instead of the answer), on the same tool results as 1 and 3."""
    reps = []
    for r in range(1, 6):
        final = tool("search", '{"month": "april"}', call_id="call_3") if r >= 4 else None
        result = "42 invoices (cached)" if r == 2 else "42 invoices"
        reps.append(repetition("t", r, three_steps(result, final), outcomes[r - 1] == "P"))
    return reps


def test_the_cause_is_the_first_difference_that_separates_passes_from_failures() -> None:
    found = finding(pppff())
    # the first difference (repetition 2's tool result, at step 2) is shared by a passing repetition only: all
    # of the gap goes to the step-3 decision the two failures took, and the tool result is kept as "also"
    assert (found.cause, found.step, found.repeats) == ("sampling", 3, (1, 4))
    assert found.others == ("environment at step 2",)
    assert found.line.endswith("(also: environment at step 2)")


def test_a_harmless_difference_that_happens_to_split_the_outcomes_is_named() -> None:
    # the same calls, but repetition 2 fails alone and 4, 5 pass: its tool result is the first separating event
    found = finding(pppff("PFPPP"))
    assert (found.cause, found.step) == ("environment", 2)
    assert found.others == ("sampling at step 3",)


def test_a_task_whose_outcomes_agree_is_separated_by_its_answer_classes() -> None:
    reps = pppff("PPPPP")
    found = finding(reps, {1: 0, 2: 0, 3: 0, 4: 1, 5: 1})
    assert (found.cause, found.step) == ("sampling", 3)
    assert found.others == ("environment at step 2",)


def test_when_only_the_outcome_separates_the_cause_is_outside_the_model() -> None:
    reps = [
        repetition("t", r, three_steps("42 invoices (cached)" if r == 2 else "42 invoices"), r <= 3)
        for r in range(1, 6)
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("outside the model", None)
    assert found.others == ("environment at step 2",)
    assert (
        "repetitions 1, 3, 4, 5 sent the same 3 request(s) and got the same decisions, yet 2/4 passed" in found.detail
    )


def test_a_route_outranks_the_decision_at_its_step_only_when_it_separates_too() -> None:
    reps = [repetition("t", r, two_steps(), r <= 3) for r in range(1, 6)]
    reps[1].calls[0].model_served = "gpt-test-mini"  # repetition 2 passes on another model
    for rep in reps[3:]:
        rep.calls[0].decision = tool("list_emails")
    found = finding(reps)
    assert (found.cause, found.step, found.outranked) == ("sampling", 1, None)
    assert found.others == ("route at step 1",)
    # the same decisions, and the other model served the two failures: the route separates and comes first
    for rep in reps:
        rep.calls[0].model_served = "gpt-test-mini" if rep.repeat >= 4 else "gpt-test"
    found = finding(reps)
    assert (found.cause, found.step, found.outranked) == ("route", 1, "decision")


def one_behaviour(seed: int, harmless: str, n: int = 20) -> tuple[list[RepetitionResult], list[bool]]:
    """``n`` repetitions of one behaviour: in about a third of them a harmless variation that changes no outcome
    (``input``: a flag in the system prompt; ``environment``: a note in the tool result), and a sampled decision at
    step 2 (about 40 %) that fails the repetition. Returns the repetitions and which of them varied."""
    rnd = random.Random(seed)
    reps, varied = [], []
    for r in range(1, n + 1):
        varies, fails = rnd.random() < 0.35, rnd.random() < 0.4
        system = "You are a bookkeeper." + (" Flags: beta-ui." if varies and harmless == "input" else "")
        result = "42 invoices" + (" (cached)" if varies and harmless == "environment" else "")
        calls = two_steps(system, result)
        if fails:
            calls[1].decision = text("total-41")
        reps.append(repetition("t", r, calls, not fails))
        varied.append(varies)
    return reps, varied


def splits_as_outcomes(varied: list[bool], sample: list[RepetitionResult]) -> bool:
    """The repetitions that varied all ended one way and the others all the other way."""
    return len(set(varied)) == 2 and len({(v, r.succeeded) for v, r in zip(varied, sample, strict=True)}) == 2


@pytest.mark.parametrize("harmless", ["input", "environment"])
def test_the_cause_named_does_not_move_with_n_on_the_same_behaviour(harmless: str) -> None:
    tested = 0
    for seed in range(60):
        reps, varied = one_behaviour(seed, harmless)
        samples = {n: reps[:n] for n in (5, 10, 20)}
        if any(len({r.succeeded for r in sample}) < 2 for sample in samples.values()):
            continue  # a sample without both outcomes has no gap to explain
        if any(splits_as_outcomes(varied[: len(sample)], sample) for sample in samples.values()):
            continue  # the variation split a sample exactly as its outcomes: the calls cannot tell it from a cause
        named = {n: (finding(sample).cause, finding(sample).step) for n, sample in samples.items()}
        assert set(named.values()) == {("sampling", 2)}, (seed, named)
        tested += 1
    assert tested >= 30
