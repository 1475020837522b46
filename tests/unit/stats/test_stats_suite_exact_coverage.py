"""Exact coverage of the suite-target intervals, every task at one true pass rate p (suite_coverage.py).

The two cells reported in "Trust, round three" under-covered on the code before: pass@k 0.941 at T = 4 tasks,
n = 10, k = 5, p = 0.08; the gap 0.947 at T = 5, n = k = 10, p = 0.928. The full grid (T <= 10, n <= 20, every k)
is in coverage_grid.py, run on demand (``CONSISTENCY_FULL_GRID=1``); its result is in docs/metrics.md.
"""

from __future__ import annotations

import pytest
from suite_coverage import exact_coverage

NOMINAL = 0.95


@pytest.mark.parametrize(
    ("metric", "t", "n", "k", "p"),
    [("pass@k", 4, 10, 5, 0.08), ("gap", 5, 10, 10, 0.928)],
)
def test_the_reported_cells_cover(metric: str, t: int, n: int, k: int, p: float) -> None:
    coverage = exact_coverage(t, n, k, p)
    assert coverage[metric].coverage >= NOMINAL, coverage[metric]
