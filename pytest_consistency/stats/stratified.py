"""A suite-level test of "the current run passes less often than the baseline", exact, over every task at once.

It exists because per-task tests with Benjamini–Hochberg only fire when one task collapses: an agent whose every
task got a little worse (20 tasks at n = 5, every pass rate x 0.8) is flagged about 2 % of the time. Pooling the
evidence of all tasks catches it most of the time while keeping the false-alarm rate at most alpha.

The test is the exact stratified (conditional) test behind Cochran–Mantel–Haenszel: each task is a stratum with
baseline c1 of n1 and current c2 of n2 repetitions passing. Under "no change in any task" (each task keeps its own
pass rate, whatever it is), given the task's total passes s = c1 + c2, the baseline's passes follow the
hypergeometric law C(n1, x) C(n2, s - x) / C(n1 + n2, s), independently across tasks. The statistic is the sum of
the baseline's passes over tasks; the one-sided p-value is the probability, under that null, of a sum at least the
one observed. Conditioning removes every task's unknown pass rate (no nuisance parameter to maximise over), so the
level holds for any mix of pass rates; tasks that passed every repetition in both runs (or failed every one) carry no
information and drop out.

How the p-value is computed depends on the size, never on the counts' values:

* Small suites (the exact convolution needs at most ``EXACT_PRODUCTS`` products, e.g. 100 tasks at n = 5 or
  20 tasks at n = 20): exactly. The hypergeometric weights are integers, their convolution is integer arithmetic, and
  the p-value is one ``Fraction``.
* One informative task: Fisher's one-sided test, exactly (significance.fisher_tail).
* Larger suites (200 tasks at n = 2000 is 400,000 possible sums; the exact convolution would multiply numbers of
  hundreds of thousands of digits): the law of the sum is convolved in 64-bit fixed point under an exponential tilt.
  Each task's hypergeometric pmf is computed in floating point relative to its mode, tilted by e^{theta x} with theta
  chosen so that the tilted sum is centred on the observed value (saddlepoint centring, a few Newton steps), scaled to
  integers of 64 bits and convolved exactly with Python's big integers (all tasks packed side by side in one integer
  per task, Kronecker substitution, multiplied pairwise in a balanced tree and rounded back to 64 bits after each
  product). The tail is then untilted: P(S >= k0) = exp(sum_i log M_i(theta) - theta k0) sum_{k >= k0}
  e^{-theta (k - k0)} P_theta(S = k). Centring makes the terms that matter of ordinary size, so the result has a
  relative error of about 1e-13 (the floating-point pmfs and log M_i), however small the p-value, down to about
  1e-290; below that it is reported as 0. Checked against the exact convolution to 1e-12 relative.

The change figure is the **task-averaged** pass-rate change, mean_i(c2_i / n2_i - c1_i / n1_i): each task weighs the
same, as in the test (which compares each task with itself) and in the suite's Mean@k. Its interval is each run's
task-averaged pass rate with its exact suite interval (stats.suite, Mean@k at level sqrt(confidence), so that both
hold at once: the pooled Clopper–Pearson interval when the tasks share n, else the worst-variance bound), combined
conservatively: [low_current - high_baseline, high_current - low_baseline]. The pooled change (all current passes /
all current repetitions minus the same for the baseline) weighs tasks by their n and can contradict the test when the
runs allocate repetitions differently (Simpson's paradox: a task that passed 50 of 50 in the baseline and 1 of 1 now,
beside one that failed 1 of 1 and now 50 of 50, reads -96 pp with no task changed). With equal n everywhere the two
agree.
Standard library only; pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from pytest_consistency.stats.binomial import check_confidence, check_counts
from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.metrics import TaskCounts
from pytest_consistency.stats.significance import fisher_tail
from pytest_consistency.stats.suite import mean_interval

EXACT_PRODUCTS = 300_000
"""Up to this many products of integer weights the null law of the sum is convolved exactly."""

_FIXED_BITS = 64
_SLOT_BYTES = 17  # a product of two 64-bit fixed-point laws: coefficients below 2^130
_LOG_FLOOR = -690.0  # relative weights below e^-690 (about 1e-300) of a task's mode are dropped


@dataclass(frozen=True)
class Stratum:
    """One task in both runs: ``c1`` of ``n1`` baseline repetitions passed, ``c2`` of ``n2`` current ones."""

    c1: int
    n1: int
    c2: int
    n2: int

    def __post_init__(self) -> None:
        check_counts(self.c1, self.n1)
        check_counts(self.c2, self.n2)


@dataclass(frozen=True)
class StratifiedDrop:
    """The exact stratified test of a drop, and the task-averaged pass-rate change with its interval.

    ``observed`` is the baseline's passes summed over the informative tasks and ``expected`` its mean under no
    change; ``informative`` counts the tasks whose total passes leave the baseline's count free (0 < s < n1 + n2).
    ``baseline_rate`` and ``current_rate`` are each run's task-averaged pass rate, mean_i(c_i / n_i) (fractions);
    ``change_pp`` is their difference, mean_i(c2_i / n2_i - c1_i / n1_i), and ``change_interval`` its interval, in
    percentage points (negative = worse). When no task's pass rate changed the change is 0.
    """

    p_value: float
    observed: int
    expected: float
    informative: int
    baseline_rate: float
    current_rate: float
    change_pp: float
    change_interval: Interval


def _weights(n1: int, n2: int, s: int) -> tuple[int, tuple[int, ...]]:
    """The lowest possible baseline count x given the total s, and C(n1, x) C(n2, s - x) for each x from it."""
    lo, hi = max(0, s - n2), min(n1, s)
    return lo, tuple(math.comb(n1, x) * math.comb(n2, s - x) for x in range(lo, hi + 1))


def _width(n1: int, n2: int, s: int) -> int:
    return min(n1, s) - max(0, s - n2) + 1


def exact_products(strata: Sequence[tuple[int, int, int]]) -> int:
    """How many products of integer weights the exact convolution of ``strata`` (n1, n2, s) takes."""
    products, length = 0, 1
    for n1, n2, s in strata:
        width = _width(n1, n2, s)
        products += length * width
        length += width - 1
    return products


@lru_cache(maxsize=4096)
def _null_distribution(strata: tuple[tuple[int, int, int], ...]) -> tuple[int, tuple[int, ...], int]:
    """(lowest sum, integer weight of each sum from it, total weight) of the summed baseline counts under no change.

    ``strata`` is a sorted tuple of (n1, n2, s); sorting lets equal suites share one cached distribution.
    """
    offset, total = 0, 1
    weights: tuple[int, ...] = (1,)
    for n1, n2, s in strata:
        lo, task = _weights(n1, n2, s)
        combined = [0] * (len(weights) + len(task) - 1)
        for i, w in enumerate(weights):
            if w:
                for j, v in enumerate(task):
                    combined[i + j] += w * v
        offset += lo
        weights = tuple(combined)
        total *= math.comb(n1 + n2, s)
    return offset, weights, total


# --- the tilted fixed-point convolution ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Law:
    """One task's hypergeometric law in log space, relative to its mode: log(P(x) / P(mode)) for x = low, low+1..."""

    low: int
    mode: int
    logs: tuple[float, ...]


