"""What the model wrote and the agent merely sends back is the model's decision, never the agent's input (issue 41).

The model calls the same tool in every repetition, introducing it with a sentence it words otherwise each time. The
agent sends the model's turn back as it came (the sentence with the call), so the history of step 2 differs: read as
what the agent sent, that was ``input at step 2``. It is what the model generated at step 1: ``sampling at step 1``,
for the chat completions, Responses and Messages APIs. What the agent changed in the model's turn before sending it
back stays the agent's (``input``); words the agent never sent back name nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from cause_records import call, chatty, first_request, repetition, resent, text, worded

from pytest_consistency.analysis.cause.attribute import task_finding
from pytest_consistency.model.cause import Finding
from pytest_consistency.model.records import RepetitionResult

TASK = "test_agent.py::test_agent[t]"
APIS = ["chat", "responses", "anthropic"]
WORDS = ["Let me look that up.", "I will search the invoices for that.", "Searching now."]


def finding(reps: list[RepetitionResult]) -> Finding:
    found = task_finding(TASK, reps, {})
    assert found is not None
    return found


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
