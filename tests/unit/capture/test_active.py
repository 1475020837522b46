"""The active repetition's handle (capture.active). ``consistency.score(x)``: a repetition's graded outcome, a finite
number in [0, 1], validated as ``cost`` is; ``consistency.cost(usd)`` below."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from pytest_consistency.capture.active import ActiveRepetition, Consistency, ConsistencyWarning
from pytest_consistency.capture.wire import exception_kind
from pytest_consistency.shared.ledger import CostBudgetExceeded, Ledger


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


# From test_cost_handle.py:
# ``consistency.cost(usd)``: what the test adds to its repetition, validated, and counted against the budget.


def cost_handle(ledger: Ledger | None = None) -> tuple[ActiveRepetition, Consistency]:
    state = ActiveRepetition(task_id="t", repeat=1, n=2, marked=True)
    return state, Consistency(state, lambda answer, task: answer, ledger)


def test_amounts_add_up_on_the_repetition() -> None:
    state, consistency = cost_handle()
    consistency.cost(0.1)
    consistency.cost(2)
    consistency.cost(Decimal("0.2"))
    consistency.cost(0)
    assert state.added_cost_usd == 0.1 + 2 + 0.2


@pytest.mark.parametrize("bad", [-0.01, math.nan, math.inf, -math.inf])
def test_a_negative_or_not_finite_amount_is_a_value_error_and_adds_nothing(bad: float) -> None:
    state, consistency = cost_handle()
    with pytest.raises(ValueError, match="finite amount of US dollars of at least 0"):
        consistency.cost(bad)
    assert state.added_cost_usd == 0.0


@pytest.mark.parametrize("bad", ["0.1", None, True, [1]])
def test_what_is_not_a_number_is_a_type_error_for_a_cost(bad: object) -> None:
    state, consistency = cost_handle()
    with pytest.raises(TypeError, match="an amount in US dollars"):
        consistency.cost(bad)  # type: ignore[arg-type]
    assert state.added_cost_usd == 0.0


def test_an_added_cost_counts_against_the_cost_budget(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "tokens", None, cost_limit=1.0)
    _, consistency = cost_handle(ledger)
    consistency.cost(0.75)
    ledger.check()
    consistency.cost(0.5)
    with pytest.raises(CostBudgetExceeded) as refused:
        ledger.check()
    assert exception_kind(refused.value) == "cost_budget"
