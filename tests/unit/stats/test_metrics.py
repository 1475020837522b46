"""The metric functions against the published figures and hand-computed edges."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from strategies import task_counts_lists

from pytest_consistency.stats import metrics
from pytest_consistency.stats.metrics import TaskCounts


def published(all_pass: int, successes: int) -> list[TaskCounts]:
    """168 AppWorld tasks at n = k = 5 with the given all-pass tasks and total successful runs."""
    tasks = [TaskCounts(5, 5, 5)] * all_pass
    rest = successes - 5 * all_pass
    flaky = 168 - all_pass
    base, extra = divmod(rest, flaky)  # spread the other successes over the flaky tasks, 1..4 each
    assert 1 <= base and base + (extra > 0) <= 4
    tasks += [TaskCounts(base + 1, 5, 5)] * extra + [TaskCounts(base, 5, 5)] * (flaky - extra)
    assert sum(t.c for t in tasks) == successes and len(tasks) == 168
    return tasks


def test_published_gpt41_react_appworld_gap() -> None:
    figures = metrics.overall(published(all_pass=89, successes=650))
    assert figures is not None
    assert round(figures.mean_at_k * 100, 1) == 77.4
    assert round(figures.pass_hat_k * 100, 1) == 53.0
    assert round(figures.consistency_gap_pp, 1) == 24.4


def test_published_gap_with_guidelines() -> None:
    figures = metrics.overall(published(all_pass=116, successes=681))
    assert figures is not None
    assert round(figures.pass_hat_k * 100, 1) == 69.0
    assert round(figures.consistency_gap_pp, 1) == 12.0


def test_unbiased_estimators_when_n_exceeds_k() -> None:
    task = TaskCounts(c=3, n=5, k=2)
    assert metrics.pass_hat_k(task) == Fraction(3, 10)  # C(3,2)/C(5,2)
    assert metrics.pass_at_k(task) == Fraction(9, 10)  # 1 - C(2,2)/C(5,2)
    assert metrics.mean_at_k(task) == Fraction(3, 5)
    assert metrics.gap_pp(task) == pytest.approx(30.0)


@pytest.mark.parametrize(
    ("c", "n", "k", "mean", "hat", "at"),
    [
        (5, 5, 5, 1, 1, 1),  # all pass
        (0, 5, 5, 0, 0, 0),  # all fail
        (1, 1, 1, 1, 1, 1),  # one repetition
        (4, 5, 5, Fraction(4, 5), 0, 1),
        (4, 5, 1, Fraction(4, 5), Fraction(4, 5), Fraction(4, 5)),  # k = 1: all three agree
    ],
)
def test_edges(c: int, n: int, k: int, mean: Fraction, hat: Fraction, at: Fraction) -> None:
    task = TaskCounts(c, n, k)
    assert (metrics.mean_at_k(task), metrics.pass_hat_k(task), metrics.pass_at_k(task)) == (mean, hat, at)


def test_ordering_holds_for_every_small_count() -> None:
    for n in range(1, 9):
        for k in range(1, n + 1):
            for c in range(n + 1):
                task = TaskCounts(c, n, k)
                assert metrics.pass_hat_k(task) <= metrics.mean_at_k(task) <= metrics.pass_at_k(task)


def test_gap_is_flaky_share_times_their_mean_when_n_equals_k() -> None:
    tasks = [TaskCounts(5, 5, 5), TaskCounts(2, 5, 5), TaskCounts(4, 5, 5), TaskCounts(0, 5, 5)]
    figures = metrics.overall(tasks)
    assert figures is not None
    flaky = [t for t in tasks if 0 < t.c < t.n]
    expected = len(flaky) / len(tasks) * sum(t.c / t.n for t in flaky) / len(flaky) * 100
    assert figures.consistency_gap_pp == pytest.approx(expected)
    assert figures.consistency_gap_pp == pytest.approx(30.0)


def test_large_n_is_exact() -> None:
    task = TaskCounts(c=900, n=1000, k=500)
    assert 0 < metrics.pass_hat_k(task) < Fraction(1, 10**20)
    assert metrics.pass_at_k(task) == 1


def test_no_tasks_and_no_answers() -> None:
    assert metrics.overall([]) is None
    assert metrics.disagreement_pp(0, 0) is None
    assert metrics.disagreement_pp(1, 4) == 25.0


@pytest.mark.parametrize(("c", "n", "k"), [(0, 0, 1), (6, 5, 5), (-1, 5, 5), (1, 5, 0), (1, 5, 6)])
def test_invalid_counts(c: int, n: int, k: int) -> None:
    with pytest.raises(ValueError):
        TaskCounts(c, n, k)


@given(task_counts_lists)
def test_overall_adds_tasks_with_the_same_counts_once_and_equals_the_per_task_sum(tasks: list[TaskCounts]) -> None:
    """``overall`` sums each distinct (c, n, k) once, times its tasks (issue 30): exactly the per-task sum, in
    fractions, so not a bit of any session figure moves."""
    t = len(tasks)
    mean = sum((metrics.mean_at_k(x) for x in tasks), Fraction(0)) / t
    hat = sum((metrics.pass_hat_k(x) for x in tasks), Fraction(0)) / t
    at = sum((metrics.pass_at_k(x) for x in tasks), Fraction(0)) / t
    assert metrics.overall(tasks) == metrics.Overall(t, float(mean), float(hat), float(at), float((mean - hat) * 100))
