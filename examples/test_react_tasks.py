"""A multi-step tool-using task (examples/react.py), replayed from ../cassettes like the other examples.

Sampled at temperature 0.9 without a seed, so its repetitions take different actions at some step and some
branches pass while others fail: the task the divergence map and ``--consistency-resample`` are shown on
(docs/trajectory.md). No seed on purpose: a seed per repetition would make the requests of two repetitions
differ before they part, and no prefix could be replayed for another sample.
"""

import pytest
from react import react
from test_agent_tasks import SAMPLED

QUESTIONS = {
    "lunch-invite": ("Who invited me to lunch?", "bob"),
}


@pytest.mark.parametrize("name", ["lunch-invite"])
@pytest.mark.repeat_consistency(n=5, min_pass=0.0)
def test_react(pinned_client, pinned_route, consistency, name):
    question, keyword = QUESTIONS[name]
    result = react(pinned_client, pinned_route.model, question, SAMPLED)
    consistency.record(result)
    assert result["answer"] is not None, f"no answer after {result['actions']}"
    assert keyword in result["answer"].lower(), f"answer {result['answer']!r} lacks {keyword!r}"
