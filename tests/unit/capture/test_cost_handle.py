"""``consistency.cost(usd)``: what the test adds to its repetition, validated, and counted against the budget."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path

import pytest

from pytest_consistency.capture.active import ActiveRepetition, Consistency
from pytest_consistency.capture.wire import exception_kind
from pytest_consistency.shared.ledger import CostBudgetExceeded, Ledger


def handle(ledger: Ledger | None = None) -> tuple[ActiveRepetition, Consistency]:
    state = ActiveRepetition(task_id="t", repeat=1, n=2, marked=True)
    return state, Consistency(state, lambda answer, task: answer, ledger)


def test_amounts_add_up_on_the_repetition() -> None:
    state, consistency = handle()
    consistency.cost(0.1)
    consistency.cost(2)
    consistency.cost(Decimal("0.2"))
    consistency.cost(0)
    assert state.added_cost_usd == 0.1 + 2 + 0.2


@pytest.mark.parametrize("bad", [-0.01, math.nan, math.inf, -math.inf])
def test_a_negative_or_not_finite_amount_is_a_value_error_and_adds_nothing(bad: float) -> None:
    state, consistency = handle()
    with pytest.raises(ValueError, match="finite amount of US dollars of at least 0"):
        consistency.cost(bad)
    assert state.added_cost_usd == 0.0


@pytest.mark.parametrize("bad", ["0.1", None, True, [1]])
def test_what_is_not_a_number_is_a_type_error(bad: object) -> None:
    state, consistency = handle()
    with pytest.raises(TypeError, match="an amount in US dollars"):
        consistency.cost(bad)  # type: ignore[arg-type]
    assert state.added_cost_usd == 0.0


def test_an_added_cost_counts_against_the_cost_budget(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "tokens", None, cost_limit=1.0)
    _, consistency = handle(ledger)
    consistency.cost(0.75)
    ledger.check()
    consistency.cost(0.5)
    with pytest.raises(CostBudgetExceeded) as refused:
        ledger.check()
    assert exception_kind(refused.value) == "cost_budget"
