"""One inconsistent task per cause (docs/causes.md): what made the repetitions part, found from their calls alone.

Recorded from the same SmolLM2-135M as the other examples (scripts/record_examples.sh -k cause), each made
inconsistent on purpose by one thing, and by nothing before it in the order the plugin reads a repetition (the
route of a step, then its request, then the model's decision; after the last step, the outcome):

- ``input``: a clock in the system prompt; the first requests differ before the model decides anything.
- ``environment``: the same first request and decision at temperature 0, then a tool whose result varies.
- ``sampling``: the same requests at temperature 1 without a seed; the model decides differently.
- ``route``: the same requests at temperature 0 through the LiteLLM gateway, which balances the alias asked for
  over two deployments (examples/litellm.yaml): another model answers some repetitions.
- ``outside the model``: the same requests and decisions at temperature 0; the agent's own code after its last
  call does something random.

Whatever varies is derived from the repetition (``consistency.repeat``) rather than from a real clock or an
unseeded random generator, so the requests replay byte for byte from the per-repetition cassettes.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta

import pytest
from agent import FEW_SHOT, MessagesAdapter, Sampling, choose_app, run
from apps import SHOP
from test_agent_tasks import PINNED, attempt

#: The gateway's alias for the example model, balanced over two deployments (examples/litellm.yaml): SmolLM2-135M as
#: the other tasks use it, and the same weights requantised to Q2_K on a second llama server, a cheaper build that
#: answers worse.
BALANCED_ALIAS = "smollm2"
#: The invoice task of test_agent_tasks.py (question, app, keyword), kept here so that a change of that file's
#: expectations (the degraded copies of tests/integration/project/) leaves these demonstrations as recorded.
INVOICE = ("Who sent me the email about the invoice?", "mail", "alice")
#: The first time the clock of the ``input`` task shows (see :func:`clock`).
OPENING = datetime(2026, 3, 2, 11, 40)


def clock(repeat: int) -> datetime:
    """Stands in for ``datetime.now()``: the time the repetition ran, as if each ran 7 minutes after the one before.

    A real clock would do the same to the requests, but no recorded request would ever be sent again, so the
    cassettes (matched on the request body) could not replay; derived from the repetition, the clock gives on
    replay the value it gave when recorded.
    """
    return OPENING + timedelta(minutes=7 * repeat)


@pytest.mark.repeat_consistency(n=5, min_pass=0.0)
def test_cause_input(pinned_client, pinned_route, consistency):
    """Asked the time, the model should read it from the system prompt, which carries the clock: the first requests
    differ before the model decides anything (``input``), and so do the answers."""
    now = f"{clock(consistency.repeat):%H:%M}"
    reply = pinned_client.chat.completions.create(
        model=pinned_route.model,
        messages=[
            {"role": "system", "content": f"You are a helpful assistant. Current time: {now}."},
            {"role": "user", "content": "What time is it? Answer with the time only."},
        ],
        temperature=0.0,
        max_tokens=16,
    )
    answer = (reply.choices[0].message.content or "").strip()
    consistency.record({"app": None, "answer": answer})
    assert now in answer, f"answer {answer!r} lacks the time {now}"


def stock(repeat: int) -> dict[str, int]:
    """The shop's stock when the repetition ran: other customers buy and the shop restocks in between. Seeded by the
    repetition (a live inventory would not be), so each repetition replays the stock it recorded."""
    draw = random.Random(f"stock-{repeat}")
    return {name: draw.randint(0, 3) for name in SHOP}


@pytest.mark.repeat_consistency(n=5, min_pass=0.0)
def test_cause_environment(pinned_client, pinned_route, consistency):
    """Step 1 picks the app at temperature 0 (the same request and decision every time); the shop's tool then
    reports a stock that varies between repetitions, and its result goes into step 2's request (``environment``).
    The answer must give the widget's stock the tool reported."""
    question = "How many widgets can I order today?"
    choice = pinned_client.completions.create(
        model=pinned_route.model, prompt=FEW_SHOT.format(task=question), temperature=0.0, max_tokens=3
    )
    app = choose_app(choice.choices[0].text)
    levels = stock(consistency.repeat)
    observation = "stock: " + ", ".join(f"{name} {count}" for name, count in levels.items())
    reply = pinned_client.chat.completions.create(
        model=pinned_route.model,
        messages=[{"role": "user", "content": f"{observation}\nQuestion: {question}\nAnswer:"}],
        temperature=0.0,
        max_tokens=24,
    )
    lines = (reply.choices[0].message.content or "").strip().splitlines()
    answer = lines[0].strip() if lines else ""
    consistency.record({"app": app, "answer": answer})
    assert app == "shopping", f"picked {app!r}"
    assert re.search(rf"\b{levels['widget']} widget", answer), f"answer {answer!r}: the stock is {levels['widget']}"


#: The same prompt every repetition, at temperature 1 and without a seed.
UNPINNED = Sampling(temperature=1.0)


@pytest.mark.repeat_consistency(n=5, min_pass=0.0)
def test_cause_sampling(pinned_client, pinned_route, consistency):
    """The agent of test_agent_tasks.py on its meeting task at temperature 1 without a seed: the same requests,
    different decisions (``sampling``)."""
    attempt(pinned_client, pinned_route, consistency, "meeting-time", UNPINNED)


@pytest.mark.repeat_consistency(n=5, min_pass=0.0)
def test_cause_route(pinned_anthropic_client, consistency):
    """The agent on the Anthropic route (the LiteLLM gateway, as test_anthropic_tasks.py) at temperature 0, asking
    for the alias the gateway balances over two deployments, as a team asks for its gateway's model name: the base
    URL and key are pinned, but each call goes to either deployment, so another model answers some repetitions
    (``route``: the ``x-litellm-model-id`` deployment differs between repetitions; the alias is not the route's
    pinned model either, which route drift reports too)."""
    task, app, keyword = INVOICE
    result = run(MessagesAdapter(pinned_anthropic_client), BALANCED_ALIAS, task, PINNED)
    consistency.record(result)
    assert result["app"] == app, f"picked {result['app']!r}"
    assert keyword in (result["answer"] or "").lower(), f"answer {result['answer']!r} lacks {keyword!r}"


def deliver(answer: str, repeat: int) -> bool:
    """The agent's last act, after its last model call: it posts the answer to the helpdesk, whose queue drops
    some posts. Seeded by the repetition, so each repetition replays the delivery it recorded."""
    return bool(answer) and random.Random(f"helpdesk-{repeat}").random() >= 0.4


@pytest.mark.repeat_consistency(n=5, min_pass=0.0)
def test_cause_outside_the_model(pinned_client, pinned_route, consistency):
    """The pinned agent at temperature 0 (the same requests and decisions every repetition), then a delivery that
    sometimes fails: the repetitions part after the last model call (``outside the model``)."""
    task, app, keyword = INVOICE
    result = run(pinned_client, pinned_route.model, task, PINNED)
    consistency.record(result)
    assert result["app"] == app and keyword in (result["answer"] or "").lower(), f"the agent answered {result}"
    assert deliver(result["answer"] or "", consistency.repeat), "the helpdesk dropped the answer"
