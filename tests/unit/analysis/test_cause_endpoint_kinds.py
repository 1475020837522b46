"""A call to another kind of endpoint is another request, never another route (issue 41).

An agent that embeds its query in one repetition only (a cache it filled in an earlier one, a branch on a value that
varies) sent other requests than the others did: the step's requests differ, and the cause is what the step rule says
of differing requests (``input``; a repetition that stopped is ``environment``), never ``route`` with "pin the route".
A route is compared per endpoint kind: the route cause is kept for the same kind of call going to another key, base
URL, model, deployment or fallback, or retried.
"""

from __future__ import annotations

from cause_records import call, chat, embedding, question, repetition, text, tool, two_steps

from pytest_consistency.analysis.cause.attribute import task_finding
from pytest_consistency.model.cause import Finding
from pytest_consistency.model.records import RepetitionResult

TASK = "test_agent.py::test_agent[t]"


def finding(reps: list[RepetitionResult]) -> Finding:
    found = task_finding(TASK, reps, {})
    assert found is not None
    return found


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