def _law(n1: int, n2: int, s: int) -> _Law:
    lo, hi = max(0, s - n2), min(n1, s)
    mode = (s + 1) * (n1 + 1) // (n1 + n2 + 2)
    upper = [0.0]
    x, value = mode, 0.0
    while x < hi and value > _LOG_FLOOR:
        value += math.log((n1 - x) * (s - x) / ((x + 1) * (n2 - s + x + 1)))
        x += 1
        upper.append(value)
    lower = []
    x, value = mode, 0.0
    while x > lo and value > _LOG_FLOOR:
        value += math.log(x * (n2 - s + x) / ((n1 - x + 1) * (s - x + 1)))
        x -= 1
        lower.append(value)
    return _Law(mode - len(lower), mode, (*reversed(lower), *upper))


def _tilted(law: _Law, theta: float) -> tuple[float, float, float, list[float]]:
    """Under the tilt e^{theta x}: (log of the normaliser relative to the mode's weight, mean, variance, pmf)."""
    exponents = [v + theta * (i + law.low - law.mode) for i, v in enumerate(law.logs)]
    top = max(exponents)
    weights = [math.exp(e - top) for e in exponents]
    norm = math.fsum(weights)
    pmf = [w / norm for w in weights]
    mean = sum(p * i for i, p in enumerate(pmf)) + law.low
    variance = sum(p * (i + law.low - mean) ** 2 for i, p in enumerate(pmf))
    return top + math.log(norm), mean, variance, pmf


def _pack(coefficients: Sequence[int]) -> int:
    return int.from_bytes(b"".join(c.to_bytes(_SLOT_BYTES, "little") for c in coefficients), "little")


def _product(a: tuple[int, list[int]], b: tuple[int, list[int]]) -> tuple[int, list[int]]:
    """The convolution of two 64-bit fixed-point laws (offset, coefficients), rounded back to 64 bits."""
    count = len(a[1]) + len(b[1]) - 1
    data = (_pack(a[1]) * _pack(b[1])).to_bytes(count * _SLOT_BYTES, "little")
    half = 1 << (_FIXED_BITS - 1)
    coefficients = [
        (int.from_bytes(data[i : i + _SLOT_BYTES], "little") + half) >> _FIXED_BITS
        for i in range(0, count * _SLOT_BYTES, _SLOT_BYTES)
    ]
    first = next((i for i, c in enumerate(coefficients) if c), 0)
    last = max((i for i in range(len(coefficients) - 1, -1, -1) if coefficients[i]), default=0)
    return a[0] + b[0] + first, coefficients[first : last + 1] or [0]


