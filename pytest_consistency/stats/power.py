"""How often each regression test flags a change, by seeded simulation: to choose between them, and to check levels.

It exists because the three tests answer different questions and see different regressions: per-task exact tests
with Benjamini–Hochberg (:mod:`.significance`) name the task that collapsed but miss an agent that got a little worse
everywhere; the exact stratified test (:mod:`.stratified`) sees the suite-wide drop; McNemar on pass^n flips sees
tasks leaving the all-pass state. :func:`simulate` runs two independent runs of T tasks with the given true pass
rates, n repetitions each, ``reps`` times from ``random.Random(seed)``, and counts how often each test fires at
one-sided level ``alpha``. With equal rates it is the A/A false-alarm rate. Deterministic; standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from pytest_consistency.stats.binomial import check_positive_int
from pytest_consistency.stats.choices import TESTS
from pytest_consistency.stats.significance import benjamini_hochberg, mcnemar_one_sided, one_sided_p
from pytest_consistency.stats.stratified import Stratum, stratified_p_value


@dataclass(frozen=True)
class Rates:
    """Share of simulated pairs of runs in which each test fired."""

    stratified: float
    mcnemar: float
    per_task: float
    reps: int


def _draw(rng: random.Random, n: int, rates: Sequence[float]) -> list[int]:
    return [sum(rng.random() < p for _ in range(n)) for p in rates]


def simulate(
    baseline: Sequence[float],
    current: Sequence[float],
    n: int,
    reps: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    test: str = "boschloo",
) -> Rates:
    """How often the stratified test, McNemar on pass^n flips and the per-task test (BH at ``alpha``) fire."""
    check_positive_int("n", n)
    check_positive_int("reps", reps)
    if len(baseline) != len(current) or not baseline:
        raise ValueError(f"baseline and current need one rate per task, got {len(baseline)} and {len(current)}")
    for p in (*baseline, *current):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"pass rates must be within [0, 1], got {p!r}")
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    rng = random.Random(seed)
    level = Fraction(alpha)
    fired = [0, 0, 0]
    for _ in range(reps):
        before, after = _draw(rng, n, baseline), _draw(rng, n, current)
        pairs = list(zip(before, after, strict=True))
        fired[0] += stratified_p_value([Stratum(a, n, b, n) for a, b in pairs]) <= level
        worse = sum(1 for a, b in pairs if a == n and b < n)
        better = sum(1 for a, b in pairs if a < n and b == n)
        fired[1] += worse + better > 0 and mcnemar_one_sided(worse, better) <= alpha
        q = benjamini_hochberg([one_sided_p(test, a, n, b, n) for a, b in pairs])
        fired[2] += any(qi <= alpha + 1e-12 and b < a for qi, (a, b) in zip(q, pairs, strict=True))
    return Rates(stratified=fired[0] / reps, mcnemar=fired[1] / reps, per_task=fired[2] / reps, reps=reps)
