"""The options of what a session costs in US dollars: the price table's entries, the cost budget and the plan before
the run (docs/cost.md).

A group of the option table (:mod:`.options` joins it into ``OPTIONS``), declared here as the table's module is at its
length limit. Like the table's, its options are attributes of a class (``CostOptions``, which ``Settings`` inherits):
a plain class, no dataclass (see :mod:`.options`).
"""

from __future__ import annotations

from pytest_consistency.config.option import Option, options_of
from pytest_consistency.config.parse import choice, positive_number, price_entries


class CostOptions:
    """The options of what a session costs."""

    prices: Option[tuple[tuple[str, tuple[float, float, float, float | None]], ...]] = Option(
        "--consistency-price",
        ("prices",),
        price_entries,
        "price of a model in US dollars per million tokens, over the shipped table's entry (or a model it lacks); "
        "in YAML a mapping prices: {MODEL: {input, output, cached_input}}; given on the command line, these entries "
        "replace the YAML's",
        metavar="MODEL=INPUT,OUTPUT[,CACHED_INPUT]",
        default=(),
        is_list=True,
    )
    cost_budget: Option[float | None] = Option(
        "--consistency-cost-budget",
        ("route", "cost_budget"),
        positive_number,
        "stop making live calls once the session's calls (priced from the price table) and the costs its tests "
        "added (consistency.cost) came to more than USD US dollars, and fail the session",
        metavar="USD",
    )
    plan: Option[bool] = Option(
        "--consistency-plan",
        ("plan",),
        choice("true", "false"),
        "collect, print the plan of the run and exit without running a test: per task and gate the chance of a "
        "decided verdict at the marker's n, the n that would decide it, and the expected repetitions, tokens, "
        "dollars and minutes, from the last report (--consistency-report) and the gates set",
        is_flag=True,
    )


COST_OPTIONS = options_of(CostOptions)
