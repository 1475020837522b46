"""Statistics for gating on few repetitions: exact per-task intervals and tests, suite intervals, planning.

It exists because with n = 3..10 repetitions per task the raw Mean@k, pass^k and gap are noisy and a gate needs to
know whether a difference is real. Everything here is a pure, deterministic function of success counts, written
with the standard library only (no numpy/scipy at run time). Rates are fractions in [0, 1]; gaps are in
percentage points. Each module states its own assumptions.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: Where each public name lives. Imported on first use (PEP 562): the option table reads ``TESTS`` and
#: ``TARGETS`` when the plugin loads, and the interval and test code is only needed at the end of a session.
_HOMES = {
    "clopper_pearson": "binomial",
    "pass_hat_k_interval": "binomial",
    "runs_to_certify": "binomial",
    "Interval": "interval",
    "repetitions_for_drop": "planning",
    "fresh_run_repetitions": "planning",
    "rate_verdict": "rate",
    "planning_n": "rate",
    "TESTS": "choices",
    "benjamini_hochberg": "significance",
    "boschloo_one_sided": "significance",
    "fisher_one_sided": "significance",
    "mcnemar_one_sided": "significance",
    "minimum_detectable_drop": "significance",
    "one_sided_p": "significance",
    "Stratum": "stratified",
    "StratifiedDrop": "stratified",
    "stratified_drop": "stratified",
    "simulate_power": "power",
    "TARGETS": "choices",
    "SuiteIntervals": "suite",
    "paired_gap_difference": "gap_change",
    "suite_intervals": "suite",
}

__all__ = [
    "TARGETS",
    "TESTS",
    "Interval",
    "StratifiedDrop",
    "Stratum",
    "SuiteIntervals",
    "benjamini_hochberg",
    "boschloo_one_sided",
    "clopper_pearson",
    "fisher_one_sided",
    "fresh_run_repetitions",
    "mcnemar_one_sided",
    "minimum_detectable_drop",
    "one_sided_p",
    "paired_gap_difference",
    "pass_hat_k_interval",
    "planning_n",
    "rate_verdict",
    "repetitions_for_drop",
    "runs_to_certify",
    "simulate_power",
    "stratified_drop",
    "suite_intervals",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pytest_consistency.stats' has no attribute {name!r}")
    attribute = "simulate" if name == "simulate_power" else name
    return getattr(import_module(f".{home}", __name__), attribute)
