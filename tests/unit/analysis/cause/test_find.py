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
from cause_records import (
    call,
    chat,
    chat_after_tool,
    chatty,
    embedding,
    first_request,
    forecaster,
    question,
    repetition,
    resent,
    text,
    three_steps,
    timed,
    tool,
    two_steps,
    worded,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_consistency.analysis.cause.attribute import task_finding
from pytest_consistency.analysis.trajectory.divergence import divergence_map
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


# From test_cause_endpoint_kinds.py:
# A call to another kind of endpoint is another request, never another route (issue 41).
#
# An agent that embeds its query in one repetition only (a cache it filled in an earlier one, a branch on a value that
# varies) sent other requests than the others did: the step's requests differ, and the cause is what the step rule says
# of differing requests (``input``; a repetition that stopped is ``environment``), never ``route`` with "pin the route".
# A route is compared per endpoint kind: the route cause is kept for the same kind of call going to another key, base
# URL, model, deployment or fallback, or retried.


def test_an_embedding_in_one_repetition_only_is_input_not_route() -> None:
    # repetition 1 embedded its query before its first step (the cache was empty) and failed: the only thing that
    # tells it apart before its answer is a request the others did not send
    reps = [
        repetition("t", 1, [embedding(), *two_steps(answer="total-41")], False),
        repetition("t", 2, two_steps(), True),
        repetition("t", 3, two_steps(), True),
    ]
    found = finding(reps)
    assert (found.cause, found.step, found.kinds) == ("input", 1, ())
    assert found.where == "the endpoints called"
    assert "embeddings (repetition 1) vs none (repetition 2)" in found.detail
    assert "pin the route" not in found.advice and "embeddings" in found.advice
    assert found.others == ()


def test_an_embedding_at_a_later_step_in_one_repetition_only_is_input() -> None:
    # the same decisions at step 1, then repetition 2 embedded before asking again: the agent sent another request
    steps = two_steps()
    reps = [
        repetition("t", 1, two_steps(), True),
        repetition("t", 2, [steps[0], embedding(), steps[1]], False),
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("input", 2)
    assert "after the same decisions, the agent sent a different request at step 2" in found.detail


def test_an_embedding_after_the_last_step_in_one_repetition_only_is_input() -> None:
    reps = [repetition("t", 1, two_steps(), True), repetition("t", 2, [*two_steps(), embedding()], False)]
    found = finding(reps)
    assert (found.cause, found.step) == ("input", 3)
    assert "after its last model call" in found.detail


def test_a_repetition_that_stopped_after_an_embedding_is_environment() -> None:
    # repetition 2 embedded the tool's result and stopped; repetition 1 asked the model again: no route differs
    reps = [repetition("t", 1, two_steps(), True), repetition("t", 2, [two_steps()[0], embedding()], False)]
    found = finding(reps)
    assert (found.cause, found.step) == ("environment", 2)
    assert "repetition 2 stopped" in found.detail


def test_another_api_at_the_same_step_is_input() -> None:
    # repetition 2 asked the Responses API what repetition 1 asked Chat Completions, with another model name
    reps = [
        repetition("t", 1, [call(chat("You are a forecaster."), text("sunny"))], True),
        repetition("t", 2, [call(question("Paris", "responses"), text("sunny"), api="responses")], False),
    ]
    found = finding(reps)
    assert (found.cause, found.step, found.kinds) == ("input", 1, ())
    assert "chat (repetition 1) vs responses (repetition 2)" in found.detail


def test_the_same_kind_of_call_on_another_route_is_still_route() -> None:
    reps = [
        repetition("t", 1, [embedding("embed-large"), *two_steps()], True),
        repetition("t", 2, [embedding(), *two_steps()], False),
    ]
    found = finding(reps)
    assert (found.cause, found.step, found.kinds) == ("route", 1, ("model_requested", "model_served"))
    # the fact shown is the embedding's model, not the chat model beside it
    assert "model asked embed-large (repetition 1) vs embed (repetition 2)" in found.detail
    assert "pin the route" in found.advice


def test_routes_are_compared_per_endpoint_kind() -> None:
    # the two keys swapped between the chat and the embedding calls: the same keys overall, another route for each
    first = chat("You are a bookkeeper.")

    def calls(chat_key: str, embed_key: str) -> list:
        return [embedding(key=embed_key), call(first, tool("search"), key=chat_key)]

    reps = [
        repetition("t", 1, calls("sha256:aaaa", "sha256:bbbb"), True),
        repetition("t", 2, calls("sha256:bbbb", "sha256:aaaa"), False),
    ]
    found = finding(reps)
    assert (found.cause, found.step, found.kinds) == ("route", 1, ("key",))


def test_a_tool_result_embedded_in_one_repetition_only_stays_environment() -> None:
    # the tools answered otherwise, and only repetition 1's agent embedded what its tool gave back: the step's
    # requests differ in a new turn, as they would without the embedding
    steps = two_steps(result="12 invoices")
    reps = [
        repetition("t", 1, [steps[0], embedding(), steps[1]], True),
        repetition("t", 2, two_steps(result="7 invoices"), False),
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("environment", 2)
    assert found.where == "the tool result of search"


# From test_cause_model_words.py:
# What the model wrote and the agent merely sends back is the model's decision, never the agent's input (issue 41).
#
# The model calls the same tool in every repetition, introducing it with a sentence it words otherwise each time. The
# agent sends the model's turn back as it came (the sentence with the call), so the history of step 2 differs: read as
# what the agent sent, that was ``input at step 2``. It is what the model generated at step 1: ``sampling at step 1``,
# for the chat completions, Responses and Messages APIs. What the agent changed in the model's turn before sending it
# back stays the agent's (``input``); words the agent never sent back name nothing.


APIS = ["chat", "responses", "anthropic"]


WORDS = ["Let me look that up.", "I will search the invoices for that.", "Searching now."]


@pytest.mark.parametrize("api", APIS)
def test_the_models_words_sent_back_are_sampling_where_they_were_written(api: str) -> None:
    reps = [
        repetition("t", r, chatty(words, "total-42" if r != 2 else "total-41", api), r != 2)
        for r, words in enumerate(WORDS, start=1)
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("sampling", 1)
    assert "Let me look that up." in found.detail and "I will search the invoices" in found.detail
    assert [side.repeat for side in found.sides] == [1, 2]


def test_words_that_do_not_separate_the_outcomes_give_way_to_the_decision_that_does() -> None:
    # repetitions 2 and 3 worded it alike; 3 failed on its answer: the answer separates, the words are "also"
    words = [WORDS[0], WORDS[1], WORDS[1]]
    reps = [
        repetition("t", r, chatty(w, "total-41" if r == 3 else "total-42"), r != 3)
        for r, w in enumerate(words, start=1)
    ]
    found = finding(reps)
    assert (found.cause, found.step, found.others) == ("sampling", 2, ("sampling at step 1",))


def test_what_the_agent_changed_in_the_models_turn_is_input() -> None:
    # the agent stamps the model's sentence with its clock before sending it back: the model wrote the same words
    reps = [repetition("t", r, chatty(WORDS[0], sent_back=f"{WORDS[0]} (09:{10 + r})"), r != 2) for r in (1, 2, 3)]
    found = finding(reps)
    assert (found.cause, found.step) == ("input", 2)
    assert found.where == "the conversation the agent resent before this step's new turns"


def test_words_the_agent_never_sent_back_name_nothing() -> None:
    # the agent sends back the call without the sentence: the sentence reached no later request
    reps = [
        repetition("t", r, chatty(words, "total-41" if r == 2 else "total-42", sent_back=""), r != 2)
        for r, words in enumerate(WORDS, start=1)
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("sampling", 2)


def test_a_repetition_that_stopped_after_the_same_call_in_other_words_is_environment() -> None:
    reps = [repetition("t", 1, chatty(WORDS[0]), True), repetition("t", 2, chatty(WORDS[1])[:1], False)]
    found = finding(reps)
    assert (found.cause, found.step) == ("environment", 2)


def three_steps_worded(second: str, answer: str = "total-42") -> list[Any]:
    first = first_request()
    later = resent(first, WORDS[0])
    last = resent(later, second, "march total: 42", call_id="call_2")
    return [
        call(first, worded(WORDS[0])),
        call(later, worded(second, name="search", call_id="call_2")),
        call(last, text(answer)),
    ]


def test_words_are_named_at_the_step_that_wrote_them() -> None:
    # the same sentence at step 1; at step 2 the model worded its second call otherwise, and step 3 resent both
    reps = [
        repetition("t", 1, three_steps_worded("Now the sum."), True),
        repetition("t", 2, three_steps_worded("Summing up.", "total-41"), False),
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("sampling", 2)


def test_an_example_turn_the_agent_wrote_stays_its_own_beside_the_models_words() -> None:
    # the prompt shows the model an example answer (an assistant turn the agent wrote): the model's own words sent
    # back beside it are still the model's, and an example that differs is still the agent's
    def with_example(example: str, words: str, answer: str) -> list[Any]:
        first = first_request()
        first["messages"][1:1] = [
            {"role": "user", "content": "total for february?"},
            {"role": "assistant", "content": example},
        ]
        return [call(first, worded(words)), call(resent(first, words), text(answer))]

    reps = [
        repetition("t", r, with_example("total-40", words, "total-41" if r == 2 else "total-42"), r != 2)
        for r, words in enumerate(WORDS, start=1)
    ]
    assert (finding(reps).cause, finding(reps).step) == ("sampling", 1)
    reps = [
        repetition("t", r, with_example(f"total-4{r}", WORDS[0], "total-41" if r == 2 else "total-42"), r != 2)
        for r in (1, 2, 3)
    ]
    assert (finding(reps).cause, finding(reps).step) == ("input", 1)


# From test_cause_concurrent.py:
# Calls that overlap in time are one step whose requests form a set (issue 41): their order is never a cause.
#
# A forecaster agent asks about two or three cities at once (threads, ``asyncio.gather``), then summarises the answers
# in its own order. Which question leaves first differs from one repetition to the next; the plugin must read the
# questions sent together as one step, the same set in every repetition, and find the cause elsewhere: the summary's
# decision (``sampling at step 2``), in the cause and in the divergence map alike, for the chat completions, Responses
# and Messages APIs. The rule is stated as a property too: any start order and any completion order of the same
# overlapping calls gives the same cause.


WEATHER = {"Paris": "sunny", "Rome": "rain", "Oslo": "snow"}


def parted_at(reps: list[RepetitionResult]) -> int | None:
    mapped = divergence_map(reps, True)
    assert mapped is not None
    return mapped.divergent_step


@pytest.mark.parametrize("api", APIS)
def test_the_order_of_overlapping_calls_is_not_a_cause(api: str) -> None:
    # repetition 2 sent Rome first and its summary was decided otherwise: the order happens to split the outcomes as
    # the summary does, and read as a sequence it was named "input at step 1"
    orders = [["Paris", "Rome"], ["Rome", "Paris"], ["Paris", "Rome"]]
    reps = [
        repetition("t", r, forecaster(order, WEATHER, "ok" if r != 2 else "wrong", api, start=1000.0 + r), r != 2)
        for r, order in enumerate(orders, start=1)
    ]
    found = finding(reps)
    assert (found.cause, found.step, found.others) == ("sampling", 2, ())
    assert parted_at(reps) == 2
    assert divergence_map(reps, True).steps == 2  # type: ignore[union-attr]


def test_a_different_set_of_overlapping_requests_is_still_input() -> None:
    reps = [
        repetition("t", 1, forecaster(["Paris", "Rome"], WEATHER), True),
        repetition("t", 2, forecaster(["Oslo", "Paris"], WEATHER, "wrong"), False),
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("input", 1)
    assert [side.text for side in found.sides] == ["weather in Rome…", "weather in Oslo…"]


def test_which_question_got_which_answer_is_compared() -> None:
    # the same two answers, swapped between the questions: the model decided otherwise, even though the answers
    # taken as a set are the same
    swapped = {"Paris": "rain", "Rome": "sunny"}
    reps = [
        repetition("t", 1, forecaster(["Paris", "Rome"], WEATHER), True),
        repetition("t", 2, forecaster(["Paris", "Rome"], swapped), False),
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("sampling", 1)
    assert "sunny" in found.detail and "rain" in found.detail


def test_calls_that_do_not_overlap_keep_their_order() -> None:
    # each question sent after the previous answer came back: a sequence, and its order is what the agent asked
    apart = [0.0, 0.5]
    reps = [
        repetition("t", 1, forecaster(["Paris", "Rome"], WEATHER, offsets=apart), True),
        repetition("t", 2, forecaster(["Rome", "Paris"], WEATHER, "wrong", offsets=apart), False),
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("input", 1)
    assert parted_at(reps) == 1


def test_an_sdk_retry_inside_overlapping_calls_keeps_them_one_step() -> None:
    # Rome's first attempt was answered 429 and the SDK retried it after Paris's answer came back: one step, whose
    # route differs (retries, errors), not a step more
    plain = forecaster(["Paris", "Rome"], WEATHER)
    retried = forecaster(["Paris", "Rome"], WEATHER)
    failed = timed(call(question("Rome"), None, status=429, error="429"), 1000.0005, 5.0)
    retried[1].retry_index = 1
    timed(retried[1], 1000.25, 100.0)  # after Paris's answer (1000.2): it overlaps nothing but its first attempt
    retried[2].started_at = 1000.36
    retried.insert(1, failed)
    reps = [repetition("t", 1, plain, True), repetition("t", 2, retried, False)]
    found = finding(reps)
    assert (found.cause, found.step) == ("route", 1)
    assert set(found.kinds) == {"retries", "errors"}
    assert divergence_map(reps, True).steps == 2  # type: ignore[union-attr]


def test_records_without_timings_read_as_a_sequence() -> None:
    # a cassette recorded before calls kept their timings: nothing says they overlapped
    reps = [
        repetition("t", 1, forecaster(["Paris", "Rome"], WEATHER), True),
        repetition("t", 2, forecaster(["Rome", "Paris"], WEATHER, "wrong"), False),
    ]
    for rep in reps:
        for record in rep.calls:
            record.started_at = record.latency_ms = None
    assert (finding(reps).cause, finding(reps).step) == ("input", 1)


@st.composite
def interleavings(draw: Any) -> dict[str, Any]:
    api = draw(st.sampled_from(APIS))
    cities = draw(st.sampled_from([["Paris", "Rome"], ["Paris", "Rome", "Oslo"]]))
    n = draw(st.integers(2, 5))
    finals = draw(st.lists(st.sampled_from(["ok", "wrong"]), min_size=n, max_size=n))
    swapped = draw(st.lists(st.booleans(), min_size=n, max_size=n))  # the model swapped two answers at step 1
    timings = []
    for _ in range(n):
        # every start within 5 ms, every answer at least 20 ms long: they all overlap, in any start and end order
        offsets = draw(st.lists(st.floats(0, 0.005), min_size=len(cities), max_size=len(cities)))
        latencies = draw(st.lists(st.floats(20, 400), min_size=len(cities), max_size=len(cities)))
        timings.append((offsets, latencies))
    return {
        "api": api,
        "cities": cities,
        "finals": finals,
        "swapped": swapped,
        "timings": timings,
        "shuffle": draw(st.randoms(use_true_random=False)),
    }


def forecasts(swap: bool) -> dict[str, str]:
    return {**WEATHER, "Paris": WEATHER["Rome"], "Rome": WEATHER["Paris"]} if swap else dict(WEATHER)


def interleaved(plan: dict[str, Any], canonical: bool) -> list[RepetitionResult]:
    reps = []
    for r, (final, swap, (offsets, latencies)) in enumerate(
        zip(plan["finals"], plan["swapped"], plan["timings"], strict=True), start=1
    ):
        cities = list(plan["cities"])
        weather = {city: forecasts(swap)[city] for city in cities}
        if canonical:  # the cities in one order, sent 1 ms apart, answered in that order
            calls = forecaster(cities, weather, final, plan["api"], start=1000.0 * r)
        else:
            calls = forecaster(cities, weather, final, plan["api"], 1000.0 * r, latencies, offsets)
            head = calls[:-1]
            plan["shuffle"].shuffle(head)  # recorded in any order: a replay sends them as it goes
            calls = [*head, calls[-1]]
        reps.append(repetition("t", r, calls, final == "ok"))
    return reps


def named(reps: list[RepetitionResult]) -> tuple[Any, ...]:
    found = task_finding(TASK, reps, {})
    mapped = divergence_map(reps, True)
    shape = None if found is None else (found.cause, found.step, found.others)
    return shape, None if mapped is None else (mapped.divergent_step, mapped.steps, mapped.distinct)


@settings(max_examples=150, deadline=None)
@given(plan=interleavings())
def test_any_interleaving_of_overlapping_calls_gives_the_same_cause(plan: dict[str, Any]) -> None:
    assert named(interleaved(plan, canonical=False)) == named(interleaved(plan, canonical=True))


def test_the_property_sees_both_causes() -> None:
    # what the property ranges over includes sampling at step 1 (a swap) and at step 2 (the summary)
    plan = {
        "api": "chat",
        "cities": ["Paris", "Rome"],
        "finals": ["ok", "ok", "wrong"],
        "swapped": [False, True, False],
        "timings": [([0.004, 0.0], [300.0, 50.0])] * 3,
        "shuffle": random.Random(1),
    }
    found = task_finding(TASK, interleaved(plan, canonical=False), {})
    assert found is not None and (found.cause, found.step) == ("sampling", 2)
    plan["finals"] = ["ok", "wrong", "ok"]
    found = task_finding(TASK, interleaved(plan, canonical=False), {})
    assert found is not None and (found.cause, found.step) == ("sampling", 1)


def test_a_sequential_agent_is_read_as_before() -> None:
    # timed calls that never overlap: the same steps as untimed ones
    first = chat("You are a bookkeeper.")
    calls = [timed(call(first, tool("search")), 1000.0, 100.0), timed(call(first, text("total-42")), 1000.2, 100.0)]
    again = [timed(call(first, tool("search")), 2000.0, 100.0), timed(call(first, text("total-41")), 2000.2, 100.0)]
    found = finding([repetition("t", 1, calls, True), repetition("t", 2, again, False)])
    assert (found.cause, found.step) == ("sampling", 2)


def test_sampling_past_calls_sent_together_is_not_confirmed_by_a_resample_of_another_call() -> None:
    # a resample replays calls one by one: its step 2 is the second question, not the summary the cause names
    reps = [
        repetition("t", r, forecaster(["Paris", "Rome"], WEATHER, "ok" if r != 2 else "wrong"), r != 2)
        for r in (1, 2, 3)
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("sampling", 2)
    assert "--consistency-resample=" not in found.advice and "more repetitions" in found.advice
    plain = [
        repetition("t", r, [call(chat("You are a forecaster."), text("ok" if r != 2 else "no"))], r != 2)
        for r in (1, 2)
    ]
    assert f"--consistency-resample='{TASK}@1'" in finding(plain).advice
