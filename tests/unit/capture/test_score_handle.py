"""``consistency.score(x)``: a repetition's graded outcome, a finite number in [0, 1], validated as ``cost`` is."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest

from pytest_consistency.capture.active import ActiveRepetition, Consistency, ConsistencyWarning


def handle() -> tuple[ActiveRepetition, Consistency]:
    state = ActiveRepetition(task_id="t", repeat=1, n=2, marked=True)
    return state, Consistency(state, lambda answer, task: answer)


@pytest.mark.parametrize("value", [0, 1, 0.25, Decimal("0.5"), Fraction(2, 3)])
def test_a_number_in_the_unit_interval_is_kept_as_a_float(value: object) -> None:
    state, consistency = handle()
    consistency.score(value)  # type: ignore[arg-type]
    assert state.score == float(value) and isinstance(state.score, float)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-0.01, 1.0001, 2, math.nan, math.inf, -math.inf])
def test_outside_the_unit_interval_or_not_finite_is_a_value_error_and_keeps_nothing(bad: float) -> None:
    state, consistency = handle()
    with pytest.raises(ValueError, match=r"finite number in \[0, 1\]"):
        consistency.score(bad)
    assert state.score is None


@pytest.mark.parametrize("bad", ["0.5", None, True, [0.5], 0.5j])
def test_what_is_not_a_number_is_a_type_error(bad: object) -> None:
    state, consistency = handle()
    with pytest.raises(TypeError, match=r"a number in \[0, 1\]"):
        consistency.score(bad)  # type: ignore[arg-type]
    assert state.score is None


def test_a_second_score_is_kept_with_a_warning() -> None:
    state, consistency = handle()
    consistency.score(0.2)
    with pytest.warns(ConsistencyWarning, match="score\\(\\) called again"):
        consistency.score(0.9)
    assert state.score == 0.9
