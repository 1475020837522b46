"""A demo suite of repeated agent tasks: run it with ``pytest demo --consistency-gap-max=25``."""

import pytest
import toy_agent

EXPECTED = {
    "items under 20": ["gadget", "sprocket", "widget"],
    "items under 10": ["sprocket"],
    "items under 30": ["doohickey", "gadget", "sprocket", "widget"],
    "items under 12": ["sprocket"],
}


@pytest.mark.parametrize("task", ["items under 20", "items under 10"])
@pytest.mark.repeat_consistency(n=5)
def test_pinned_agent(task, consistency):
    """Sloppiness 0: the same answer every repetition."""
    answer = toy_agent.run(task, consistency.repeat, sloppiness=0.0)
    consistency.record(answer)
    assert answer == EXPECTED[task]


@pytest.mark.parametrize("task", ["items under 30", "items under 12"])
@pytest.mark.repeat_consistency(n=5, min_pass=0.4)
def test_sampled_agent(task, consistency):
    """Sloppiness 0.3: some repetitions misread the limit; min_pass 0.4 tolerates it per task."""
    answer = toy_agent.run(task, consistency.repeat, sloppiness=0.3)
    consistency.record(answer)
    assert answer == EXPECTED[task]
