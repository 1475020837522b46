"""One-sided exact regression tests (Fisher, Boschloo), Benjamini-Hochberg, McNemar and the minimum detectable drop.

About the Boschloo reference values: CONTEXT.md lists 5/5 -> 2/5: 0.035 and 5/5 -> 1/5: 0.0069. Those are what
scipy returns for the *transposed* table [[c1, n1 - c1], [c2, n2 - c2]]; scipy's boschloo_exact takes the columns
as the two independent samples, so with two runs of fixed size the table is [[c1, c2], [n1 - c1, n2 - c2]], which
gives 0.0309 and 0.0107. 0.0107 can be checked by hand: the tables at least as extreme as (5, 1) by Fisher's
statistic are (5, 0), (5, 1) and (4, 0) (a tie), whose probability pi^5 (1-pi)^5 + 5 pi^6 (1-pi)^4 +
5 pi^4 (1-pi)^6 is largest at pi = 1/2: 11/1024. The conclusions drawn from them (Boschloo sees a drop of 3 at
n = 5, Fisher only of 4) hold either way.
"""

from __future__ import annotations

import itertools
import math
import warnings

import pytest

from pytest_consistency.stats.significance import (
    TESTS,
    benjamini_hochberg,
    boschloo_one_sided,
    fisher_one_sided,
    mcnemar_one_sided,
    minimum_detectable_drop,
    one_sided_p,
)

scipy_stats = pytest.importorskip("scipy.stats")
np = pytest.importorskip("numpy")


def _scipy_boschloo(c1: int, n1: int, c2: int, n2: int) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = np.array([[c1, c2], [n1 - c1, n2 - c2]])
        return float(scipy_stats.boschloo_exact(table, alternative="greater").pvalue)


# --- reference values -------------------------------------------------------------------------------------------

REFERENCE = [
    # (c1, n1, c2, n2, Fisher from CONTEXT.md, Boschloo with the runs as columns)
    (5, 5, 2, 5, 0.083, 0.0309),
    (5, 5, 1, 5, 0.024, 0.0107),
    (4, 5, 1, 5, 0.103, 0.0547),
    (3, 5, 0, 5, 0.083, 0.0309),
]


@pytest.mark.parametrize(("c1", "n1", "c2", "n2", "fisher", "boschloo"), REFERENCE)
def test_reference_p_values(c1: int, n1: int, c2: int, n2: int, fisher: float, boschloo: float) -> None:
    assert fisher_one_sided(c1, n1, c2, n2) == pytest.approx(fisher, abs=5e-4)
    assert boschloo_one_sided(c1, n1, c2, n2) == pytest.approx(boschloo, abs=5e-5)
    assert boschloo_one_sided(c1, n1, c2, n2) <= fisher_one_sided(c1, n1, c2, n2)


def test_boschloo_exact_values_checked_by_hand() -> None:
    assert boschloo_one_sided(5, 5, 1, 5) == pytest.approx(11 / 1024, rel=1e-9)
    assert boschloo_one_sided(5, 5, 0, 5) == pytest.approx(1 / 1024, rel=1e-9)
    assert fisher_one_sided(5, 5, 2, 5) == pytest.approx(21 / 252, rel=1e-12)


