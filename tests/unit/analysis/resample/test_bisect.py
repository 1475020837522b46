from __future__ import annotations

import pytest

from pytest_consistency.analysis.resample.bisect import bisect


def probe_of(pattern: str, asked: list[int]):
    """R(s) for s = 1.. from a pattern of "R" (reproduces) and "." (settled)."""

    def reproduces(step: int) -> bool:
        asked.append(step)
        return pattern[step - 1] == "R"

    return reproduces


@pytest.mark.parametrize(
    ("pattern", "step"),
    [("R....", 1), ("RR...", 2), ("RRR..", 3), ("RRRRR", 5), ("RRRR.", 4), ("R", 1)],
)
def test_monotone_patterns_give_the_last_step_that_reproduces(pattern: str, step: int) -> None:
    asked: list[int] = []
    found = bisect(len(pattern), probe_of(pattern, asked))
    assert found.step == step
    assert len(asked) == len(set(asked))  # each step probed once
    assert len(asked) <= 1 + max(1, len(pattern)).bit_length()  # log2 probes, not a scan


def test_step_one_settled_means_nothing_to_attribute() -> None:
    asked: list[int] = []
    found = bisect(4, probe_of("....", asked))
    assert found.step is None and asked == [1]
    assert "no inconsistency to attribute" in found.sentence()


def test_a_non_monotone_pattern_still_ends_on_a_boundary_and_shows_its_probes() -> None:
    found = bisect(6, probe_of("R.R...", []))
    assert found.step is not None
    s = found.step
    assert found.probes[s] is True and found.probes.get(s + 1, False) is False
    assert "step 1: reproduces" in found.sentence()


def test_no_steps() -> None:
    with pytest.raises(ValueError, match="no step to resample"):
        bisect(0, lambda step: True)
