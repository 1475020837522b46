"""What a session cost in US dollars, from its repetitions: per repetition, per task and for the session.

Each call carries its own price (``CallRecord.cost_usd``, set from the session's price table where the calls are
summarised: :func:`..model.prices.price_calls`) and each repetition what its test added (``added_cost_usd``,
``consistency.cost``). Every figure here is an exact sum of those (:func:`math.fsum`), so a merge of shards gives
the unsharded run's dollars to the last bit, and a call with no price is counted, never priced at zero.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytest_consistency.model.prices import PRICES_AS_OF, priced_model, total, unpriced
from pytest_consistency.model.records import RepetitionResult
from pytest_consistency.model.result import CostFacts, TaskResult

#: Outcomes of repetitions that did not run: no share of the dollars per repetition.
NOT_RAN = ("not run", "curtailed")


def repetition_cost(repetition: RepetitionResult) -> None:
    """Set the repetition's ``cost_usd`` (its priced calls and what its test added) and ``unpriced_calls``."""
    repetition.cost_usd = total(
        [*(c.cost_usd for c in repetition.calls if c.cost_usd is not None), repetition.added_cost_usd]
    )
    repetition.unpriced_calls = sum(1 for c in repetition.calls if unpriced(c))


def task_cost(task: TaskResult) -> None:
    """Set the task's ``cost_usd`` and ``unpriced_calls`` from its repetitions' calls and added costs."""
    for repetition in task.repetitions:
        repetition_cost(repetition)
    task.cost_usd = total(_amounts(task.repetitions))
    task.unpriced_calls = sum(r.unpriced_calls for r in task.repetitions)


def _amounts(repetitions: Iterable[RepetitionResult]) -> list[float]:
    """Every priced call's cost and every added cost, one by one: sums of sums would round twice."""
    amounts: list[float] = []
    for repetition in repetitions:
        amounts.extend(c.cost_usd for c in repetition.calls if c.cost_usd is not None)
        if repetition.added_cost_usd:
            amounts.append(repetition.added_cost_usd)
    return amounts


def cost_facts(tasks: list[TaskResult]) -> CostFacts | None:
    """The session's dollars; None when no call used a token and no test added a cost (nothing to price)."""
    repetitions = [r for t in tasks for r in t.repetitions]
    calls = [c for r in repetitions for c in r.calls]
    used = [c for c in calls if c.cost_usd or unpriced(c)]
    added = [r.added_cost_usd for r in repetitions if r.added_cost_usd]
    if not used and not added:
        return None
    usd = total(_amounts(repetitions))
    ran = [r for r in repetitions if r.outcome not in NOT_RAN]
    tasks_ran = {r.task_id for r in ran}
    decided = sum(1 for t in tasks if t.verdict in ("pass", "fail"))
    missing = [c for c in calls if unpriced(c)]
    return CostFacts(
        usd=usd,
        calls_usd=total(c.cost_usd for c in calls if c.cost_usd is not None),
        added_usd=total(added),
        unpriced_calls=len(missing),
        unpriced_models=sorted({priced_model(c) or "(none named)" for c in missing}),
        per_task=usd / len(tasks_ran) if tasks_ran else None,
        per_repetition=usd / len(ran) if ran else None,
        decided=decided,
        per_decided_verdict=usd / decided if decided else None,
        prices_as_of=PRICES_AS_OF,
    )