@pytest.mark.parametrize(("c1", "n1", "c2", "n2", "context_value"), [(5, 5, 2, 5, 0.035), (5, 5, 1, 5, 0.0069)])
def test_context_boschloo_values_come_from_the_transposed_table(
    c1: int, n1: int, c2: int, n2: int, context_value: float
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        transposed = np.array([[c1, n1 - c1], [c2, n2 - c2]])
        value = float(scipy_stats.boschloo_exact(transposed, alternative="greater").pvalue)
    assert value == pytest.approx(context_value, abs=5e-4)
    assert boschloo_one_sided(c1, n1, c2, n2) != pytest.approx(context_value, abs=5e-4)


def test_minimum_detectable_drop_at_five_repetitions() -> None:
    assert minimum_detectable_drop(5, 5) == 3
    assert minimum_detectable_drop(5, 5, test="fisher") == 4
    assert minimum_detectable_drop(5, 5, alpha=0.01, test="boschloo") == 5  # 5/5 -> 1/5 is 0.0107
    assert minimum_detectable_drop(5, 5, alpha=0.01, test="fisher") == 5


def test_minimum_detectable_drop_none_when_even_zero_is_not_significant() -> None:
    assert minimum_detectable_drop(2, 2, test="fisher") is None
    assert minimum_detectable_drop(1, 1) is None


def test_minimum_detectable_drop_is_the_first_significant_drop() -> None:
    for n in (3, 5, 8, 10):
        for test in TESTS:
            drop = minimum_detectable_drop(n, n, test=test)
            assert drop is not None
            assert one_sided_p(test, n, n, n - drop, n) <= 0.05
            assert all(one_sided_p(test, n, n, n - d, n) > 0.05 for d in range(1, drop))


def test_mcnemar_reference_value() -> None:
    assert mcnemar_one_sided(5, 0) == pytest.approx(0.03125)
    assert mcnemar_one_sided(0, 0) == 1.0
    assert mcnemar_one_sided(0, 4) == 1.0


# --- against scipy ------------------------------------------------------------------------------------------------

PAIRS = [
    (c1, n1, c2, n2)
    for n1, n2 in [(1, 1), (2, 3), (3, 3), (5, 5), (5, 10), (10, 5), (8, 8), (10, 10), (20, 20)]
    for c1 in sorted({0, 1, n1 // 2, n1 - 1, n1})
    for c2 in sorted({0, 1, n2 // 2, n2 - 1, n2})
]


@pytest.mark.parametrize(("c1", "n1", "c2", "n2"), PAIRS)
def test_fisher_matches_scipy(c1: int, n1: int, c2: int, n2: int) -> None:
    expected = scipy_stats.fisher_exact([[c1, n1 - c1], [c2, n2 - c2]], alternative="greater").pvalue
    assert fisher_one_sided(c1, n1, c2, n2) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(("c1", "n1", "c2", "n2"), PAIRS)
def test_boschloo_matches_scipy(c1: int, n1: int, c2: int, n2: int) -> None:
    # scipy searches the nuisance parameter with shgo; this takes the supremum on a dense grid, so it can only be
    # higher. On these tables the two agree far inside the 1e-3 tolerance.
    ours = boschloo_one_sided(c1, n1, c2, n2)
    theirs = _scipy_boschloo(c1, n1, c2, n2)
    assert ours == pytest.approx(theirs, abs=1e-3)
    assert ours >= theirs - 1e-9


@pytest.mark.parametrize(
    "pvalues",
    [
        [],
        [0.5],
        [0.01, 0.04, 0.03, 0.2],
        [1.0, 1.0, 0.0],
        [0.001, 0.0125, 0.0125, 0.04, 0.05, 0.9],
        [0.031, 0.0107, 0.5, 1.0, 1.0, 0.094, 0.377, 0.001],
        [i / 37 for i in range(37)],
    ],
)
def test_benjamini_hochberg_matches_scipy(pvalues: list[float]) -> None:
    ours = benjamini_hochberg(pvalues)
    assert len(ours) == len(pvalues)
    if pvalues:
        expected = scipy_stats.false_discovery_control(pvalues, method="bh")
        assert ours == pytest.approx(list(expected), abs=1e-12)
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    assert all(ours[a] <= ours[b] for a, b in itertools.pairwise(order))
    assert all(p <= q <= 1.0 for p, q in zip(pvalues, ours, strict=True))


@pytest.mark.parametrize(("worse", "better"), [(0, 0), (1, 0), (5, 0), (5, 1), (3, 3), (1, 6), (12, 4), (40, 25)])
def test_mcnemar_matches_scipy_binomtest(worse: int, better: int) -> None:
    if worse + better == 0:
        assert mcnemar_one_sided(worse, better) == 1.0
        return
    expected = scipy_stats.binomtest(worse, worse + better, 0.5, alternative="greater").pvalue
    assert mcnemar_one_sided(worse, better) == pytest.approx(expected, rel=1e-12)


# --- behaviour ----------------------------------------------------------------------------------------------------


def test_one_sided_p_dispatches() -> None:
    assert TESTS == ("boschloo", "fisher")
    assert one_sided_p("fisher", 5, 5, 2, 5) == fisher_one_sided(5, 5, 2, 5)
    assert one_sided_p("boschloo", 5, 5, 2, 5) == boschloo_one_sided(5, 5, 2, 5)


def test_improvement_is_never_a_regression() -> None:
    for test in TESTS:
        assert one_sided_p(test, 2, 5, 5, 5) == pytest.approx(1.0)
        assert one_sided_p(test, 3, 5, 3, 5) > 0.5


def test_p_values_fall_as_the_drop_grows() -> None:
    for test in TESTS:
        values = [one_sided_p(test, 10, 10, c2, 10) for c2 in range(10, -1, -1)]
        assert all(a >= b for a, b in itertools.pairwise(values))
        assert math.isclose(values[0], 1.0)


# --- invalid input ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("func", [fisher_one_sided, boschloo_one_sided])
@pytest.mark.parametrize(("c1", "n1", "c2", "n2"), [(6, 5, 1, 5), (1, 5, -1, 5), (0, 0, 0, 5), (1.5, 5, 1, 5)])
def test_tests_reject_invalid_counts(func: object, c1: int, n1: int, c2: int, n2: int) -> None:
    with pytest.raises(ValueError):
        func(c1, n1, c2, n2)  # type: ignore[operator]


def test_invalid_test_name_alpha_and_counts() -> None:
    with pytest.raises(ValueError, match="test must be one of"):
        one_sided_p("chi2", 5, 5, 1, 5)
    with pytest.raises(ValueError, match="test must be one of"):
        minimum_detectable_drop(5, 5, test="barnard")
    with pytest.raises(ValueError, match="alpha"):
        minimum_detectable_drop(5, 5, alpha=0.0)
    with pytest.raises(ValueError, match="p-values"):
        benjamini_hochberg([0.1, 1.2])
    with pytest.raises(ValueError, match="p-values"):
        benjamini_hochberg([math.nan])
    with pytest.raises(ValueError, match="worse"):
        mcnemar_one_sided(-1, 2)
    with pytest.raises(ValueError, match="better"):
        mcnemar_one_sided(1, 2.0)  # type: ignore[arg-type]
