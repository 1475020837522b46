"""Curtailment: a verdict is declared decided only when no outcome of the remaining repetitions could change it."""

from __future__ import annotations

from itertools import product

import pytest

from pytest_consistency.analysis.adaptive import decided, required_passes


@pytest.mark.parametrize(
    ("n", "min_pass", "need"), [(5, 1.0, 5), (5, 0.6, 3), (5, 0.0, 0), (3, 0.5, 2), (10, 0.7, 7), (5, 0.2, 1)]
)
def test_required_passes(n: int, min_pass: float, need: int) -> None:
    assert required_passes(n, min_pass) == need


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("min_pass", [0.0, 0.2, 0.5, 0.6, 0.8, 1.0])
def test_a_decided_verdict_is_the_full_runs_verdict_for_every_continuation(n: int, min_pass: float) -> None:
    """Exhaustive: for every prefix of outcomes that is declared decided, every completion ends the same way."""
    need = required_passes(n, min_pass)
    for outcomes in product([True, False], repeat=n):
        final = "pass" if sum(outcomes) >= need else "fail"
        for r in range(n + 1):
            prefix = outcomes[:r]
            verdict = decided(sum(prefix), r - sum(prefix), n, min_pass)
            if verdict is not None:
                assert verdict == final, (outcomes, r)
        # and the full run is always decided
        assert decided(sum(outcomes), n - sum(outcomes), n, min_pass) == final


def test_default_min_pass_stops_at_the_first_failure_and_never_early_on_passes() -> None:
    assert decided(0, 1, 5, 1.0) == "fail"
    assert decided(4, 0, 5, 1.0) is None
    assert decided(5, 0, 5, 1.0) == "pass"
