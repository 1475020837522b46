"""The sequential benchmark's promise, measured fast: in every cell (true rates within 0.15 of the bar included) a
decided sequential verdict is wrong at most alpha of the time (within 3 standard errors), it spends fewer
repetitions than curtailment at cap 40, and at cap 10 it does not decide more often than curtailment.

A fast version of ``benchmarks/sequential.py`` (the same decision functions the plugin skips repetitions with),
1000 seeded tasks per rate.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]
RUNS = 1000
ALPHA = 0.05
LIMIT = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)


def benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sequential_benchmark", ROOT / "benchmarks" / "sequential.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path  # the script puts the checkout on sys.path; pytester's sessions must not see it twice
    return module


BENCH = benchmark()


def test_every_cell_errs_at_most_alpha_and_sequential_spends_less_than_curtailment_at_cap_40() -> None:
    table = BENCH.measure(40, RUNS, 43)
    for method in BENCH.METHODS:
        for key, cell in table[method].items():
            assert cell.wrong <= LIMIT, (method, key, cell)
    ratios = BENCH.ratios(table)
    assert ratios["sequential/curtailment"] < 0.75
    assert table["sequential"]["mix"].wrong <= table["curtailment"]["mix"].wrong + 3 * math.sqrt(0.006 / RUNS)


def test_at_cap_10_sequential_decides_no_more_than_curtailment() -> None:
    table = BENCH.measure(10, RUNS, 43)
    for key, cell in table["sequential"].items():
        assert cell.wrong <= LIMIT, (key, cell)
    assert table["sequential"]["mix"].undecided >= table["curtailment"]["mix"].undecided
