"""Two tasks whose outcome an LLM judge decides, inconsistent for opposite reasons (docs/judges.md).

Recorded from SmolLM2-135M on the llama server (scripts/record_examples.sh -k judge), the agent and the judge the
same model:

- ``test_judge_flips``: the agent answers at temperature 0 (the same answer every repetition); the judge reads the
  city out of it at temperature 1 without a seed; the answer passes when the judge reads Paris. Whatever gap the
  task has is the judge's: the cause is ``judge``, and re-judging (``--consistency-rejudge=M``) finds the judge
  flipping on the same answer.
- ``test_agent_varies``: the agent recommends a city at temperature 1 without a seed; the judge reads the city at
  temperature 0 (the same verdict for the same answer); the answer passes when the judge reads Paris. The gap is
  the agent's: the cause is ``sampling``, and re-judging finds a judge that does not flip.
"""

from __future__ import annotations

import pytest

#: The judge's task: the agent at temperature 0 answers this the same way every time.
QUESTION = "What is the capital of France? Answer with one word."
#: The agent's task: at temperature 1 the agent recommends Paris about a third of the time.
RECOMMEND = "Which French city should I visit? One city only."


def ask(client, model, messages, temperature):
    reply = client.chat.completions.create(model=model, messages=messages, temperature=temperature, max_tokens=8)
    return (reply.choices[0].message.content or "").strip()


def grade(judge_client, answer, temperature):
    """The judge reads the city out of the agent's answer; the answer passes when the judge reads Paris.

    A 135M model is a poor judge (it reads "Le Jardin de Paris" out of "The capital of France is Paris."): what the
    example shows is whether it is a consistent one."""
    city = ask(
        judge_client,
        None,  # the judge route's model
        [
            {"role": "system", "content": "Extract the city named in the user's text. Reply with the city name only."},
            {"role": "user", "content": answer},
        ],
        temperature,
    )
    return "paris" in city.lower(), city


@pytest.mark.repeat_consistency(n=10, min_pass=0.0)
def test_judge_flips(pinned_client, pinned_route, judge_client, consistency):
    answer = ask(pinned_client, pinned_route.model, [{"role": "user", "content": QUESTION}], temperature=0.0)
    consistency.record(answer)
    passed, city = grade(judge_client, answer, temperature=1.0)
    assert passed, f"the judge read {city!r} out of {answer!r}"


@pytest.mark.repeat_consistency(n=10, min_pass=0.0)
def test_agent_varies(pinned_client, pinned_route, judge_client, consistency):
    answer = ask(pinned_client, pinned_route.model, [{"role": "user", "content": RECOMMEND}], temperature=1.0)
    consistency.record(answer)
    passed, city = grade(judge_client, answer, temperature=0.0)
    assert passed, f"the judge read {city!r} out of {answer!r}"
