"""Suite-level intervals: the published AppWorld figures, determinism, edge cases and invalid input."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from strategies import task_counts_lists

from pytest_consistency.stats.binomial import clopper_pearson, pass_hat_k_interval
from pytest_consistency.stats.gap_change import paired_gap_difference
from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.metrics import TaskCounts, overall
from pytest_consistency.stats.suite import (
    FEW_TASKS_FOR_POPULATION,
    TARGETS,
    SuiteIntervals,
    _estimator_values,
    _point_estimates,
    suite_intervals,
)


def suite_of(distribution: dict[int, int], n: int = 5, k: int = 5) -> list[TaskCounts]:
    return [TaskCounts(c, n, k) for c, tasks in distribution.items() for _ in range(tasks)]


# One way to split the published totals over 168 tasks at n = k = 5 (any split with the same totals gives the same
# point estimates): 650/840 successful runs and 89 all-pass tasks -> Mean@5 77.4 %, pass^5 53.0 %, gap 24.4 pp;
# with the consistency guidelines 681/840 and 116 all-pass -> pass^5 69.0 %, gap 12.0 pp.
PUBLISHED = suite_of({5: 89, 4: 30, 3: 15, 2: 10, 1: 20, 0: 4})
GUIDELINES = suite_of({5: 116, 4: 12, 3: 9, 2: 8, 1: 10, 0: 13})


def test_published_totals_reproduce_the_published_figures() -> None:
    figures = overall(PUBLISHED)
    assert figures is not None
    assert round(figures.mean_at_k * 100, 1) == 77.4
    assert round(figures.pass_hat_k * 100, 1) == 53.0
    assert round(figures.consistency_gap_pp, 1) == 24.4
    improved = overall(GUIDELINES)
    assert improved is not None
    assert round(improved.pass_hat_k * 100, 1) == 69.0
    assert round(improved.consistency_gap_pp, 1) == 12.0


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("tasks", "gap"), [(PUBLISHED, 24.4), (GUIDELINES, 12.0)])
def test_published_suite_intervals_hold_the_point_estimates(target: str, tasks: list[TaskCounts], gap: float) -> None:
    result = suite_intervals(tasks, target=target)
    figures = overall(tasks)
    assert result is not None and figures is not None
    assert result.target == target and result.confidence == 0.95 and result.seed == 0
    assert result.mean_at_k.contains(figures.mean_at_k)
    assert result.pass_hat_k.contains(figures.pass_hat_k)
    assert result.pass_at_k.contains(figures.pass_at_k)
    assert result.gap_pp.contains(figures.consistency_gap_pp)
    assert result.gap_pp.contains(gap)
    # Useful, not vacuous: 168 tasks pin the gap to within about +-7 pp (+-6 before issue 40's bounds, which hold
    # for every mix of pass rates; the normal bound they replaced had no such guarantee).
    assert result.gap_pp.width < 14.0
    assert result.mean_at_k.width < 0.1


def test_published_pass_hat_k_matches_the_exact_interval_on_all_pass_tasks() -> None:
    population = suite_intervals(PUBLISHED, target="population")
    suite = suite_intervals(PUBLISHED, target="suite")
    assert population is not None and suite is not None
    exact = clopper_pearson(89, 168)
    # the population interval is the exact one on the all-pass share, never narrower than the suite's
    assert population.pass_hat_k == Interval(
        min(exact.low, suite.pass_hat_k.low), max(exact.high, suite.pass_hat_k.high)
    )
    assert suite.pass_hat_k.low == pytest.approx(exact.low, abs=0.01)
    assert suite.pass_hat_k.high == pytest.approx(exact.high, abs=0.01)


@pytest.mark.parametrize("target", TARGETS)
def test_guidelines_improvement_is_significant(target: str) -> None:
    # The published runs are not paired task by task; pairing tasks by rank is only an illustration.
    difference = paired_gap_difference(list(zip(PUBLISHED, GUIDELINES, strict=True)), target=target)
    assert difference.contains(12.0238 - 24.4048)
    assert difference.high < 0.0


# --- determinism ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_same_input_same_output(target: str) -> None:
    first = suite_intervals(PUBLISHED, target=target, seed=3, draws=500)
    second = suite_intervals(list(PUBLISHED), target=target, seed=3, draws=500)
    assert repr(first) == repr(second)
    pairs = list(zip(PUBLISHED, GUIDELINES, strict=True))
    assert repr(paired_gap_difference(pairs, target=target, seed=5)) == repr(
        paired_gap_difference(pairs, target=target, seed=5)
    )


def test_population_seed_and_draws_are_recorded() -> None:
    result = suite_intervals(PUBLISHED, target="population", seed=11, draws=300)
    assert result is not None
    assert (result.seed, result.draws) == (11, 300)
    suite = suite_intervals(PUBLISHED, target="suite", seed=11, draws=300)
    assert suite is not None
    assert (suite.seed, suite.draws) == (11, 0)  # closed form: no resampling


# --- edge cases ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_no_tasks_gives_none(target: str) -> None:
    assert suite_intervals([], target=target) is None


def test_one_task_is_the_exact_per_task_interval() -> None:
    result = suite_intervals([TaskCounts(4, 5, 5)])
    assert result is not None
    exact = clopper_pearson(4, 5)
    assert result.mean_at_k.low == pytest.approx(exact.low, rel=1e-12)
    assert result.mean_at_k.high == pytest.approx(exact.high, rel=1e-12)
    # The unbiased pass^5 estimate of a 4/5 task is 0, just below the exact interval for p^5; it is included.
    assert result.pass_hat_k.low == 0.0
    assert result.pass_hat_k.high == pytest.approx(pass_hat_k_interval(4, 5, 5).high)
    assert result.gap_pp.contains(80.0)
    assert result.note is None


@pytest.mark.parametrize("t", [1, 2, 3, 4, 20])
def test_all_pass_suite_cannot_rule_out_perfection_or_a_zero_gap(t: int) -> None:
    result = suite_intervals([TaskCounts(5, 5, 5)] * t)
    assert result is not None
    assert result.mean_at_k.high == 1.0
    assert result.pass_hat_k.high == 1.0
    assert result.gap_pp.low == 0.0
    assert result.gap_pp.high > 0.0
    assert result.mean_at_k.low < 1.0


@pytest.mark.parametrize("t", [1, 3, 12])
def test_all_fail_suite(t: int) -> None:
    result = suite_intervals([TaskCounts(0, 5, 5)] * t)
    assert result is not None
    assert result.mean_at_k.low == 0.0 and result.pass_hat_k.low == 0.0 and result.gap_pp.low == 0.0
    assert 0.0 < result.mean_at_k.high < 1.0


def test_k_of_one_has_no_gap() -> None:
    result = suite_intervals([TaskCounts(c, 5, 1) for c in range(6)] * 2)
    assert result is not None
    assert result.gap_pp == Interval(0.0, 0.0)
    assert result.pass_hat_k == result.mean_at_k


@pytest.mark.parametrize("target", TARGETS)
def test_mixed_repetitions_and_k(target: str) -> None:
    tasks = [TaskCounts(3, 5, 5), TaskCounts(7, 10, 5), TaskCounts(2, 3, 2), TaskCounts(10, 10, 10)] * 3
    result = suite_intervals(tasks, target=target)
    figures = overall(tasks)
    assert result is not None and figures is not None
    assert result.mean_at_k.contains(figures.mean_at_k)
    assert result.gap_pp.contains(figures.consistency_gap_pp)
    for interval in (result.mean_at_k, result.pass_hat_k, result.pass_at_k):
        assert 0.0 <= interval.low <= interval.high <= 1.0


def test_intervals_shrink_with_more_tasks() -> None:
    small = suite_intervals(PUBLISHED[::8])
    large = suite_intervals(PUBLISHED)
    assert small is not None and large is not None
    assert large.gap_pp.width < small.gap_pp.width
    assert large.mean_at_k.width < small.mean_at_k.width


def test_higher_confidence_is_wider() -> None:
    narrow = suite_intervals(PUBLISHED, confidence=0.8)
    wide = suite_intervals(PUBLISHED, confidence=0.99)
    assert narrow is not None and wide is not None
    assert narrow.gap_pp.low > wide.gap_pp.low and narrow.gap_pp.high < wide.gap_pp.high


def test_population_note_below_fifteen_tasks() -> None:
    few = suite_intervals(PUBLISHED[: FEW_TASKS_FOR_POPULATION - 1], target="population")
    enough = suite_intervals(PUBLISHED[:FEW_TASKS_FOR_POPULATION], target="population")
    assert few is not None and enough is not None
    assert few.note is not None and "unreliable" in few.note
    assert enough.note is None


def test_population_pass_hat_k_uses_the_bootstrap_when_k_is_below_n() -> None:
    tasks = [TaskCounts(c, 10, 5) for c in (10, 9, 8, 10, 3, 0, 10, 7, 6, 10, 10, 9, 5, 10, 10, 2)]
    result = suite_intervals(tasks, target="population")
    assert result is not None
    assert result.note is not None and "below 30 tasks" in result.note  # 16 tasks: flagged, still computed
    figures = overall(tasks)
    assert figures is not None
    assert result.pass_hat_k.contains(figures.pass_hat_k)


def test_result_type() -> None:
    assert isinstance(suite_intervals(PUBLISHED), SuiteIntervals)


# --- paired difference ------------------------------------------------------------------------------------------


# --- invalid input ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target": "tasks"}, "target must be one of"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": -0.5}, "confidence"),
        ({"draws": 0}, "draws"),
        ({"draws": 10.5}, "draws"),
        ({"seed": "0"}, "seed"),
    ],
)
def test_invalid_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        suite_intervals(PUBLISHED, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        paired_gap_difference(list(zip(PUBLISHED, PUBLISHED, strict=True)), **kwargs)  # type: ignore[arg-type]


def test_invalid_tasks() -> None:
    with pytest.raises(ValueError, match="TaskCounts"):
        suite_intervals([(5, 5, 5)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="at least one task"):
        paired_gap_difference([])
    with pytest.raises(ValueError, match="pairs"):
        paired_gap_difference([TaskCounts(5, 5, 5)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="c must be within"):
        TaskCounts(6, 5, 5)


@given(task_counts_lists)
def test_point_estimates_grouped_by_counts_are_the_per_task_sums(tasks: list[TaskCounts]) -> None:
    """The suite's estimates add each distinct ``(n, k, c)`` once, times its tasks (issue 30): exactly the sum over
    the tasks one by one, in fractions, so not a bit of any figure moves."""
    totals = [Fraction(0)] * 4
    for task in tasks:
        for metric, values in enumerate(_estimator_values(task.n, task.k)):
            totals[metric] += values[task.c]
    assert _point_estimates(tasks) == tuple(float(total / len(tasks)) for total in totals)
