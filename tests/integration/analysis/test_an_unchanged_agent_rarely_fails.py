"""The family-wise promise, measured: an unchanged agent compared with its own baseline fails the default gates, and
every gate set the docs and examples/ci recommend, at most alpha (5 %) of the time; and a real drop still fails them.

A fast version of ``benchmarks/aa.py`` (the same session end: records -> build_summary -> compare_for_gates ->
conclude -> summary.passed), 400 seeded pairs per cell: it fails above alpha + 3 standard errors. On 6925489 the
example CI set failed an unchanged agent 55 % of the time at 10 tasks x n = 5 (point comparison of the gap increase).
"""

from __future__ import annotations

import math

import pytest
from benchmark_scripts import load_benchmark

PAIRS = 400
ALPHA = 0.05
LIMIT = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / PAIRS)


AA = load_benchmark("aa")


@pytest.mark.parametrize(("mix", "tasks", "n"), [("docs", 10, 5), ("all 0.9", 10, 5), ("all 0.9", 5, 3)])
def test_an_unchanged_agent_fails_every_recommended_gate_set_at_most_alpha(mix: str, tasks: int, n: int) -> None:
    cell = AA.run_cell(mix, tasks, n, 0, PAIRS, 7 + tasks + n, AA.SETS)
    too_often = {name: cell.rate(name) for name in cell.fails if cell.rate(name) > LIMIT}
    assert not too_often, f"false-alarm rate above {LIMIT:.3f}: {too_often}"


def test_a_drop_of_20_points_still_fails_the_default_gates_most_of_the_time() -> None:
    """Not made blind: the suite-level test (on by default with a baseline) sees every task 20 points worse."""
    default = [s for s in AA.SETS if s.name.startswith("a baseline, no option")]
    example = [s for s in AA.SETS if s.name == "examples/ci/consistency.yml"]
    cell = AA.run_cell("docs", 10, 5, 20, 200, 11, default + example)
    assert cell.rate(default[0].name) > 0.6 and cell.rate(example[0].name) > 0.45, cell.fails
