"""The sequential decision from a task's outcomes by repetition number: what the skip and the summary both read."""

from __future__ import annotations

from pytest_consistency.analysis.sequential import (
    BUDGET,
    UNRECORDED,
    Outcome,
    TaskDecision,
    from_records,
    task_decision,
)

ALPHA = 0.05


def numbered(pattern: str) -> dict[int, Outcome]:
    """P pass, F fail, S skip, U unrecorded, B stopped by the budget, . not known yet: by repetition number from 1."""
    words: dict[str, Outcome] = {"P": "pass", "F": "fail", "S": "skip", "U": "unrecorded", "B": "budget"}
    return {i: words[c] for i, c in enumerate(pattern, start=1) if c != "."}


def test_the_decision_reads_the_unbroken_run_from_repetition_one() -> None:
    assert task_decision(numbered("P" * 16), 40, 1.0, 0.8, ALPHA) == TaskDecision("pass", "evidence", 16)
    # Repetition 5 not known yet (running on another worker): what came after it is not read.
    assert task_decision(numbered("PPPP." + "P" * 20), 40, 1.0, 0.8, ALPHA) is None
    assert task_decision(numbered("FFF"), 40, 1.0, 0.8, ALPHA) == TaskDecision("fail", "evidence", 3)
    # Outcomes after the decision (a repetition handed out before it) change nothing.
    assert task_decision(numbered("FFF" + "P" * 30), 40, 1.0, 0.8, ALPHA) == TaskDecision("fail", "evidence", 3)


def test_a_skip_is_not_an_outcome_and_the_decision_names_the_repetition_it_was_reached_at() -> None:
    decision = task_decision(numbered("PPSPPPPPPPPPPPPPPPPP"), 40, 1.0, 0.8, ALPHA)
    assert decision == TaskDecision("pass", "evidence", 17)  # 16 outcomes read, one skip among them


def test_an_unrecorded_repetition_is_the_cap() -> None:
    assert task_decision(numbered("P" * 9 + "U"), 40, 1.0, 0.8, ALPHA) == TaskDecision("undecided", "cap", 9)
    assert task_decision(numbered("U"), 40, 1.0, 0.8, ALPHA) == TaskDecision("undecided", "cap", 0)
    # Decided before the unrecorded one: the decision stands.
    assert task_decision(numbered("FFFU"), 40, 1.0, 0.8, ALPHA) == TaskDecision("fail", "evidence", 3)


def test_a_repetition_the_budget_stopped_is_the_cap_and_a_verdict_decided_before_it_stands() -> None:
    assert task_decision(numbered("P" * 9 + "B" * 31), 40, 1.0, 0.8, ALPHA) == TaskDecision("undecided", "cap", 9)
    assert task_decision(numbered("B" * 40), 40, 1.0, 0.8, ALPHA) == TaskDecision("undecided", "cap", 0)
    assert task_decision(numbered("FFFB"), 40, 1.0, 0.8, ALPHA) == TaskDecision("fail", "evidence", 3)
    # Under xdist a later repetition handed out before the budget ran out still runs: it is not read.
    assert task_decision(numbered("P" * 9 + "B" + "P" * 9), 40, 1.0, 0.8, ALPHA) == TaskDecision("undecided", "cap", 9)
    # A min_pass task the budget stopped before its count rule was decided is undecided, not incomplete.
    assert task_decision(numbered("PPBBB"), 5, 0.6, None, ALPHA) == TaskDecision("undecided", "cap", 2)
    assert task_decision(numbered("PPPBB"), 5, 0.6, None, ALPHA) == TaskDecision("pass", "curtailed", 3)


def test_a_min_pass_task_is_decided_by_curtailment_in_any_order() -> None:
    assert task_decision(numbered("P.P.P"), 5, 0.6, None, ALPHA) == TaskDecision("pass", "curtailed", 3)
    assert task_decision(numbered("F.F.F"), 5, 0.6, None, ALPHA) == TaskDecision("fail", "curtailed", 3)
    assert task_decision(numbered("PP"), 5, 0.6, None, ALPHA) is None
    assert task_decision(numbered("PPSP"), 5, 0.6, None, ALPHA) is None  # a skip: never stopped, as adaptive


def test_the_records_give_the_outcomes_the_board_gives() -> None:
    records = [
        (1, "passed", None),
        (2, "xfailed", None),
        (3, "skipped", None),
        (4, "curtailed", f"{UNRECORDED}: t repetition 4 has no cassette"),
        (5, "curtailed", "not needed (--consistency-sequential): ..."),
        (6, "not run", None),
        (7, "curtailed", f"{BUDGET}: 30 repetitions started; ..."),
    ]
    assert from_records(records) == {1: "pass", 2: "fail", 3: "skip", 4: "unrecorded", 7: "budget"}
