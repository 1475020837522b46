"""Exact intervals for one task's pass rate and pass^k, from its c successes in n repetitions.

It exists because with n = 3..10 repetitions normal approximations are wrong at exactly the counts users see most
(5/5, 4/5): a 5/5 task is compatible with a 48 % pass rate. Assumptions: the n repetitions of a task are independent
Bernoulli trials with one pass rate p (no drift within a run). Clopper-Pearson inverts the exact binomial test with
equal tails; the beta quantiles it needs are found by safeguarded Newton steps on the exact binomial tail, summed in
log space so it stays accurate (about 1e-12) for n in the thousands. Standard library only.
"""

from __future__ import annotations

import math
from functools import lru_cache

from pytest_consistency.stats.interval import Interval


def check_counts(c: int, n: int) -> None:
    """Raise ``ValueError`` unless ``c`` successes out of ``n`` trials is a valid count (``n >= 1``)."""
    for name, value in (("c", c), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an int, got {value!r}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 0 <= c <= n:
        raise ValueError(f"c must be within 0..n={n}, got {c}")


def check_confidence(confidence: float) -> None:
    """Raise ``ValueError`` unless ``confidence`` is a number strictly between 0 and 1."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def check_positive_int(name: str, value: int) -> None:
    """Raise ``ValueError`` unless ``value`` is an int >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")


#: Up to this n, log C(n, j) comes from exact integers; above it from ``math.lgamma``. Exact binomial coefficients
#: of n digits cost O(n) each, so the row cost O(n^2): a pooled interval of 10,000 tasks x 10 (n = 100,000) took
#: over an hour, and the end of a session grew faster than its size. lgamma's row is linear, and its error in
#: log C stays below 1e-11 at n = 2,000 and 3e-10 at n = 100,000 (relative error of each term), far below what an
#: interval bound is read to.
EXACT_LOG_COMB_MAX = 1000


@lru_cache(maxsize=256)
def _log_comb(n: int) -> tuple[float, ...]:
    """log C(n, j) for j = 0..n: exact integers (math.log of an int is accurate for any size) up to
    ``EXACT_LOG_COMB_MAX``, lgamma above it."""
    if n <= EXACT_LOG_COMB_MAX:
        return tuple(math.log(math.comb(n, j)) for j in range(n + 1))
    lgamma = math.lgamma
    top = lgamma(n + 1)
    return tuple(top - lgamma(j + 1) - lgamma(n - j + 1) for j in range(n + 1))


def binomial_pmf(n: int, p: float) -> list[float]:
    """P(X = j) for j = 0..n, X ~ Binomial(n, p)."""
    if p <= 0.0:
        return [1.0] + [0.0] * n
    if p >= 1.0:
        return [0.0] * n + [1.0]
    lc = _log_comb(n)
    lp = math.log(p)
    lq = math.log1p(-p)
    return [math.exp(lc[j] + j * lp + (n - j) * lq) for j in range(n + 1)]


def _mass(n: int, p: float, outcomes: range) -> float:
    """P(X in outcomes) for X ~ Binomial(n, p), 0 < p < 1, summed term by term in log space (no cancellation).

    ``outcomes`` is a run of consecutive counts. The sum starts at its largest term (the binomial law is unimodal) and
    goes outwards, stopping on each side once the terms left, at most the current one times how many remain, are
    below 1e-17 of the sum: O(sqrt(n)) terms instead of O(n) (a pooled interval of 200 tasks x 2000 repetitions
    summed 400,000 terms per Newton step).
    """
    low, high = outcomes.start, outcomes.stop - 1
    if low > high:
        return 0.0
    lc = _log_comb(n)
    lp = math.log(p)
    lq = math.log1p(-p)

    def term(j: int) -> float:
        return math.exp(lc[j] + j * lp + (n - j) * lq)

    peak = min(max(int((n + 1) * p), low), high)
    terms = [term(peak)]
    total = terms[0]
    for step, end in ((1, high), (-1, low)):
        j = peak
        while j != end:
            j += step
            value = term(j)
            terms.append(value)
            total += value
            if value * abs(end - j) < 1e-17 * total:
                break
    return math.fsum(terms)


def binomial_sf(c: int, n: int, p: float) -> float:
    """P(X >= c) for X ~ Binomial(n, p), summed term by term (no cancellation)."""
    if c <= 0:
        return 1.0
    if c > n:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return _mass(n, p, range(c, n + 1))


def binomial_cdf(c: int, n: int, p: float) -> float:
    """P(X <= c) for X ~ Binomial(n, p), summed term by term (no cancellation)."""
    if c < 0:
        return 0.0
    if c >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    return _mass(n, p, range(c + 1))


def _beta_log_density(p: float, a: int, b: int) -> float:
    """log of the Beta(a, b) density at p for integer a, b >= 1 (the derivative of the binomial tail in p)."""
    n = a + b - 1
    return math.log(n) + _log_comb(n - 1)[a - 1] + (a - 1) * math.log(p) + (b - 1) * math.log1p(-p)


def _solve_tail(target: float, c: int, n: int, lower: bool) -> float:
    """The p in (0, 1) where P(X >= c) = target (``lower``) or P(X <= c) = target, X ~ Binomial(n, p).

    Newton's method on the exact tail (its derivative in p is a beta density), kept inside a shrinking bracket and
    replaced by bisection whenever a step would leave it; stops at double precision.
    """
    lo, hi = 0.0, 1.0
    x = (c + 0.5) / (n + 1)
    for _ in range(400):
        if lower:
            diff = binomial_sf(c, n, x) - target  # increasing in p
            slope = math.exp(_beta_log_density(x, c, n - c + 1))
        else:
            diff = target - binomial_cdf(c, n, x)  # P(X <= c) decreases in p, so this increases
            slope = math.exp(_beta_log_density(x, c + 1, n - c))
        if diff == 0.0:
            return x
        if diff < 0.0:
            lo = x
        else:
            hi = x
        step = diff / slope if slope > 0.0 else math.inf
        candidate = x - step
        if not lo < candidate < hi:
            candidate = 0.5 * (lo + hi)
        if abs(candidate - x) <= 2e-16 * x or hi - lo <= 2e-16 * hi:
            return candidate
        x = candidate
    return x


def _lower_bound(c: int, n: int, tail: float) -> float:
    """Beta^-1(tail; c, n - c + 1): the p at which P(X >= c) = tail; 0 when c = 0."""
    if c == 0:
        return 0.0
    if c == n:
        return float(tail ** (1.0 / n))
    return _solve_tail(tail, c, n, lower=True)


def _upper_bound(c: int, n: int, tail: float) -> float:
    """Beta^-1(1 - tail; c + 1, n - c): the p at which P(X <= c) = tail; 1 when c = n."""
    if c == n:
        return 1.0
    if c == 0:
        return float(-math.expm1(math.log(tail) / n))
    return _solve_tail(tail, c, n, lower=False)


@lru_cache(maxsize=4096, typed=True)
def clopper_pearson(c: int, n: int, confidence: float = 0.95) -> Interval:
    """Exact two-sided Clopper-Pearson interval for a pass rate, with (1 - confidence) / 2 in each tail.

    Same as ``scipy.stats.binomtest(c, n).proportion_ci(confidence, method="exact")``. 5/5 at 95 % is
    [0.478, 1]; 4/5 is [0.284, 0.995].
    """
    check_counts(c, n)
    check_confidence(confidence)
    tail = (1.0 - confidence) / 2.0
    return Interval(_lower_bound(c, n, tail), _upper_bound(c, n, tail))


def one_sided_lower(c: int, n: int, confidence: float = 0.95) -> float:
    """One-sided exact (Clopper-Pearson) lower confidence bound for a pass rate."""
    check_counts(c, n)
    check_confidence(confidence)
    return _lower_bound(c, n, 1.0 - confidence)


def one_sided_upper(c: int, n: int, confidence: float = 0.95) -> float:
    """One-sided exact (Clopper-Pearson) upper confidence bound for a pass rate."""
    check_counts(c, n)
    check_confidence(confidence)
    return _upper_bound(c, n, 1.0 - confidence)


def pass_hat_k_interval(c: int, n: int, k: int, confidence: float = 0.95) -> Interval:
    """Exact interval for p^k, the chance that k fresh repetitions all pass: [L^k, U^k] from Clopper-Pearson.

    Exact because p -> p^k is increasing. ``k`` may exceed ``n`` (the interval is about p^k, not an estimator).
    With c = n = k the lower bound is (1 - confidence) / 2 whatever n is.
    """
    check_positive_int("k", k)
    ci = clopper_pearson(c, n, confidence)
    return Interval(ci.low**k, ci.high**k)


def runs_to_certify(k: int, tau: float, confidence: float = 0.95) -> int:
    """Fewest repetitions n, all passing, whose one-sided exact lower bound on p^k reaches ``tau``.

    With zero failures the one-sided Clopper-Pearson lower bound on p is a^(1/n), a = 1 - confidence, so p^k >= tau
    is shown once n >= k ln(a) / ln(tau). k = 5, tau = 0.8 at 95 % -> 68.
    """
    check_positive_int("k", k)
    check_confidence(confidence)
    if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not 0.0 < tau < 1.0:
        raise ValueError(f"tau must be strictly between 0 and 1 (pass^k = 1 can never be certified), got {tau!r}")
    alpha = 1.0 - confidence

    def certifies(runs: int) -> bool:
        return float(alpha ** (k / runs)) >= tau

    runs = max(1, math.ceil(k * math.log(alpha) / math.log(tau)))
    while not certifies(runs):
        runs += 1
    while runs > 1 and certifies(runs - 1):
        runs -= 1
    return runs
