"""Binomial tails and intervals for pooled counts (n in the tens of thousands): linear work, scipy's values."""

from __future__ import annotations

import math

import pytest

from pytest_consistency.stats import binomial
from pytest_consistency.stats.binomial import binomial_cdf, binomial_sf, clopper_pearson

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize(("c", "n", "p"), [(2600, 5000, 0.51), (1001, 2002, 0.5), (70_000, 100_000, 0.7)])
def test_large_n_tails_match_scipy(c: int, n: int, p: float) -> None:
    assert binomial_sf(c, n, p) == pytest.approx(scipy_stats.binom.sf(c - 1, n, p), rel=1e-8)
    assert binomial_cdf(c, n, p) == pytest.approx(scipy_stats.binom.cdf(c, n, p), rel=1e-8)


@pytest.mark.parametrize(("c", "n"), [(1800, 2000), (66_000, 100_000), (99_990, 100_000)])
def test_pooled_clopper_pearson_matches_scipy(c: int, n: int) -> None:
    expected = scipy_stats.binomtest(c, n).proportion_ci(0.95, method="exact")
    got = clopper_pearson(c, n, 0.95)
    assert got.low == pytest.approx(expected.low, abs=1e-9)
    assert got.high == pytest.approx(expected.high, abs=1e-9)


def test_the_log_coefficients_of_a_large_n_use_no_exact_integers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard of the end-of-session saving: math.comb of n = 100,000 costs O(n) per coefficient (an hour for
    the row); above EXACT_LOG_COMB_MAX not one exact coefficient is computed."""
    calls = []
    comb = math.comb

    def counted(n: int, k: int) -> int:
        calls.append(n)
        return comb(n, k)

    monkeypatch.setattr(binomial.math, "comb", counted)
    binomial._log_comb.cache_clear()
    try:
        row = binomial._log_comb(binomial.EXACT_LOG_COMB_MAX + 1)
        assert not calls and len(row) == binomial.EXACT_LOG_COMB_MAX + 2
        small = binomial._log_comb(30)
        assert len(calls) == 31 and small[15] == math.log(comb(30, 15))
    finally:
        binomial._log_comb.cache_clear()


def test_both_rows_agree_where_they_meet() -> None:
    n = binomial.EXACT_LOG_COMB_MAX + 1
    exact = [math.log(math.comb(n, j)) for j in range(n + 1)]
    binomial._log_comb.cache_clear()
    assert binomial._log_comb(n) == pytest.approx(exact, rel=1e-13, abs=1e-11)
