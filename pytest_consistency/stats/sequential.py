"""A task's pass rate against a bar (``min_rate``), tested sequentially: a verdict valid whenever the run stops.

It exists because the exact tests of :mod:`.rate` hold for ONE look at a fixed n: stopping as soon as a task looks
decided, or adding repetitions to an undecided one and looking again, is optional stopping, whose error rate is no
longer alpha. Here two betting processes (test supermartingales) are watched after every repetition:

- PASS: evidence that the rate is at least the bar ``r``. Its wealth is a mixture over a fixed grid of alternatives
  ``q`` above ``r`` (:data:`GRID` of them, evenly spaced up to 1; half the weight on ``q = 1``, a task that always
  passes, the rest shared evenly: :data:`CERTAIN`), of the products
  ``prod_i (1 + lam_q (X_i - r))`` with ``lam_q = (q - r) / (r (1 - r))``: the likelihood ratio of q against r,
  ``(q / r)^passes ((1 - q) / (1 - r))^failures``. Each factor has mean at most 1 when the rate is at most r;
- FAIL: evidence that the rate is below the bar, the same with alternatives evenly spaced from 0 up to below r,
  weighted equally.

A process whose wealth reaches ``1 / alpha`` decides its verdict. By Ville's inequality a nonnegative
supermartingale starting at 1 ever reaches ``1 / alpha`` with probability at most alpha, so a task whose true rate is
below the bar PASSES with probability at most alpha and one whose rate is at least the bar FAILS with probability at
most alpha (the same meaning as :mod:`.rate`), at whatever repetition the run stops, cap or no cap. The two cannot
cross together: a Bernoulli log-likelihood is concave in q, so the data cannot be 1/alpha times likelier than at
r both under some q above r and under some q below it. A task that reaches its cap without a crossing is
UNDECIDED, never a point verdict.

The bets are fixed in advance (no bet depends on any outcome, its own included), so each product, and the mixture,
depends only on the counts (passes, failures), not on their order. The decision is read along the repetitions in
the order of their numbers (1, 2, ...), fixed before any runs: :func:`decide` stops at the first number whose
counts so far cross. So the decision is a function of the outcomes per repetition number alone, the same when the
repetitions run serially, across xdist workers in any order, or replayed; and no outcome's timing (a failure that
returns faster) can steer it.

A task that can no longer cross by its cap (:func:`reachable`: all passes cannot reach PASS and all failures cannot
reach FAIL) is undecided at the cap whatever the remaining repetitions do: stopping it changes no verdict.
Operating characteristics (:func:`operating`) are exact sums over the paths, standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pytest_consistency.stats.interval import Interval
from pytest_consistency.stats.rate import PLAN_MAX, PLAN_POWER, check_bar, planning_n

SequentialVerdict = Literal["pass", "fail", "undecided"]
#: How the verdict was reached: a crossing of 1/alpha (``evidence``), or none by the cap (``cap``; also when the
#: cap can no longer be crossed before it is reached).
DecidedBy = Literal["evidence", "cap"]
#: Alternatives on each side of the bar in the mixture. More alternatives cost log(GRID) of evidence, fewer are
#: coarse; 5 measured as well as 10 or 20 at cap 40 and min_rate 0.8 (``benchmarks/sequential.py``).
GRID = 5
#: The PASS mixture's weight on the alternative ``q = 1`` (a task that always passes). Agent suites are full of
#: them (GPT-4.1 on AppWorld: 89 of 168 tasks passed all 5 repetitions, docs/metrics.md), and an all-pass task is
#: the one a sequential run can stop earliest: with weight 1/2 it crosses 0.8 at alpha 0.05 after 16 passes where
#: equal weights (1/5 each) need 18. Any weights fixed in advance keep the mixture a test supermartingale; on the
#: benchmark's mix at cap 40 this one spends 0.639x curtailment's repetitions against 0.663x with equal weights,
#: with fewer wrong verdicts than fixed n (``benchmarks/sequential.py``, docs/sequential.md).
CERTAIN = 0.5
#: Wealth within this relative margin of 1/alpha counts as reaching it (sums of logs are a few ulps off).
_ULPS = 1e-12


def _counts(passes: int, failures: int) -> None:
    for name, value in (("passes", passes), ("failures", failures)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an int >= 0, got {value!r}")


@lru_cache(maxsize=256)
def alternatives(rate: float, side: Literal["pass", "fail"]) -> tuple[float, ...]:
    """The grid of alternative rates q of one process: above the bar up to 1 (PASS), from 0 below it (FAIL)."""
    if side == "pass":
        return (*(rate + (1.0 - rate) * i / GRID for i in range(1, GRID)), 1.0)  # 1 exactly, never a float above
    return tuple(rate * i / GRID for i in range(GRID))


def weights(side: Literal["pass", "fail"]) -> tuple[float, ...]:
    """The mixture's weights, in the order of :func:`alternatives` (they add up to 1): :data:`CERTAIN` on ``q = 1``
    for PASS and the rest evenly; equal for FAIL."""
    if side == "pass":
        return (*((1.0 - CERTAIN) / (GRID - 1),) * (GRID - 1), CERTAIN)
    return (1.0 / GRID,) * GRID


def bets(rate: float, side: Literal["pass", "fail"]) -> tuple[float, ...]:
    """The betting fractions ``lam`` of the grid, on ``X - rate`` (PASS) or ``rate - X`` (FAIL): each in
    (0, 1/rate] or (0, 1/(1 - rate)], so no factor is negative."""
    return tuple(abs(q - rate) / (rate * (1.0 - rate)) for q in alternatives(rate, side))


def log_wealth(passes: int, failures: int, rate: float, side: Literal["pass", "fail"]) -> float:
    """The log of one process's mixture wealth after ``passes`` and ``failures`` (order does not matter)."""
    _counts(passes, failures)
    terms = []
    for q, weight in zip(alternatives(rate, side), weights(side), strict=True):
        if (q == 1.0 and failures) or (q == 0.0 and passes):
            continue  # the component bet everything on the other outcome: its wealth is 0
        term = math.log(weight)
        if passes:
            term += passes * math.log(q / rate)
        if failures:
            term += failures * math.log((1.0 - q) / (1.0 - rate))
        terms.append(term)
    if not terms:
        return -math.inf
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms))


