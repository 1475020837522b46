"""How often samples of one rater on one subject disagree: the flip rate, and Fleiss' kappa with its bootstrap.

Each subject (a recorded repetition) is rated by m_i samples (a judge asked m_i times on the same agent output) in two
categories (pass, fail). Its **disagreement** is the share of its m_i (m_i - 1) / 2 sample pairs that disagree:
p_i (m_i - p_i) / C(m_i, 2) with p_i passes, an unbiased estimate of the chance that two fresh samples disagree
(2 q (1 - q) for a judge failing with probability q independently). The **flip rate** is its mean over subjects.

Its interval: with exactly two samples per subject each disagreement is one Bernoulli trial, so the count of
disagreeing subjects is binomial and Clopper-Pearson is exact; otherwise the disagreements are independent values in
[0, 1] (one per subject) and Hoeffding's interval (:mod:`.bounded`) holds for any distribution. Given each subject's
samples in the order they were drawn, the first two of each are again one Bernoulli trial with the same chance (the
samples of a subject are exchangeable), so Clopper-Pearson on the first pairs is exact too; both intervals are then
taken at half the miss rate each and intersected (a miss of the intersection is a miss of one of them: Bonferroni),
which keeps Hoeffding's use of every sample where it is narrow and the exact binomial's where the few subjects make
Hoeffding wide (10 subjects: +-0.47 for Hoeffding at 95 %, against about +-0.3 for the first pairs).

**Fleiss' kappa** (Fleiss 1971, with the per-subject agreement of subjects of unequal m_i): (P - Pe) / (1 - Pe), P
the mean pairwise agreement, Pe = sum_j p_j^2 over the categories' pooled shares; undefined (None) when every sample
gave one category (Pe = 1). Its interval: percentile bootstrap over subjects, seeded by the caller; replicates in
which kappa is undefined are left out (counted). Standard library only.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from pytest_consistency.stats.binomial import clopper_pearson
from pytest_consistency.stats.bounded import mean_interval
from pytest_consistency.stats.interval import Interval

#: One subject: (passes, samples).
Subject = tuple[int, int]


def disagreement(passes: int, samples: int) -> float:
    """The share of a subject's sample pairs that disagree (None-free: at least two samples)."""
    if samples < 2 or not 0 <= passes <= samples:
        raise ValueError(f"disagreement needs 0 <= passes <= samples and samples >= 2, got {passes}/{samples}")
    return passes * (samples - passes) / (samples * (samples - 1) / 2)


def flip_rate(
    subjects: Sequence[Subject], confidence: float = 0.95, first_pairs: Sequence[bool | None] | None = None
) -> tuple[float, Interval, str] | None:
    """The mean disagreement over the subjects with at least two samples, its interval and the interval's method:
    ``clopper-pearson`` when every such subject has exactly two samples; else ``hoeffding``, or with
    ``first_pairs`` (per subject, aligned with ``subjects``: whether its first two samples disagree, None with fewer
    than two) ``hoeffding & first pairs`` (see the module docstring); None without a subject of two samples."""
    rated = [(index, p, m) for index, (p, m) in enumerate(subjects) if m >= 2]
    if not rated:
        return None
    values = [disagreement(p, m) for _, p, m in rated]
    mean = math.fsum(values) / len(values)
    if all(m == 2 for _, _, m in rated):
        return mean, clopper_pearson(sum(1 for v in values if v), len(values), confidence), "clopper-pearson"
    if first_pairs is None:
        found = mean_interval(values, confidence)
        assert found is not None
        return mean, found[1], "hoeffding"
    pairs = [first_pairs[index] for index, _, _ in rated]
    if any(pair is None for pair in pairs):
        raise ValueError("first_pairs: every subject with two samples or more needs its first pair")
    halved = 1.0 - (1.0 - confidence) / 2
    found = mean_interval(values, halved)
    assert found is not None
    exact = clopper_pearson(sum(1 for pair in pairs if pair), len(pairs), halved)
    # Widened to hold the estimate (a superset keeps the coverage): the first pairs alone may sit away from it.
    low = min(max(found[1].low, exact.low), mean)
    high = max(min(found[1].high, exact.high), mean)
    return mean, Interval(low, high), "hoeffding & first pairs"


def fleiss_kappa(subjects: Sequence[Subject]) -> float | None:
    """Fleiss' kappa of two categories over the subjects with at least two samples; None when undefined."""
    rated = [(p, m) for p, m in subjects if m >= 2]
    if not rated:
        return None
    agreement = math.fsum(1.0 - disagreement(p, m) for p, m in rated) / len(rated)
    total = sum(m for _, m in rated)
    share = sum(p for p, _ in rated) / total
    expected = share**2 + (1.0 - share) ** 2
    if expected >= 1.0:
        return None
    return (agreement - expected) / (1.0 - expected)


def kappa_interval(
    subjects: Sequence[Subject], seed: int, confidence: float = 0.95, draws: int = 2000
) -> tuple[Interval, int] | None:
    """Percentile bootstrap interval of Fleiss' kappa over subjects, and how many replicates were undefined (left
    out); None when kappa itself is undefined or fewer than half the replicates are defined."""
    rated = [(p, m) for p, m in subjects if m >= 2]
    if fleiss_kappa(rated) is None:
        return None
    rng = random.Random(seed)
    values: list[float] = []
    undefined = 0
    for _ in range(draws):
        value = fleiss_kappa([rated[rng.randrange(len(rated))] for _ in rated])
        if value is None:
            undefined += 1
        else:
            values.append(value)
    if len(values) < draws / 2:
        return None
    values.sort()
    tail = (1.0 - confidence) / 2.0
    low = values[max(0, math.floor(tail * len(values)))]
    high = values[min(len(values) - 1, math.ceil((1.0 - tail) * len(values)) - 1)]
    return Interval(low, high), undefined