def _tilted_tail(strata: Sequence[tuple[int, int, int]], observed: int) -> float:
    """P(sum of baseline counts >= observed) under no change, by the tilted fixed-point convolution."""
    laws = [_law(n1, n2, s) for n1, n2, s in strata]
    modes = sum(law.mode for law in laws)
    untilted = [_tilted(law, 0.0) for law in laws]
    theta, tilted = 0.0, untilted
    for _ in range(8):  # Newton steps on theta until the tilted mean is within a quarter deviation of the observed
        mean = math.fsum(t[1] for t in tilted)
        variance = math.fsum(t[2] for t in tilted)
        if observed <= mean and theta == 0.0:
            break  # the observed sum is at most the mean: no tilt needed
        if variance <= 0.0 or abs(mean - observed) <= 0.25 * math.sqrt(variance):
            break
        theta = max(0.0, theta + (observed - mean) / variance)
        tilted = [_tilted(law, theta) for law in laws]
    # log M_i(theta) - theta mode_i = log sum_x P(x) e^{theta (x - mode_i)}: the tilted normaliser over the untilted
    # one, both relative to the mode's weight.
    log_scale = math.fsum(t[0] - u[0] for t, u in zip(tilted, untilted, strict=True))
    parts = []
    for law, (_, _, _, pmf) in zip(laws, tilted, strict=True):
        fixed = [round(p * 2.0**_FIXED_BITS) for p in pmf]
        start = next((i for i, c in enumerate(fixed) if c), 0)
        stop = max((i for i in range(len(fixed) - 1, -1, -1) if fixed[i]), default=0)
        parts.append((law.low + start, fixed[start : stop + 1] or [0]))
    while len(parts) > 1:
        paired = [_product(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = paired + ([parts[-1]] if len(parts) % 2 else [])
    offset, coefficients = parts[0]
    # P(S = k) = exp(log_scale + theta (modes - k)) * P_theta(S = k): summed relative to k = observed.
    scale = 2.0**-_FIXED_BITS
    start = max(0, observed - offset)
    tail = math.fsum(
        coefficients[i] * scale * math.exp(-theta * (i + offset - observed)) for i in range(start, len(coefficients))
    )
    exponent = log_scale + theta * (modes - observed)
    if tail <= 0.0 or exponent < -700.0:
        return 0.0
    return min(1.0, tail * math.exp(exponent))


def stratified_p_value(strata: Sequence[Stratum]) -> Fraction:
    """One-sided p-value P(sum of baseline passes >= observed | every task's total passes), no change.

    1 when no task is informative. One task alone gives Fisher's one-sided exact test: 5/5 -> 2/5 is 0.0833.
    Exact for small suites, within about 1e-13 relative for large ones (module docstring).
    """
    informative = [t for t in strata if 0 < t.c1 + t.c2 < t.n1 + t.n2]
    if not informative:
        return Fraction(1)
    key = tuple(sorted((t.n1, t.n2, t.c1 + t.c2) for t in informative))
    observed = sum(t.c1 for t in informative)
    if len(informative) == 1:
        (only,) = informative
        return fisher_tail(only.c1, only.n1, only.n2, only.c1 + only.c2)
    if exact_products(key) <= EXACT_PRODUCTS:
        offset, weights, total = _null_distribution(key)
        return Fraction(sum(weights[observed - offset :]), total)
    return Fraction(_tilted_tail(key, observed))


def _expected(strata: Sequence[Stratum]) -> float:
    return float(sum((Fraction(t.n1 * (t.c1 + t.c2), t.n1 + t.n2) for t in strata), Fraction(0)))


def stratified_drop(strata: Sequence[Stratum], confidence: float = 0.95) -> StratifiedDrop | None:
    """The suite-level test of a drop over ``strata`` (one per task in both runs); ``None`` when there are none."""
    check_confidence(confidence)
    for stratum in strata:
        if not isinstance(stratum, Stratum):
            raise ValueError(f"expected Stratum, got {stratum!r}")
    if not strata:
        return None
    informative = [t for t in strata if 0 < t.c1 + t.c2 < t.n1 + t.n2]
    t = len(strata)
    before = sum((Fraction(s.c1, s.n1) for s in strata), Fraction(0)) / t
    after = sum((Fraction(s.c2, s.n2) for s in strata), Fraction(0)) / t
    joint = math.sqrt(confidence)
    base = mean_interval([TaskCounts(s.c1, s.n1, 1) for s in strata], joint)
    cur = mean_interval([TaskCounts(s.c2, s.n2, 1) for s in strata], joint)
    change = float((after - before) * 100)
    low = min((cur.low - base.high) * 100.0, change)
    high = max((cur.high - base.low) * 100.0, change)
    return StratifiedDrop(
        p_value=float(stratified_p_value(strata)),
        observed=sum(s.c1 for s in informative),
        expected=_expected(informative),
        informative=len(informative),
        baseline_rate=float(before),
        current_rate=float(after),
        change_pp=change,
        change_interval=Interval(low, high),
    )
