"""The suite gap gate's rounds (:func:`pytest_consistency.analysis.suite_sequential.gap_rounds`): decided after a
round, later rounds not needed; a round waited for until its included batches are known; a batch that cannot be
read ends the sequence undecided; the same decision from the same outcomes whatever order they arrived in."""

from __future__ import annotations

from pytest_consistency.analysis.suite_sequential import gap_rounds


def steady(tasks: int, n: int) -> dict[str, dict[int, str]]:
    return {f"t{i:02d}": dict.fromkeys(range(1, n + 1), "pass") for i in range(tasks)}


def test_a_clear_pass_is_decided_after_round_one_and_later_rounds_are_not_needed() -> None:
    outcomes = {task: {r: m for r, m in marks.items() if r <= 5} for task, marks in steady(40, 20).items()}
    state = gap_rounds(outcomes, 5, 20, 15.0, 0.05, 0)
    assert (state.verdict, state.decided_by, state.decided_after) == ("pass", "evidence", 1)
    assert state.rounds[0].high_pp <= 15.0 and state.rounds[0].estimate_pp == 0.0
    assert state.needs("t00", 3) is True and state.needs("t00", 6) is False and state.needs("t39", 20) is False


def test_a_round_is_waited_for_until_its_included_batches_are_known() -> None:
    outcomes = {task: {r: m for r, m in marks.items() if r <= 7} for task, marks in steady(4, 20).items()}
    state = gap_rounds(outcomes, 5, 20, 10.0, 0.05, 0)
    assert state.verdict is None and state.pending == 2 and len(state.rounds) == 1
    chosen = [task for task, inside in state.pending_included.items() if inside]
    assert all(state.needs(task, 6) is (task in chosen) for task in outcomes)
    assert state.needs("t00", 11) is None  # round 3: not known before round 2 is read
    final = gap_rounds(outcomes, 5, 20, 10.0, 0.05, 0, final=True)
    if chosen:  # at the session's end a missing repetition of an included batch ends the sequence
        assert (final.verdict, final.decided_by) == ("undecided", "cap") and final.ended


def test_a_skipped_repetition_in_an_included_batch_ends_the_sequence_undecided() -> None:
    outcomes = steady(4, 10)
    outcomes["t01"][3] = "skip"
    state = gap_rounds(outcomes, 5, 10, 10.0, 0.05, 0)
    assert (state.verdict, state.decided_by, state.rounds) == ("undecided", "cap", [])
    assert state.ended is not None and "t01" in state.ended


def test_the_decision_depends_on_the_outcomes_not_their_order_or_extra_repetitions() -> None:
    outcomes = steady(30, 20)
    for i in range(6):
        for r in range(1, 21):
            if (r + i) % 3 == 0:
                outcomes[f"t{i:02d}"][r] = "fail"
    shuffled = {task: dict(reversed(list(marks.items()))) for task, marks in reversed(list(outcomes.items()))}
    one, two = gap_rounds(outcomes, 5, 20, 20.0, 0.05, 9), gap_rounds(shuffled, 5, 20, 20.0, 0.05, 9)
    assert (one.verdict, one.decided_after, one.rounds) == (two.verdict, two.decided_after, two.rounds)
    assert one.verdict is not None


def test_twenty_tasks_cannot_pass_a_10_pp_gap_gate_below_a_cap_of_30() -> None:
    from pytest_consistency.analysis.suite_sequential import best_case_cap

    assert best_case_cap(20, 5, 10.0, 0.05) == 30  # the plan an undecided 20-task gate gives
    assert best_case_cap(100, 5, 10.0, 0.05) == 5
    assert gap_rounds(steady(20, 25), 5, 25, 10.0, 0.05, 0).verdict == "undecided"


def test_the_drop_gate_passes_an_unchanged_suite_and_fails_a_large_drop() -> None:
    from pytest_consistency.analysis.suite_sequential import drop_rounds
    from pytest_consistency.stats.suite_sequential import baseline_bounds

    counts = [(10, 10)] * 300 + [(5, 10)] * 100
    low, high = baseline_bounds(counts, 0.025)
    estimate = sum(c for c, _ in counts) / 4000
    assert low < estimate < high
    same = {f"t{i:03d}": {r: "pass" if i < 300 or r % 2 else "fail" for r in range(1, 11)} for i in range(400)}
    kept = drop_rounds(same, 1, 10, 5.0, 0.05, 0, (low, high, estimate))
    assert (kept.verdict, kept.decided_by) == ("pass", "evidence")
    assert kept.rounds[-1].high_pp < 5.0 and len(kept.rounds) < 10  # stopped before the cap
    worse = {task: dict.fromkeys(marks, "fail") if task < "t150" else marks for task, marks in same.items()}
    dropped = drop_rounds(worse, 1, 10, 5.0, 0.05, 0, (low, high, estimate))
    assert dropped.verdict == "fail" and dropped.rounds[-1].low_pp > 5.0
