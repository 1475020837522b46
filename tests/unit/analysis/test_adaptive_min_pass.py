"""``min_pass`` is one comparison: adaptive curtailment and the full run give every task the same verdict.

Before, the full run compared ``passes / n >= min_pass - 1e-12`` while curtailment rounded ``min_pass * n`` to 9
digits, so a value a hair above j/n (0.50000000004 at n = 10) passed 5/10 in adaptive mode and failed it in the full
run. Both now read the decimal the user wrote exactly (0.6 is 3/5, 0.45 is 9/20).
"""

from __future__ import annotations

import pytest
from suites import records

from pytest_consistency.analysis.adaptive import decided, required_passes
from pytest_consistency.analysis.summary import build_summary

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