@lru_cache(maxsize=65536)
def crossing(passes: int, failures: int, rate: float, alpha: float) -> Literal["pass", "fail"] | None:
    """The verdict whose process's wealth has reached ``1 / alpha`` at these counts, else None."""
    check_bar(rate, alpha)
    threshold = -math.log(alpha) - _ULPS
    if log_wealth(passes, failures, rate, "pass") >= threshold:
        return "pass"
    if log_wealth(passes, failures, rate, "fail") >= threshold:
        return "fail"
    return None


def reachable(passes: int, failures: int, cap: int, rate: float, alpha: float) -> bool:
    """Whether some outcomes of the repetitions left before ``cap`` could still make a process cross: each wealth
    grows with its own outcome, so the extremes (all passes, all failures) are the ones to look at."""
    left = cap - passes - failures
    if left <= 0:
        return False
    return (
        crossing(passes + left, failures, rate, alpha) == "pass"
        or crossing(passes, failures + left, rate, alpha) == "fail"
    )


#: The bars :func:`bounds` tries, 0.001 apart.
_BARS = 1000


@lru_cache(maxsize=4096)
def bounds(passes: int, failures: int, alpha: float) -> Interval:
    """The anytime-valid one-sided bounds of the rate at these counts, each at 1 - alpha: the bars neither process
    rejects (a bar below the rate is rejected by its PASS process, one above by its FAIL process), widened by the
    0.001 step of the bars tried. At the true rate both processes are test supermartingales, so each bound holds
    with probability at least 1 - alpha at whatever repetition the run stopped, as the verdicts do."""
    _counts(passes, failures)
    kept = [
        j / _BARS
        for j in range(1, _BARS)
        if (passes or failures) == 0 or crossing(passes, failures, j / _BARS, alpha) is None
    ]
    if not kept:  # cannot happen: the observed share itself is never rejected
        return Interval(0.0, 1.0)
    low = 0.0 if kept[0] <= 1 / _BARS else kept[0] - 1 / _BARS
    high = 1.0 if kept[-1] >= 1 - 1 / _BARS else kept[-1] + 1 / _BARS
    return Interval(round(low, 3), round(high, 3))


@dataclass(frozen=True)
class Decision:
    """A task's sequential verdict: what, how, and at which repetition number it was known."""

    verdict: SequentialVerdict
    decided_by: DecidedBy
    #: The repetitions read to reach it (the crossing's number; for ``cap``, where it became certain).
    at: int


