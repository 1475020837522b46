"""Statistics for gating on few repetitions: exact per-task intervals and tests, suite intervals, planning.

It exists because with n = 3..10 repetitions per task the raw Mean@k, pass^k and gap are noisy and a gate needs to
know whether a difference is real. Everything here is a pure, deterministic function of success counts, written
with the standard library only (no numpy/scipy at run time). Rates are fractions in [0, 1]; gaps are in
percentage points. Each module states its own assumptions.
"""

from __future__ import annotations

from pytest_consistency.stats.binomial import clopper_pearson, pass_hat_k_interval, runs_to_certify
from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.planning import repetitions_for_drop, repetitions_to_decide
from pytest_consistency.stats.significance import (
    TESTS,
    benjamini_hochberg,
    boschloo_one_sided,
    fisher_one_sided,
    mcnemar_one_sided,
    minimum_detectable_drop,
    one_sided_p,
)
from pytest_consistency.stats.suite import TARGETS, SuiteIntervals, paired_gap_difference, suite_intervals

__all__ = [
    "TARGETS",
    "TESTS",
    "Interval",
    "SuiteIntervals",
    "benjamini_hochberg",
    "boschloo_one_sided",
    "clopper_pearson",
    "fisher_one_sided",
    "mcnemar_one_sided",
    "minimum_detectable_drop",
    "one_sided_p",
    "paired_gap_difference",
    "pass_hat_k_interval",
    "repetitions_for_drop",
    "repetitions_to_decide",
    "runs_to_certify",
    "suite_intervals",
]
