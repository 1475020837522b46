"""The distribution of the decision at the resampled step, and the pass rate after each decision.

Why pure: it is the figure the resample session exists for, so it is computed from plain records (each sample's
decision key and label at step STEP, and whether the sample passed) and tested with known counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pytest_consistency.model.resample import DecisionRow

#: The key of a sample that made fewer than STEP calls: it stopped before the resampled step.
NO_STEP = "none"


@dataclass(frozen=True)
class Sample:
    """One resampled repetition: its decision at step STEP (key for counting, label for showing), its outcome."""

    key: str
    label: str
    passed: bool


def rows(samples: Iterable[Sample]) -> list[DecisionRow]:
    """One row per distinct decision key: most samples first, then most passes, then the key (a stable order, so
    that a serial run and ``-n 2`` print the same table)."""
    table: dict[str, DecisionRow] = {}
    for sample in samples:
        row = table.setdefault(sample.key, DecisionRow(sample.key, sample.label, 0, 0))
        row.samples += 1
        row.passed += int(sample.passed)
    return sorted(table.values(), key=lambda r: (-r.samples, -r.passed, r.key))


def sample_of(decision_key: str | None, decision_label: str | None, step: int, passed: bool) -> Sample:
    """A sample from its step-STEP decision; a sample that never reached the step is its own decision."""
    if decision_key is None:
        return Sample(NO_STEP, f"(stopped before step {step})", passed)
    return Sample(decision_key, decision_label or decision_key, passed)
