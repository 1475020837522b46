"""Curtailment: a verdict is declared decided only when no outcome of the remaining repetitions could change it."""

from __future__ import annotations

from itertools import product

import pytest
from suites import records

from pytest_consistency.analysis.adaptive import decided, required_passes
from pytest_consistency.analysis.summary import build_summary


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


# From test_adaptive_min_pass.py:
# ``min_pass`` is one comparison: adaptive curtailment and the full run give every task the same verdict.
#
# Before, the full run compared ``passes / n >= min_pass - 1e-12`` while curtailment rounded ``min_pass * n`` to 9
# digits, so a value a hair above j/n (0.50000000004 at n = 10) passed 5/10 in adaptive mode and failed it in the full
# run. Both now read the decimal the user wrote exactly (0.6 is 3/5, 0.45 is 9/20).


HAIRS = [0.50000000004, 0.49999999996, 0.45, 0.6, 0.7, 2 / 3, 1 / 3, 0.1 + 0.2, 0.8, 1.0, 0.0]


@pytest.mark.parametrize("min_pass", HAIRS)
@pytest.mark.parametrize("n", [1, 3, 5, 10, 20])
def test_the_full_run_and_curtailment_agree_on_every_count(min_pass: float, n: int) -> None:
    for passes in range(n + 1):
        pattern = "P" * passes + "F" * (n - passes)
        (task,) = build_summary(records({"t": pattern}, min_pass=min_pass)).tasks
        assert task.verdict == decided(passes, n - passes, n, min_pass), (passes, n, min_pass)


def test_known_thresholds() -> None:
    assert required_passes(10, 0.50000000004) == 6  # strictly above one half
    assert required_passes(10, 0.49999999996) == 5
    assert required_passes(5, 0.6) == 3  # not 4, although 0.6 * 5 == 3.0000000000000004 in floats
    assert required_passes(20, 0.45) == 9  # not 10, although the float 0.45 is a hair above 9/20
    assert required_passes(3, 2 / 3) == 2


def test_expected_repetitions_is_the_mean_over_every_sequence_of_outcomes() -> None:
    import itertools

    from pytest_consistency.analysis.adaptive import decided, expected_repetitions

    # Brute force: every sequence of n outcomes, run until curtailment decides (min_pass 0.8 of 5: stop at 4
    # passes or 2 failures), weighted by its chance at rate 0.7.
    n, min_pass, rate = 5, 0.8, 0.7
    mean = 0.0
    for outcomes in itertools.product((True, False), repeat=n):
        passes = failures = ran = 0
        for passed in outcomes:
            if decided(passes, failures, n, min_pass) is not None:
                break
            ran += 1
            passes, failures = passes + passed, failures + (not passed)
        k = sum(outcomes)
        mean += ran * rate**k * (1 - rate) ** (n - k)
    assert expected_repetitions(rate, n, min_pass) == pytest.approx(mean, rel=1e-12)
    assert expected_repetitions(1.0, n, 1.0) == n and expected_repetitions(0.0, n, 1.0) == 1
