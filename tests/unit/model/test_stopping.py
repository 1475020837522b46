"""What the modes that stop early spent and decided (model.stopping): the sentences every output prints of a
sequential run and of the suite gate decided in rounds, with and without a repetition budget."""

from __future__ import annotations

from pytest_consistency.model.stopping import SequentialFacts, SuiteRound, SuiteSequentialFacts

BASE = "sequential (alpha 0.05): 40 repetitions run of the cap's fixed run of 100, 60 not needed; 3 task(s) decided by "
BASE += "evidence, 1 undecided at the cap, 2 decided by curtailment (min_pass)"


def facts(**changes: object) -> SequentialFacts:
    fields: dict[str, object] = {
        "alpha": 0.05,
        "repetitions_used": 40,
        "cap_repetitions": 100,
        "not_needed": 60,
        "by_evidence": 3,
        "at_cap": 1,
        "curtailed": 2,
    }
    return SequentialFacts(**(fields | changes))  # type: ignore[arg-type]


def test_a_sequential_run_without_a_budget_says_what_it_spent_and_decided() -> None:
    assert facts().text == BASE
    assert facts(by_rounds=2).text == BASE + ", 2 read on the repetitions their rounds ran (min_pass)"


def test_a_budget_is_named_whether_or_not_it_was_reached() -> None:
    assert facts(repetition_budget=50).text == BASE + "; repetition budget 50 not reached"
    stopped = facts(repetition_budget=30, budget_stopped=7, undecided_for_budget=2)
    assert stopped.text == (
        BASE + "; repetition budget 30 reached: 7 repetition(s) not started, 2 task(s) undecided for it"
    )


def suite(decided_by: str, beyond: int = 0) -> SuiteSequentialFacts:
    rounds = [
        SuiteRound(1, -4.25, 31.0, included={"a": True, "b": False, "c": True}),
        SuiteRound(2, 2.04, 18.96, included={"a": True, "b": True, "c": True}),
    ]
    return SuiteSequentialFacts(
        gate="gap_max",
        verdict="fail",
        decided_by=decided_by,
        decided_after=2,
        cap_rounds=5,
        k=3,
        seed=7,
        alpha=0.05,
        repetitions_used=15,
        cap_repetitions=45,
        rounds=rounds,
        beyond=beyond,
    )


def test_the_suite_gate_in_rounds_says_when_it_was_decided() -> None:
    head = "gap_max in rounds of k = 3 (alpha 0.05, seed 7): fail, "
    tail = "; 15 repetitions of the cap's fixed run of 45"
    assert suite("evidence").text == head + "decided after round 2" + tail
    assert suite("cap").text == head + "undecided at the cap (2 of 5 rounds)" + tail
    assert suite("evidence", beyond=4).text == head + "decided after round 2" + tail + ", 4 more ran that no round read"


def test_each_round_counts_the_tasks_it_included_and_its_bounds() -> None:
    assert suite("evidence").round_lines() == [
        "round 1: 2 of 3 tasks, gap_max bounds [-4.2, 31.0] pp",
        "round 2: 3 of 3 tasks, gap_max bounds [2.0, 19.0] pp",
    ]
