"""What a model call costs in US dollars: the price table and the rule that finds a model's entry.

A price is per million tokens, for input, output and cached input (prompt tokens read from the provider's prompt
cache), and for Anthropic's cache writes (``cache_write``; priced as input when absent). The plugin ships
:data:`DEFAULT_PRICES` (dated :data:`PRICES_AS_OF`); ``prices:`` in consistency.yaml (or ``--consistency-price``)
overrides it entry by entry and adds models (docs/cost.md).

**Which entry.** A call is priced at the model its response names (``model_served``), else the one it asked for.
The name is looked up as it is, then lower-cased, then without a dated snapshot suffix (``-2024-07-18`` or
``-20241022``): ``gpt-4o-mini-2024-07-18`` finds ``gpt-4o-mini`` and ``claude-3-5-haiku-20241022`` finds
``claude-3-5-haiku``. An entry for the dated name itself wins over the undated one. Nothing else is guessed: a model
with no entry is *unpriced*, never priced at zero, and every total says how many calls it leaves out.

**What is counted.** OpenAI counts cached prompt tokens inside ``prompt_tokens`` (``cached_prompt_tokens`` is that
part); Anthropic reports ``input_tokens`` apart from cache reads (``cache_read_tokens``) and writes. A call with no
tokens (an error, a refused call, a ``GET /models``) costs nothing whatever its model.

Sums are exact: each call's cost is computed in decimal and rounded once to a float, and every total is
:func:`math.fsum` of those floats, correctly rounded whatever the order, so shards merged add up to the figure one
unsharded run gives.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import NamedTuple

from pytest_consistency.model.records import CallRecord

#: The date the shipped table was last checked: against LiteLLM 1.108.7's ``model_prices_and_context_window.json``
#: (a price list the LiteLLM project keeps from the providers' pages; ``tests/unit/model/test_prices.py`` compares
#: every entry with it where the tests' LiteLLM venv is installed).
PRICES_AS_OF = "2026-12-07"
#: The words every output uses for a model with no price (``{model}`` is its name).
NO_PRICE = "no price for model {model}: add it under prices: in consistency.yaml"

_MILLION = Decimal(1_000_000)
#: A dated snapshot at the end of a model id: ``-2024-07-18`` (OpenAI) or ``-20241022`` (Anthropic).
_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8})$")


class Price(NamedTuple):
    """US dollars per million tokens."""

    input: float
    output: float
    cached_input: float
    #: Tokens written to the prompt cache (Anthropic's ``cache_creation_input_tokens``); None: priced as input.
    cache_write: float | None = None


PriceTable = Mapping[str, Price]

#: The shipped table (per million tokens; standard tier, no batch discount). Anthropic's cache writes are the
#: five-minute cache's (1.25 x input).
DEFAULT_PRICES: dict[str, Price] = {
    # OpenAI
    "gpt-5": Price(1.25, 10.00, 0.125),
    "gpt-5-mini": Price(0.25, 2.00, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "o3": Price(2.00, 8.00, 0.50),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "text-embedding-3-small": Price(0.02, 0.0, 0.02),
    "text-embedding-3-large": Price(0.13, 0.0, 0.13),
    # Anthropic
    "claude-opus-4-5": Price(5.00, 25.00, 0.50, 6.25),
    "claude-opus-4-1": Price(15.00, 75.00, 1.50, 18.75),
    "claude-sonnet-4-5": Price(3.00, 15.00, 0.30, 3.75),
    "claude-sonnet-4": Price(3.00, 15.00, 0.30, 3.75),
    "claude-haiku-4-5": Price(1.00, 5.00, 0.10, 1.25),
    "claude-3-5-haiku": Price(0.80, 4.00, 0.08, 1.00),
}


def price_table(overrides: Iterable[tuple[str, tuple[float, float, float, float | None]]] = ()) -> dict[str, Price]:
    """The shipped table with ``overrides`` (``prices:``: model, then input, output, cached input and cache write
    per million tokens) put over it, entry by entry."""
    table = dict(DEFAULT_PRICES)
    table.update((model, Price(*values)) for model, values in overrides)
    return table


def lookup(table: PriceTable, model: str) -> Price | None:
    """The price of ``model`` by the rule of the module docstring, else None."""
    for name in (model, model.lower()):
        if name in table:
            return table[name]
    undated = _SNAPSHOT.sub("", model.lower())
    return table.get(undated) if undated != model.lower() else None


def priced_model(call: CallRecord) -> str | None:
    """The model a call is priced at: the one its response names, else the one it asked for."""
    return call.model_served or call.model_requested


def _usd(tokens: int, per_million: float) -> Decimal:
    return Decimal(tokens) * Decimal(repr(per_million)) / _MILLION if tokens else Decimal(0)


def call_cost(call: CallRecord, table: PriceTable) -> float | None:
    """What one attempt cost in US dollars, from its own usage and its own model; None when it used tokens of a
    model with no price (0.0 when it used none)."""
    written = call.cache_creation_tokens
    if not (call.prompt_tokens or call.completion_tokens or call.cache_read_tokens or written):
        return 0.0
    model = priced_model(call)
    price = lookup(table, model) if model else None
    if price is None:
        return None
    # OpenAI's prompt tokens include its cached ones; Anthropic's input tokens leave its cache reads and writes out.
    cached = call.cache_read_tokens + min(call.cached_prompt_tokens, call.prompt_tokens)
    fresh = call.prompt_tokens - min(call.cached_prompt_tokens, call.prompt_tokens)
    total = (
        _usd(fresh, price.input)
        + _usd(cached, price.cached_input)
        + _usd(written, price.input if price.cache_write is None else price.cache_write)
        + _usd(call.completion_tokens, price.output)
    )
    return float(total)


def price_calls(calls: Iterable[CallRecord], table: PriceTable) -> None:
    """Set ``cost_usd`` on every call not priced yet (a replayed call is priced as its recording was)."""
    for call in calls:
        if call.cost_usd is None:
            call.cost_usd = call_cost(call, table)


def unpriced(call: CallRecord) -> bool:
    """The call used tokens and has no price (its model has no entry, or it was never priced)."""
    return call.cost_usd is None and bool(
        call.prompt_tokens or call.completion_tokens or call.cache_read_tokens or call.cache_creation_tokens
    )


def total(amounts: Iterable[float]) -> float:
    """The correctly rounded sum (:func:`math.fsum`): the same whatever the order the amounts come in."""
    return math.fsum(amounts)


def usd_text(amount: float) -> str:
    """Dollars as every output prints them: cents from a dollar up, four decimals from a cent, and below a cent the
    digits it needs (``$0.00045``)."""
    if amount == 0:
        return "$0.00"
    if abs(amount) >= 1:
        return f"${amount:,.2f}"
    if abs(amount) >= 0.01:
        cents, fraction = f"{amount:.4f}".split(".")
        return f"${cents}.{fraction[:2]}{fraction[2:].rstrip('0')}"
    return f"${amount:.2g}" if abs(amount) < 1e-6 else f"${amount:.6f}".rstrip("0")
