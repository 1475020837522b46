from __future__ import annotations

from pytest_consistency.analysis.resample.distribution import NO_STEP, Sample, rows, sample_of
from pytest_consistency.model.resample import DecisionRow, ResampleSummary


def summary(samples: list[Sample], step: int = 2) -> ResampleSummary:
    return ResampleSummary("t", step, 1, len(samples), len(samples), 3, "dir", rows=rows(samples))


def test_rows_count_samples_and_passes_per_decision() -> None:
    samples = [
        Sample("action:mail[invoice]", "action: mail[invoice]", True),
        Sample("action:answer[bob]", "action: answer[bob]", False),
        Sample("action:mail[invoice]", "action: mail[invoice]", True),
        Sample("action:mail[invoice]", "action: mail[invoice]", False),
        Sample("action:calendar[today]", "action: calendar[today]", False),
    ]
    assert rows(samples) == [
        DecisionRow("action:mail[invoice]", "action: mail[invoice]", 3, 2),
        DecisionRow("action:answer[bob]", "action: answer[bob]", 1, 0),
        DecisionRow("action:calendar[today]", "action: calendar[today]", 1, 0),
    ]
    result = summary(samples)
    assert (result.distinct, result.passed, result.reproduces) == (3, 2, True)
    assert result.clause() == "resampling step 2 alone gives 3 distinct decisions in 5 samples"


def test_the_order_does_not_depend_on_the_order_samples_arrive() -> None:
    samples = [Sample("b", "b", False), Sample("a", "a", True), Sample("c", "c", False), Sample("a", "a", False)]
    assert rows(samples) == rows(list(reversed(samples)))


def test_one_decision_all_passing_does_not_reproduce() -> None:
    result = summary([Sample("k", "k", True)] * 4, step=3)
    assert (result.distinct, result.reproduces) == (1, False)
    assert result.clause() == "resampling step 3 alone gives 1 decision in 4 samples"
    assert summary([]).reproduces is False


def test_a_sample_that_stopped_before_the_step_is_a_decision_of_its_own() -> None:
    assert sample_of(None, None, 3, False) == Sample(NO_STEP, "(stopped before step 3)", False)
    assert sample_of("action:x", None, 3, True) == Sample("action:x", "action:x", True)
