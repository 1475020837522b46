"""Example agent tasks, replayed from ../cassettes (recorded from SmolLM2-135M; see scripts/record_examples.sh).

Sampled tasks run at temperature 0.9 without a seed and are expected to be inconsistent; pinned tasks run at
temperature 0, or 0.9 with a seed, and are expected to repeat themselves.
"""

import pytest
from agent import Sampling, run

SAMPLED = Sampling(temperature=0.9)
PINNED = Sampling(temperature=0.0)
SEEDED = Sampling(temperature=0.9, seed=42)

TASKS = {
    "cheap-items": ("Find the items under 20 dollars in the shop and return their names.", "shopping", "widget"),
    "meeting-time": ("What time is the team meeting on my calendar tomorrow?", "calendar", "15:00"),
    "invoice-sender": ("Who sent me the email about the invoice?", "mail", "alice"),
    "friday-event": ("Which event is on my calendar on Friday?", "calendar", "budget"),
    "unread-count": ("How many unread emails do I have?", "mail", "2"),
}


def attempt(client, route, consistency, name, sampling):
    task, app, keyword = TASKS[name]
    result = run(client, route.model, task, sampling)
    consistency.record(result)
    assert result["app"] == app, f"picked {result['app']!r}"
    assert keyword in (result["answer"] or "").lower(), f"answer {result['answer']!r} lacks {keyword!r}"


@pytest.mark.parametrize("name", ["meeting-time", "invoice-sender", "friday-event"])
@pytest.mark.repeat_consistency(n=5, min_pass=0.0)
def test_sampled(pinned_client, pinned_route, consistency, name):
    attempt(pinned_client, pinned_route, consistency, name, SAMPLED)


@pytest.mark.parametrize("name", ["invoice-sender", "cheap-items"])
@pytest.mark.repeat_consistency(n=5, min_pass=0.0)
def test_pinned(pinned_client, pinned_route, consistency, name):
    attempt(pinned_client, pinned_route, consistency, name, PINNED)


@pytest.mark.parametrize("name", ["unread-count"])
@pytest.mark.repeat_consistency(n=5, min_pass=0.0)
def test_seeded(pinned_client, pinned_route, consistency, name):
    attempt(pinned_client, pinned_route, consistency, name, SEEDED)
