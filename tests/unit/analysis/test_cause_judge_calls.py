"""A judge's calls are not the agent's steps: the cause and the divergence map read the agent's calls only, and a
judge that flips on the same agent calls is the cause ``judge``.

Two repetitions of one agent, call for call the same; an LLM judge then grades the same answer PASS once and FAIL
once. Read as the agent's, the judge's call would be a third step the model decided otherwise (``sampling at step
3``): the agent's noise. It is the judge's: the agent's calls agree, the outcomes differ, a judge decided them.
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


def test_a_judge_that_flips_on_the_same_agent_calls_is_the_cause_judge() -> None:
    found = task_finding(TASK, reps(), {1: 0, 2: 0})
    assert found is not None
    assert (found.cause, found.step, found.where) == ("judge", None, "the judge's verdict"), found
    assert found.detail == (
        "all 2 repetitions sent the same 2 request(s) and got the same decisions; the judge (2 call(s)) passed 1/2 "
        "of them"
    )
    assert found.advice == "pin the judge's temperature; ask for a rubric; use a majority of M judge samples"
    mapped = divergence_map(reps(), True)
    assert mapped is not None and mapped.divergent_step is None and mapped.steps == 2


def test_the_same_calls_made_by_the_agent_are_its_sampling_at_the_third_step() -> None:
    found = task_finding(TASK, reps("agent"), {1: 0, 2: 0})
    assert found is not None and (found.cause, found.step) == ("sampling", 3), found


def test_a_simulated_users_calls_alone_are_not_a_judge() -> None:
    found = task_finding(TASK, reps("user"), {1: 0, 2: 0})
    assert found is not None and found.cause == "outside the model", found


def test_a_judge_whose_verdicts_agree_is_no_cause_when_the_agent_parts_first() -> None:
    """The agent's first difference stands: a judge only explains repetitions whose agent calls agree."""
    parted = [
        repetition(TASK, 1, graded("PASS"), passed=True, answer="total-42", n=2),
        repetition(
            TASK,
            2,
            [*two_steps(result="41 invoices", answer="total-41"), graded("FAIL")[-1]],
            passed=False,
            answer="total-41",
            n=2,
        ),
    ]
    found = task_finding(TASK, parted, {1: 0, 2: 1})
    assert found is not None and found.cause == "environment", found


def simulated(user_says: str, role: str = "user") -> list[CallRecord]:
    """An agent's first step, a simulated user's turn (its own model call), and the agent's second step, which sends
    the user's words back as the next user turn (tau-bench's loop)."""
    first = {"model": "gpt-test", "messages": [{"role": "user", "content": "I have a problem with order 7"}]}
    user = call({"model": "user-sim", "messages": [{"role": "user", "content": "play the customer"}]}, text(user_says))
    user.role = role
    second = {
        "model": "gpt-test",
        "messages": [
            *first["messages"],
            {"role": "assistant", "content": "How can I help?"},
            {"role": "user", "content": user_says},
        ],
    }
    return [call(first, text("How can I help?")), user, call(second, text("done"))]


def test_a_simulated_users_other_turn_is_the_agents_environment_not_its_sampling() -> None:
    parted = [
        repetition(TASK, 1, simulated("refund it"), passed=True, answer="done", n=2),
        repetition(TASK, 2, simulated("exchange it"), passed=False, answer="done", n=2),
    ]
    found = task_finding(TASK, parted, {1: 0, 2: 0})
    assert found is not None and (found.cause, found.step) == ("environment", 2), found


def test_the_same_turn_made_by_the_agents_own_call_is_read_as_its_sampling() -> None:
    parted = [
        repetition(TASK, 1, simulated("refund it", "agent"), passed=True, answer="done", n=2),
        repetition(TASK, 2, simulated("exchange it", "agent"), passed=False, answer="done", n=2),
    ]
    found = task_finding(TASK, parted, {1: 0, 2: 0})
    assert found is not None and found.cause == "sampling", found
