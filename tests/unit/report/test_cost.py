"""The cost's words (``report/cost.py``): a lower bound says "at least", and a session where nothing was priced
says the cost is unknown and why, once, instead of "at least $0.00"."""

from __future__ import annotations

from pytest_consistency.model.result import CostFacts
from pytest_consistency.report.cost import headline, unknown, unpriced_lines


def facts(usd: float, unpriced: int, models: list[str], added: float = 0.0) -> CostFacts:
    return CostFacts(
        usd=usd,
        calls_usd=usd - added,
        added_usd=added,
        unpriced_calls=unpriced,
        unpriced_models=models,
        per_task=usd / 2,
        per_repetition=usd / 4,
        decided=1,
        per_decided_verdict=usd,
        prices_as_of="2026-12-07",
    )


def test_nothing_priced_is_an_unknown_cost_named_once() -> None:
    cost = facts(0.0, 5, ["fake-model"])
    assert unknown(cost)
    assert headline(cost) == (
        "cost unknown (5 call(s)): no price for model fake-model: add it under prices: in consistency.yaml"
    )
    assert unpriced_lines(cost) == []  # the headline said it


def test_several_models_without_a_price_are_named_together() -> None:
    cost = facts(0.0, 3, ["a", "b"])
    assert (
        headline(cost)
        == "cost unknown (3 call(s)): no price for models a, b: add them under prices: in consistency.yaml"
    )


def test_a_partly_priced_session_is_a_lower_bound_with_each_model_named() -> None:
    cost = facts(0.5, 2, ["fake-model"], added=0.5)
    assert not unknown(cost)
    assert headline(cost).startswith("cost at least $0.50 (2 call(s) unpriced), of which $0.50 added by tests")
    assert unpriced_lines(cost) == ["no price for model fake-model: add it under prices: in consistency.yaml"]


def test_a_priced_session_is_its_amount() -> None:
    cost = facts(0.04, 0, [])
    assert not unknown(cost) and headline(cost).startswith("cost $0.04")
