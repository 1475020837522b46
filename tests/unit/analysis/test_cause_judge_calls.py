"""A judge's calls are not the agent's steps: the cause and the divergence map read the agent's calls only.

Two repetitions of one agent, call for call the same; an LLM judge then grades the same answer PASS once and FAIL
once. Read as the agent's, the judge's call would be a third step the model decided otherwise (``sampling at step
3``): the agent's noise. It is the judge's; the agent's calls agree, so the cause is not the agent's sampling.
"""

from __future__ import annotations

from cause_records import call, repetition, text, two_steps

from pytest_consistency.analysis.cause.attribute import task_finding
from pytest_consistency.analysis.trajectory.divergence import divergence_map
from pytest_consistency.model.records import CallRecord, RepetitionResult

TASK = "test_agent.py::test_agent[t]"


def graded(verdict: str, role: str = "judge") -> list[CallRecord]:
    judge = call({"model": "judge-x", "messages": [{"role": "user", "content": "grade: total-42"}]}, text(verdict))
    judge.role = role
    return [*two_steps(), judge]


def reps(role: str = "judge") -> list[RepetitionResult]:
    return [
        repetition(TASK, 1, graded("PASS", role), passed=True, answer="total-42", n=2),
        repetition(TASK, 2, graded("FAIL", role), passed=False, answer="total-42", n=2),
    ]


def test_a_judge_that_flips_on_the_same_agent_calls_is_not_the_agents_sampling() -> None:
    found = task_finding(TASK, reps(), {1: 0, 2: 0})
    assert found is not None
    assert found.cause != "sampling" and found.step is None, found
    mapped = divergence_map(reps(), True)
    assert mapped is not None and mapped.divergent_step is None and mapped.steps == 2


def test_the_same_calls_made_by_the_agent_are_its_sampling_at_the_third_step() -> None:
    found = task_finding(TASK, reps("agent"), {1: 0, 2: 0})
    assert found is not None and (found.cause, found.step) == ("sampling", 3), found
