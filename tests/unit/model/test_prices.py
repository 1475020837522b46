"""The price of a call: exact figures, the rule that finds a model's entry, and a model with no price."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_consistency.capture.wire import apply_payload
from pytest_consistency.model.prices import (
    DEFAULT_PRICES,
    PRICES_AS_OF,
    Price,
    call_cost,
    lookup,
    price_calls,
    price_table,
    total,
    unpriced,
    usd_text,
)
from pytest_consistency.model.records import CallRecord

TABLE = {"gpt-4o-mini": Price(0.15, 0.60, 0.075), "claude-x": Price(3.0, 15.0, 0.30, 3.75)}


def call(model: str | None = "gpt-4o-mini", served: str | None = None, **tokens: int) -> CallRecord:
    record = CallRecord("POST", "http://h/v1/chat/completions", "http://h/v1", None, model, model_served=served)
    for name, value in tokens.items():
        setattr(record, name, value)
    return record


def test_1000_input_and_500_output_tokens_at_15_and_60_cents_a_million_cost_45_millionths() -> None:
    assert call_cost(call(prompt_tokens=1000, completion_tokens=500), TABLE) == 0.00045


def test_openai_cached_tokens_are_part_of_the_prompt_and_priced_at_the_cached_rate() -> None:
    record = call()
    apply_payload(
        record,
        {
            "model": "gpt-4o-mini",
            "usage": {
                "prompt_tokens": 2000,
                "completion_tokens": 100,
                "total_tokens": 2100,
                "prompt_tokens_details": {"cached_tokens": 1024},
            },
        },
    )
    assert record.cached_prompt_tokens == 1024 and record.total_tokens == 2100
    # 976 fresh x 0.15 + 1024 cached x 0.075 + 100 x 0.60, per million
    assert call_cost(record, TABLE) == (976 * 0.15 + 1024 * 0.075 + 100 * 0.60) / 1e6 == 0.0002832


def test_the_responses_api_reports_cached_tokens_under_input_tokens_details() -> None:
    record = call()
    usage = {"input_tokens": 10, "output_tokens": 1, "input_tokens_details": {"cached_tokens": 4}}
    apply_payload(record, {"type": "response.completed", "response": {"model": "gpt-4o-mini", "usage": usage}})
    assert record.cached_prompt_tokens == 4


def test_anthropic_cache_reads_and_writes_are_apart_from_input_tokens() -> None:
    record = call("claude-x", prompt_tokens=100, completion_tokens=10, cache_read_tokens=1000)
    record.cache_creation_tokens = 200
    record.provider = "anthropic"
    # 100 x 3 + 1000 x 0.30 + 200 x 3.75 + 10 x 15, per million
    assert call_cost(record, TABLE) == 0.0015


def test_a_cache_write_without_its_own_price_is_priced_as_input() -> None:
    assert call_cost(call(cache_creation_tokens=1_000_000), {"gpt-4o-mini": Price(0.15, 0.6, 0.075)}) == 0.15


def test_the_served_model_is_priced_not_the_one_asked_for() -> None:
    table = {**TABLE, "gpt-4o": Price(2.5, 10.0, 1.25)}
    assert call_cost(call("gpt-4o-mini", served="gpt-4o", prompt_tokens=1_000_000), table) == 2.5
    assert call_cost(call("gpt-4o", served=None, prompt_tokens=1_000_000), table) == 2.5


def test_a_dated_snapshot_finds_its_model_and_a_dated_entry_wins() -> None:
    assert lookup(TABLE, "gpt-4o-mini-2024-07-18") == TABLE["gpt-4o-mini"]
    assert lookup(TABLE, "claude-x-20241022") == TABLE["claude-x"]
    assert lookup(TABLE, "GPT-4o-mini") == TABLE["gpt-4o-mini"]
    dated = {**TABLE, "gpt-4o-mini-2024-07-18": Price(1, 2, 0.5)}
    assert lookup(dated, "gpt-4o-mini-2024-07-18") == Price(1, 2, 0.5)
    # nothing else is guessed: a longer name is another model
    assert lookup(TABLE, "gpt-4o-mini-audio") is None
    assert lookup(TABLE, "gpt-4o") is None
    assert lookup(TABLE, "gpt-4o-mini-2024-07") is None


def test_a_model_with_no_price_is_unpriced_never_zero() -> None:
    record = call("fake-model", prompt_tokens=7, completion_tokens=3)
    assert call_cost(record, TABLE) is None
    price_calls([record], TABLE)
    assert record.cost_usd is None and unpriced(record)


def test_a_call_with_no_tokens_costs_nothing_whatever_its_model() -> None:
    record = call("fake-model")
    price_calls([record], TABLE)
    assert record.cost_usd == 0.0 and not unpriced(record)


def test_a_priced_call_keeps_its_price() -> None:
    record = call(prompt_tokens=1000)
    record.cost_usd = 1.0
    price_calls([record], TABLE)
    assert record.cost_usd == 1.0


def test_the_shipped_table_says_its_date_and_prices_entry_by_entry_overrides() -> None:
    assert PRICES_AS_OF == "2026-12-07"
    assert DEFAULT_PRICES["gpt-4o-mini"] == Price(0.15, 0.60, 0.075)
    table = price_table([("gpt-4o-mini", Price(1.0, 2.0, 0.5)), ("my-model", Price(0.1, 0.2, 0.05))])
    assert table["gpt-4o-mini"] == Price(1.0, 2.0, 0.5) and table["my-model"] == Price(0.1, 0.2, 0.05)
    assert table["gpt-4o"] == DEFAULT_PRICES["gpt-4o"]
    assert "gpt-4o-mini" in DEFAULT_PRICES and DEFAULT_PRICES["gpt-4o-mini"] == Price(0.15, 0.60, 0.075)


@given(st.lists(st.floats(min_value=0, max_value=10, allow_nan=False), max_size=30), st.randoms())
def test_a_total_is_the_same_in_any_order(amounts: list[float], random) -> None:
    shuffled = list(amounts)
    random.shuffle(shuffled)
    assert total(shuffled) == total(amounts) == math.fsum(amounts)


def test_dollars_are_printed_with_the_digits_a_small_amount_needs() -> None:
    assert [usd_text(x) for x in (0.0, 0.00045, 0.0123, 0.02, 0.5, 12.5, 1234.5)] == [
        "$0.00",
        "$0.00045",
        "$0.0123",
        "$0.02",
        "$0.50",
        "$12.50",
        "$1,234.50",
    ]


#: LiteLLM's price list in the LiteLLM venv the tests use (``.ci/run`` makes it; ``tests/support/gateways.py``).
LITELLM_PRICES = sorted(
    (Path(__file__).resolve().parents[3] / ".venv-litellm").glob(
        "lib/python*/site-packages/litellm/model_prices_and_context_window_backup.json"
    )
)


@pytest.mark.skipif(not LITELLM_PRICES, reason="the LiteLLM venv is not installed (.ci/run installs .venv-litellm)")
def test_every_shipped_price_is_litellms() -> None:
    """The shipped table says the date it was checked (``PRICES_AS_OF``) against LiteLLM's price list: each entry is
    LiteLLM's, under the model's own name or its dated (or Bedrock) snapshot's, per million tokens."""
    listed = json.loads(LITELLM_PRICES[0].read_text())
    for model, price in DEFAULT_PRICES.items():
        snapshot = re.compile(rf"(anthropic\.)?{re.escape(model)}-\d{{8}}(-v\d+:\d+)?")
        key = model if model in listed else next((k for k in sorted(listed) if snapshot.fullmatch(k)), None)
        assert key is not None, f"{model} is not in LiteLLM's price list"
        entry = listed[key]
        per_million = {
            name: round(entry[field] * 1_000_000, 6)
            for name, field in [
                ("input", "input_cost_per_token"),
                ("output", "output_cost_per_token"),
                ("cached_input", "cache_read_input_token_cost"),
                ("cache_write", "cache_creation_input_token_cost"),
            ]
            if entry.get(field) is not None
        }
        ours = {name: getattr(price, name) for name in per_million}
        assert ours == pytest.approx(per_million), (model, key)
