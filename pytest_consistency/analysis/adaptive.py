"""Adaptive repetitions (``--consistency-adaptive``): stop a task once its verdict can no longer change.

This is curtailment, not a sequential test: a task passes when at least ``need = ceil(min_pass * n)`` of its n
repetitions pass, so once ``need`` passed (pass) or more than ``n - need`` failed (fail) the remaining
repetitions cannot change the verdict and are skipped. A task with ``min_rate`` is decided by exact tests on its
count at n (:mod:`..stats.rate`), monotone in the passes, so it stops once the fewest and the most passes the
remaining repetitions can give reach the same verdict (pass, fail or undecided). The verdicts, and so the exit
status they decide, are exactly those of the full run; the calls of the skipped repetitions are saved. Nothing is
peeked at but the verdict's own arithmetic, so no error rate changes. At the default ``min_pass=1.0`` a task stops
at its first failure; a task that keeps passing runs all n.

The figures of a curtailed task (Mean@k, pass^k, the gap) would come from fewer repetitions than n, so they are
not the figures of the full run: figure gates are refused together with adaptive mode, and the report says how
many repetitions each task used.

This module holds the pure decisions. Repetitions of one task may run on different xdist workers, so the outcomes
so far live on the :class:`~pytest_consistency.shared.board.Board`, shared by every process of the session. A
repetition that started before the verdict was decided still runs and counts. A task that had a repetition skip at
run time is not curtailed (the full run would score it on fewer repetitions); one limit remains: a repetition that
would have skipped after the verdict was decided is never run, so adaptive mode gives the decided verdict where the
full run would call the task incomplete.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Literal

#: Gates that read only verdict-independent facts, and so may be combined with adaptive mode.
ADAPTIVE_GATES = frozenset({"route_drift_max"})


def refused_with_adaptive(
    thresholds: Mapping[str, float | None], suite_regression: bool, who: str, mode: str = "--consistency-adaptive"
) -> str | None:
    """Why the gates set in ``thresholds`` (by gate dest) cannot be decided on adaptive runs, or None.

    One rule for pytest (``--consistency-adaptive`` or ``--consistency-sequential`` with a figure gate is a usage
    error) and for ``pytest-consistency merge`` of such shards, which must refuse what pytest refuses. ``who`` starts
    the sentence: "--consistency-adaptive" or "the reports ran with --consistency-adaptive, which"; ``mode`` is the
    option to drop.
    """
    from pytest_consistency.analysis.gates import ALL_GATES, SUITE_REGRESSION_FLAG

    refused = [g.flag for g in ALL_GATES if g.dest not in ADAPTIVE_GATES and thresholds.get(g.dest) is not None]
    if suite_regression:
        refused.append(SUITE_REGRESSION_FLAG)
    if not refused:
        return None
    return (
        f"{who} stops a task once its verdict is decided, so its figures come from fewer than n repetitions; "
        f"{', '.join(refused)} would gate on them. Drop {mode} to gate on figures, or gate on "
        "verdicts (min_pass, min_rate) and --route-drift-max only."
    )


@functools.lru_cache(maxsize=256)
def required_passes(n: int, min_pass: float) -> int:
    """Passes a task needs out of n: ``ceil(min_pass * n)``, computed exactly on the decimal the user wrote.

    ``repr`` of a float is the shortest decimal that reads back as it, so ``0.6`` is 3/5 (not the float just below,
    whose product with 5 is 3.0000000000000004) and ``0.50000000004`` stays above 1/2. The full run decides with
    the same function (:func:`passes_as_a_whole`), so adaptive mode and the full run never disagree.
    """
    return max(0, math.ceil(Fraction(repr(float(min_pass))) * n))


def passes_as_a_whole(passes: int, scored: int, min_pass: float) -> bool:
    """The verdict of a task that ran to the end: at least :func:`required_passes` of its scored repetitions."""
    return passes >= required_passes(scored, min_pass)


def verdict_at_n(
    passes: int, n: int, min_pass: float, min_rate: float | None = None, alpha: float = 0.05
) -> Literal["pass", "fail", "undecided"]:
    """The verdict of a task that ran to the end: ``min_rate`` on exact tests at ``alpha`` when set (PASS, FAIL or
    UNDECIDED), else ``min_pass`` on the count (pass or fail)."""
    if min_rate is not None:
        from pytest_consistency.stats.rate import rate_verdict

        return rate_verdict(passes, n, min_rate, alpha)
    return "pass" if passes_as_a_whole(passes, n, min_pass) else "fail"


def decided(
    passes: int, failures: int, n: int, min_pass: float, min_rate: float | None = None, alpha: float = 0.05
) -> Literal["pass", "fail", "undecided"] | None:
    """The task's verdict when the repetitions still to run cannot change it, else None."""
    if min_rate is not None:
        from pytest_consistency.stats.rate import settled

        return settled(passes, failures, n, min_rate, alpha)
    need = required_passes(n, min_pass)
    if passes >= need:
        return "pass"
    if failures > n - need:
        return "fail"
    return None


def expected_repetitions(
    rate: float, n: int, min_pass: float, min_rate: float | None = None, alpha: float = 0.05
) -> float:
    """The mean repetitions curtailment runs of a task of n whose repetitions pass with chance ``rate``: exact, a
    sum over the count paths (passes, failures) of the chance of reaching each one still undecided
    (:func:`decided`), each such path running one more repetition. The plan prices a curtailed task with it, and
    the sequential benchmark compares against it."""
    total = 0.0
    mass = {(0, 0): 1.0}
    while mass:
        following: dict[tuple[int, int], float] = {}
        for (passes, failures), chance in mass.items():
            if decided(passes, failures, n, min_pass, min_rate, alpha) is not None:
                continue
            total += chance
            for step, q in (((passes + 1, failures), rate), ((passes, failures + 1), 1.0 - rate)):
                if q:
                    following[step] = following.get(step, 0.0) + chance * q
        mass = following
    return total
