"""The exact tests stay exact and fast at large n (a long soak or a merged history reaches n in the thousands).

Before, Fisher's and Boschloo's p-values were read from a table of the Fisher p-value of every outcome as a Fraction:
n1 = n2 = 400 took 1.5 s and n1 = n2 = 2000 ran past 15 minutes and 1 GB (the guard below was seen failing on that
code: killed at its time-out). Now the same p-values (to 1e-12, checked against the table implementation kept in
reference_tests.py at small n, and against scipy at large n) take milliseconds for Fisher and about 0.1 s for
Boschloo at n = 2000. The guard bounds the work without timing it: it counts the big-integer binomial coefficients
and the evaluations of the region's probability each call makes, and runs the large cases in a subprocess with a
generous hang guard.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import warnings
from fractions import Fraction

import pytest
import reference_tests as reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_consistency.stats import significance
from pytest_consistency.stats.planning import power
from pytest_consistency.stats.significance import (
    BOSCHLOO_MAX_TOTAL,
    boschloo_one_sided,
    fisher_one_sided,
    fisher_region,
    fisher_tail,
    mcnemar_one_sided,
    minimum_detectable_drop,
)

scipy_stats = pytest.importorskip("scipy.stats")
np = pytest.importorskip("numpy")


def close(ours: float, theirs: float, tolerance: float = 1e-12) -> bool:
    """Equal to ``tolerance`` relative, or absolute for values below 1."""
    return abs(ours - theirs) <= tolerance * max(abs(theirs), 1.0) or abs(ours - theirs) <= tolerance * abs(theirs)


@st.composite
def tables(draw: st.DrawFn, largest: int) -> tuple[int, int, int, int]:
    n1 = draw(st.integers(1, largest))
    n2 = draw(st.integers(1, largest))
    return draw(st.integers(0, n1)), n1, draw(st.integers(0, n2)), n2


# --- equal to the table implementation at small n -------------------------------------------------------------------


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(30))
def test_fisher_equals_the_exact_fraction_table(table: tuple[int, int, int, int]) -> None:
    c1, n1, c2, n2 = table
    assert fisher_tail(c1, n1, n2, c1 + c2) == reference.fisher_statistics(n1, n2)[c1][c2]
    assert close(fisher_one_sided(c1, n1, c2, n2), reference.fisher_one_sided(c1, n1, c2, n2), 1e-15)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(12))
def test_boschloo_equals_the_table_implementation(table: tuple[int, int, int, int]) -> None:
    c1, n1, c2, n2 = table
    assert close(boschloo_one_sided(c1, n1, c2, n2), reference.boschloo_one_sided(c1, n1, c2, n2))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 14), st.integers(1, 14), st.data())
def test_the_region_walk_is_the_set_of_tables_at_most_as_likely(n1: int, n2: int, data: st.DataObject) -> None:
    """Every table's Fisher p-value compared with the threshold, ties included, against the walk's region."""
    stats = reference.fisher_statistics(n1, n2)
    values = sorted({v for row in stats for v in row})
    threshold = data.draw(st.sampled_from(values))
    region = fisher_region(n1, n2, threshold)
    for x1 in range(n1 + 1):
        for x2 in range(n2 + 1):
            assert (stats[x1][x2] <= threshold) == (x1 >= region.first[x1 + x2]), (x1, x2, threshold)
    for s in range(n1 + n2 + 1):
        weight = sum(
            math.comb(n1, x) * math.comb(n2, s - x)
            for x in range(max(0, s - n2), min(n1, s) + 1)
            if stats[x][s - x] <= threshold
        )
        assert close(region.mass[s], float(Fraction(weight, math.comb(n1 + n2, s))), 1e-15)


@pytest.mark.parametrize(("worse", "better"), [(w, b) for w in range(12) for b in range(12)] + [(60, 41), (3, 90)])
def test_mcnemar_equals_the_exact_sum(worse: int, better: int) -> None:
    assert close(mcnemar_one_sided(worse, better), reference.mcnemar_one_sided(worse, better), 1e-15)


@pytest.mark.parametrize("test", ["fisher", "boschloo"])
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_minimum_detectable_drop_by_bisection_equals_the_linear_scan(test: str, alpha: float) -> None:
    for n1, n2 in [(1, 1), (2, 5), (5, 5), (5, 2), (8, 8), (10, 3), (3, 10), (12, 12), (20, 7)]:
        assert minimum_detectable_drop(n1, n2, alpha, test) == reference.minimum_detectable_drop(n1, n2, alpha, test)


# --- equal to scipy at large n ------------------------------------------------------------------------------------

LARGE = [
    (2000, 2000, 1800, 2000),
    (1900, 2000, 1870, 2000),
    (1000, 2000, 970, 2000),
    (2000, 2000, 1997, 2000),
    (1999, 2000, 2000, 2000),
    (3, 2000, 1, 5),
    (700, 1500, 300, 800),
    (9500, 10000, 9000, 10000),
    (30000, 40000, 29500, 40000),
]


@pytest.mark.parametrize(("c1", "n1", "c2", "n2"), LARGE)
def test_fisher_matches_scipy_at_large_n(c1: int, n1: int, c2: int, n2: int) -> None:
    expected = scipy_stats.fisher_exact([[c1, n1 - c1], [c2, n2 - c2]], alternative="greater").pvalue
    survival = scipy_stats.hypergeom.sf(c1 - 1, n1 + n2, n1, c1 + c2)
    ours = fisher_one_sided(c1, n1, c2, n2)
    assert close(ours, expected) or close(ours, survival), (ours, expected, survival)
    assert close(ours, float(fisher_tail(c1, n1, n2, c1 + c2)), 1e-15)


def scipy_boschloo(c1: int, n1: int, c2: int, n2: int) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = np.array([[c1, c2], [n1 - c1, n2 - c2]])
        return float(scipy_stats.boschloo_exact(table, alternative="greater").pvalue)


@pytest.mark.parametrize(("c1", "n1", "c2", "n2"), [(150, 200, 130, 200), (300, 400, 280, 400), (60, 90, 30, 70)])
def test_boschloo_matches_scipy_at_a_few_hundred(c1: int, n1: int, c2: int, n2: int) -> None:
    assert close(boschloo_one_sided(c1, n1, c2, n2), scipy_boschloo(c1, n1, c2, n2))


@pytest.mark.skipif(not os.environ.get("CONSISTENCY_SLOW"), reason="scipy takes about a minute per table at n = 2000")
@pytest.mark.parametrize(("c1", "n1", "c2", "n2"), LARGE[:4])
def test_boschloo_matches_scipy_at_two_thousand(c1: int, n1: int, c2: int, n2: int) -> None:
    # scipy's own float arithmetic differs by up to 2.4e-12 relative here (ours equals an exact rational evaluation
    # of the region's probability at its maximiser to 1e-15): 1e-12 absolute.
    assert abs(boschloo_one_sided(c1, n1, c2, n2) - scipy_boschloo(c1, n1, c2, n2)) <= 1e-12


def test_mcnemar_matches_scipy_at_large_counts() -> None:
    for worse, better in [(1100, 900), (1030, 970), (2000, 0), (10, 1990), (50000, 49500)]:
        expected = scipy_stats.binomtest(worse, worse + better, 0.5, alternative="greater").pvalue
        assert close(mcnemar_one_sided(worse, better), expected, 1e-11), (worse, better)


def test_boschloo_is_fisher_above_its_documented_size() -> None:
    n = BOSCHLOO_MAX_TOTAL // 2 + 1
    assert boschloo_one_sided(n, n, n - 40, n) == fisher_one_sided(n, n, n - 40, n)
    n = BOSCHLOO_MAX_TOTAL // 2
    assert boschloo_one_sided(n, n, n - 40, n) < fisher_one_sided(n, n, n - 40, n)


def test_the_reference_p_values_are_kept() -> None:
    for c1, c2, fisher, boschloo in [
        (5, 2, 0.083, 0.031),
        (5, 1, 0.024, 0.0107),
        (4, 1, 0.103, 0.055),
        (3, 0, 0.083, 0.031),
    ]:
        assert round(fisher_one_sided(c1, 5, c2, 5), 3) == fisher
        assert boschloo_one_sided(c1, 5, c2, 5) == pytest.approx(boschloo, abs=5e-4)
    assert boschloo_one_sided(5, 5, 1, 5) == pytest.approx(11 / 1024, rel=1e-12)
    assert mcnemar_one_sided(5, 0) == 1 / 32


# --- the work is bounded ------------------------------------------------------------------------------------------


class Counter:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.comb = 0
        self.probability = 0
        real_comb, real_probability = math.comb, significance.region_probability

        def comb(n: int, k: int) -> int:
            self.comb += 1
            return real_comb(n, k)

        def probability(region: significance.Region, pi: float) -> float:
            self.probability += 1
            return real_probability(region, pi)

        monkeypatch.setattr(math, "comb", comb)
        monkeypatch.setattr(significance, "region_probability", probability)


def test_the_work_per_test_is_bounded_at_two_thousand(monkeypatch: pytest.MonkeyPatch) -> None:
    """A handful of binomial coefficients per Fisher p-value, one region and 1,061 evaluations per Boschloo p-value,
    O(log n) tests per minimum detectable drop: not one per possible outcome."""
    significance.fisher_one_sided.cache_clear()
    significance.boschloo_one_sided.cache_clear()
    significance.fisher_region.cache_clear()
    counter = Counter(monkeypatch)
    assert fisher_one_sided(2000, 2000, 1800, 2000) < 1e-60
    assert counter.comb <= 3
    before = counter.comb
    assert 0.0 < boschloo_one_sided(1900, 2000, 1870, 2000) < fisher_one_sided(1900, 2000, 1870, 2000)
    assert counter.comb - before <= 6 and counter.probability == 1001 + 2 + 60
    counter.probability = 0
    assert minimum_detectable_drop(2000, 2000) is not None
    assert counter.probability <= 1063 * math.ceil(math.log2(2000))


GUARD = textwrap.dedent(
    """
    import random, resource
    from pytest_consistency.stats.planning import power
    from pytest_consistency.stats.significance import boschloo_one_sided, fisher_one_sided, minimum_detectable_drop
    from pytest_consistency.stats.stratified import Stratum, stratified_drop
    assert fisher_one_sided(2000, 2000, 1800, 2000) < 1e-60
    assert 0.0 < boschloo_one_sided(1000, 2000, 970, 2000) < fisher_one_sided(1000, 2000, 970, 2000)
    assert minimum_detectable_drop(2000, 2000) == minimum_detectable_drop(2000, 2000, test="fisher") == 5
    assert minimum_detectable_drop(5, 2000) == 855 and minimum_detectable_drop(5, 2000, test="fisher") == 903
    assert 0.99 < power(2000, 0.9, 0.85) <= 1.0
    rng = random.Random(1)
    strata = []
    for _ in range(200):
        p = rng.uniform(0.3, 0.95)
        c1 = sum(rng.random() < p for _ in range(2000))
        strata.append(Stratum(c1, 2000, sum(rng.random() < p * 0.97 for _ in range(2000)), 2000))
    result = stratified_drop(strata)
    assert result is not None and 0.0 < result.p_value < 1e-30
    same = stratified_drop([Stratum(s.c1, s.n1, s.c1, s.n1) for s in strata])
    assert same is not None and 0.4 < same.p_value <= 1.0 and same.change_pp == 0.0
    # VmHWM is this process's own peak: ru_maxrss survives exec, so it would report the forking xdist worker's peak
    try:
        hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
    except OSError:
        hwm = []
    print(int(hwm[0].split()[1]) // 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
    """
)


def test_large_n_finishes_under_a_hang_guard() -> None:
    """Fisher, Boschloo, the minimum detectable drop and power at n = 2000, and the stratified test of 200 tasks at
    n = 2000, in a fresh process: a hang guard of ten minutes (they take a few seconds), and under 500 MB."""
    done = subprocess.run([sys.executable, "-c", GUARD], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) < 500


def test_power_at_large_n_is_the_row_sum() -> None:
    assert power(600, 0.9, 0.85, test="fisher") == pytest.approx(
        scipy_rejection_probability(600, 0.9, 0.85, fisher_region(600, 600, Fraction(0.05))), abs=1e-12
    )


def scipy_rejection_probability(n: int, p1: float, p2: float, region: significance.Region) -> float:
    base = scipy_stats.binom.pmf(np.arange(n + 1), n, p1)
    cur = scipy_stats.binom.pmf(np.arange(n + 1), n, p2)
    x1, x2 = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    first = np.array(region.first)
    rejected = x1 >= first[x1 + x2]
    return float((base[:, None] * cur[None, :] * rejected).sum())