def decide(outcomes: Sequence[bool], cap: int, rate: float, alpha: float) -> Decision | None:
    """The decision from the outcomes of repetitions 1, 2, ... in their numbers' order (True: passed), or None
    while the repetitions still to run can change it.

    ``outcomes`` is the unbroken run of known outcomes from repetition 1 (a later outcome whose predecessors are not
    all known is not read: the decision would then depend on which finished first). The first number at which a
    process crosses decides; else ``undecided`` by the cap at the first number after which no crossing is left
    possible before it (not at the last outcome known: under xdist more may be known, and ``at`` is kept in the
    report, so it too must depend on the outcomes alone).
    """
    check_bar(rate, alpha)
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise ValueError(f"cap must be an int >= 1, got {cap!r}")
    if len(outcomes) > cap:
        raise ValueError(f"{len(outcomes)} outcomes for a cap of {cap}")
    passes = failures = 0
    for number, passed in enumerate(outcomes, start=1):
        if passed:
            passes += 1
        else:
            failures += 1
        verdict = crossing(passes, failures, rate, alpha)
        if verdict is not None:
            return Decision(verdict, "evidence", number)
        if not reachable(passes, failures, cap, rate, alpha):  # nor after it: the outcomes to come cannot cross
            return Decision("undecided", "cap", number)
    if not outcomes and not reachable(0, 0, cap, rate, alpha):
        return Decision("undecided", "cap", 0)
    return None


@dataclass(frozen=True)
class Operating:
    """Exact operating characteristics of one task under :func:`decide` with stopping at the decision."""

    passed: float
    failed: float
    undecided: float
    #: Expected repetitions run (serially: each starts once the previous one's outcome is known).
    repetitions: float

    def wrong(self, p: float, rate: float) -> float:
        """The probability of a wrong verdict for a task whose true rate is p (FAIL at p >= rate, PASS below)."""
        return self.failed if p >= rate else self.passed


def operating(p: float, cap: int, rate: float, alpha: float, n_min: int = 1) -> Operating:
    """P(PASS), P(FAIL), P(UNDECIDED) and the expected repetitions for a task whose true rate is ``p``, run
    serially, at least ``n_min`` repetitions, stopped at the decision: an exact sum over the count paths."""
    check_bar(rate, alpha)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be within [0, 1], got {p!r}")
    # A state is the counts and the verdict decided on the way (kept: below n_min the run goes on, the decision
    # does not change).
    mass: dict[tuple[int, int, SequentialVerdict | None], float] = {(0, 0, None): 1.0}
    passed = failed = undecided = repetitions = 0.0
    while mass:
        following: dict[tuple[int, int, SequentialVerdict | None], float] = {}
        for (s, f, verdict), weight in mass.items():
            if verdict is None and s + f:
                verdict = crossing(s, f, rate, alpha)
            if verdict is None and not reachable(s, f, cap, rate, alpha):
                verdict = "undecided"
            if verdict is not None and s + f >= min(n_min, cap):
                if verdict == "pass":
                    passed += weight
                elif verdict == "fail":
                    failed += weight
                else:
                    undecided += weight
                continue
            repetitions += weight
            for step, chance in (((s + 1, f, verdict), p), ((s, f + 1, verdict), 1.0 - p)):
                if chance:
                    following[step] = following.get(step, 0.0) + weight * chance
        mass = following
    return Operating(passed, failed, undecided, repetitions)


@lru_cache(maxsize=1024)
def planning_cap(c: int, n: int, rate: float, alpha: float, power: float = PLAN_POWER) -> int | None:
    """The cap a FRESH sequential run needs to decide the bar with probability ``power`` if the true rate is what
    this run saw (c / n): the sequential twin of :func:`.rate.planning_n`, larger than it (every look is paid for:
    an all-pass task at 0.8 needs 16 repetitions here, 14 at one look). None when the rate seen is the bar itself
    or no cap up to :data:`.rate.PLAN_MAX` is likely to decide it. A planning figure for the next run, not
    repetitions to add to this one.
    """
    check_bar(rate, alpha)
    if not 0 <= c <= n or n < 1:
        raise ValueError(f"counts must satisfy 0 <= c <= n and n >= 1, got c={c!r}, n={n!r}")
    p = c / n
    if p == rate:
        return None

    def decides(cap: int) -> bool:
        chances = operating(p, cap, rate, alpha)
        return chances.passed + chances.failed >= power

    # One look at a fixed n is at least as likely to decide as a sequential run capped there (it pays for one look,
    # not for every one): where no fixed n up to PLAN_MAX is likely to, no cap is; and no cap below that n is.
    fixed = planning_n(c, n, rate, alpha, power)
    if fixed is None:
        return None
    # From there, or the fewest repetitions that can cross on the side the run saw, bisection: a larger cap only
    # adds paths that cross (the early stop is at no crossing within the cap).
    low = 1
    while low <= PLAN_MAX and crossing(low if p > rate else 0, 0 if p > rate else low, rate, alpha) is None:
        low += 1
    low = max(low, fixed)
    if low > PLAN_MAX or not decides(PLAN_MAX):
        return None
    high = PLAN_MAX
    while low < high:
        middle = (low + high) // 2
        if decides(middle):
            high = middle
        else:
            low = middle + 1
    return low
