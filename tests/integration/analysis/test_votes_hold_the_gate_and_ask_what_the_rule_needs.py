"""Judge votes, measured: the stop rule asks 2 + 2q(1 - q) judge samples per repetition at M = 3, and a votes session
against a votes baseline of an unchanged agent fails the suite regression gate at most alpha of the time.

A fast version of ``benchmarks/judge_votes.py`` (the same session end: sample records as the votes role asks them
-> fold -> build_summary -> compare_for_gates -> conclude), seeded: it fails above alpha + 3 standard errors.
"""

from __future__ import annotations

import math
import random

import pytest
from benchmark_scripts import load_benchmark

VOTES = load_benchmark("judge_votes")
TRIALS = 200
ALPHA = 0.05
LIMIT = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / TRIALS)


@pytest.mark.parametrize("q", [0.1, 0.3])
def test_the_stop_rule_asks_two_plus_2q_1_minus_q_samples_at_m_3(q: float) -> None:
    assert VOTES.expected_asked(3, q) == pytest.approx(2 + 2 * q * (1 - q))
    assert VOTES.expected_asked(1, q) == 1.0
    found = VOTES.calls_per_repetition(random.Random(11), 3, q, 1000)
    # 1000 repetitions: the share asking a third sample has a standard error below 0.016.
    assert abs(found - VOTES.expected_asked(3, q)) < 0.05


def test_an_unchanged_agent_judged_by_votes_fails_the_regression_gate_at_most_alpha() -> None:
    rng = random.Random(3)
    fails = sum(VOTES.regression_fails(rng, 10, 5, 3, 0.9, 0.9, 0.3) for _ in range(TRIALS))
    assert fails / TRIALS <= LIMIT
