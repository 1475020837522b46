"""The cost options: prices per model from YAML or the command line, and the cost budget."""

from __future__ import annotations

import math

import pytest

from pytest_consistency.config.options import BY_DEST, OPTIONS
from pytest_consistency.config.options_cost import COST_OPTIONS
from pytest_consistency.config.parse import SettingError
from pytest_consistency.model.prices import Price

PRICES = BY_DEST["consistency_prices"]


def test_the_cost_options_are_in_the_table_with_their_flags_and_yaml_keys() -> None:
    assert all(option in OPTIONS for option in COST_OPTIONS)
    assert (PRICES.flag, PRICES.yaml_key, PRICES.is_list) == ("--consistency-price", "prices", True)
    budget = BY_DEST["consistency_cost_budget"]
    # beside the token budget (route.token_budget), as its twin
    assert (budget.flag, budget.yaml_key) == ("--consistency-cost-budget", "route.cost_budget")
    assert budget.parse("0.50") == 0.5
    for bad in ("0", "-1", "nan", "inf", "a dollar"):
        with pytest.raises(SettingError):
            budget.parse(bad)


def test_a_yaml_mapping_gives_a_price_per_model() -> None:
    parsed = PRICES.parse(
        {
            "gpt-4o-mini": {"input": 0.15, "output": 0.6, "cached_input": 0.075},
            "claude-x": {"input": 3, "output": 15, "cached_input": 0.3, "cache_write": 3.75},
            "no-cache": {"input": 1, "output": 2},
        }
    )
    assert parsed == (
        ("gpt-4o-mini", Price(0.15, 0.6, 0.075)),
        ("claude-x", Price(3.0, 15.0, 0.3, 3.75)),
        ("no-cache", Price(1.0, 2.0, 1.0)),  # no cache discount unless one is given
    )


def test_the_command_line_gives_model_equals_prices() -> None:
    assert PRICES.parse(["gpt-x=1,2", "m-1=0.1, 0.4, 0.05"]) == (
        ("gpt-x", Price(1.0, 2.0, 1.0)),
        ("m-1", Price(0.1, 0.4, 0.05)),
    )
    assert PRICES.parse("a=1,2\nb=3,4,1,5") == (("a", Price(1.0, 2.0, 1.0)), ("b", Price(3.0, 4.0, 1.0, 5.0)))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"m": {"input": 1}}, "m: output missing"),
        ({"m": {"input": 1, "output": 2, "cached": 1}}, "unknown field.*cached"),
        ({"m": {"input": -1, "output": 2}}, "m: -1 must not be negative"),
        ({"m": {"input": math.nan, "output": 2}}, "not a finite number"),
        ({"m": 0.15}, "expected a mapping"),
        ("gpt-x=1", "is not MODEL=INPUT,OUTPUT"),
        ("gpt-x", "is not MODEL=INPUT,OUTPUT"),
        ("=1,2", "is not a model name"),
        (3, "is not MODEL=INPUT,OUTPUT"),
    ],
)
def test_a_price_that_cannot_be_used_is_refused_naming_the_model(raw: object, message: str) -> None:
    with pytest.raises(SettingError, match=message):
        PRICES.parse(raw)
