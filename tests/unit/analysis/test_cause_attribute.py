"""analysis.cause.attribute: the suite's gap by cause, and the shown points adding up to the gap shown."""

from __future__ import annotations

import pytest
from cause_records import repetition, tool, two_steps
from hypothesis import given
from hypothesis import strategies as st

from pytest_consistency.analysis.cause.attribute import advice_lines, rounded_shares
from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.cause import CAUSES, CauseShare


def suite() -> list:
    reps = []
    for r in range(1, 6):  # sampling: 3/5 passed
        calls = two_steps()
        if r > 3:
            calls[0].decision = tool("list_emails")
        reps.append(repetition("sampled", r, calls, r <= 3))
    for r in range(1, 6):  # input: 4/5 passed
        reps.append(repetition("clock", r, two_steps(f"Now: 09:{10 + r}"), r != 5))
    for r in range(1, 6):  # consistent
        reps.append(repetition("steady", r, two_steps(), True))
    for r in range(1, 6):  # answers only: every repetition passed
        reps.append(repetition("answers", r, two_steps(), True, answer=f"a{r % 2}"))
    return reps


def test_the_shares_add_up_to_the_gap_and_name_their_tasks() -> None:
    summary = build_summary(suite())
    causes = summary.causes
    assert causes is not None and list(causes) == list(CAUSES)
    assert sum(share.gap_pp for share in causes.values()) == pytest.approx(summary.consistency_gap_pp)
    assert (causes["sampling"].tasks, causes["input"].tasks, causes["outside the model"].tasks) == (1, 1, 1)
    assert causes["outside the model"].gap_pp == 0.0  # answers only: no gap, still a task of its cause
    gaps = {t.task_id: t.gap_pp for t in summary.tasks}
    assert causes["sampling"].gap_pp == pytest.approx(gaps["sampled"] / 4)
    assert {t.task_id: t.cause for t in summary.tasks} == {
        "sampled": "sampling",
        "clock": "input",
        "steady": None,
        "answers": "outside the model",
    }
    lines = advice_lines(summary.tasks, causes)
    assert [line.split(":")[0] for line in lines] == ["input", "sampling", "outside the model"]


def test_no_scored_task_has_nothing_to_attribute() -> None:
    assert build_summary([]).causes is None


@given(st.lists(st.floats(0, 100, allow_nan=False), min_size=1, max_size=5))
def test_rounded_shares_add_up_to_the_rounded_gap(values: list[float]) -> None:
    scale = 100 / sum(1 for _ in values)
    causes = {cause: CauseShare(1, value * scale / 100) for cause, value in zip(CAUSES, values, strict=False)}
    shown = rounded_shares(causes)
    # the points as printed add up to the gap as printed (f"{gap:.1f}"), even at a tie hidden by float noise
    assert f"{sum(shown.values()):.1f}" == f"{sum(c.gap_pp for c in causes.values()):.1f}"
    assert all(abs(shown[c] - causes[c].gap_pp) < 0.1 + 1e-9 for c in causes)


def test_a_tie_hidden_by_float_noise_rounds_as_the_gap_prints() -> None:
    # three shares of 0.25/3 (as 100/3 % of 0.25): 0.25 summed, 2.5000000000000004 summed after scaling by ten;
    # the gap prints 0.2, so the points must add up to 0.2, not 0.3
    causes = {c: CauseShare(1, 0.25 * (100 / 3) / 100) for c in CAUSES[:3]}
    assert f"{sum(rounded_shares(causes).values()):.1f}" == f"{sum(c.gap_pp for c in causes.values()):.1f}"


def test_three_thirds_show_as_points_that_add_up() -> None:
    causes = {c: CauseShare(1, 10 / 3) for c in CAUSES[:3]}
    assert sorted(rounded_shares(causes).values()) == [3.3, 3.3, 3.4]
