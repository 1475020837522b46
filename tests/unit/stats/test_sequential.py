"""Sequential (anytime-valid) verdicts against ``min_rate``: wrong with probability at most alpha whenever they stop.

The counterpart, the exact test of :mod:`pytest_consistency.stats.rate` read after every repetition, is optional
stopping: :func:`test_peeking_at_the_exact_test_is_not_valid` shows its error above alpha where the sequential
process stays below.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Literal

import pytest

from pytest_consistency.stats.rate import rate_verdict
from pytest_consistency.stats.sequential import (
    CERTAIN,
    GRID,
    Decision,
    alternatives,
    bets,
    bounds,
    crossing,
    decide,
    log_wealth,
    operating,
    reachable,
    weights,
)

ALPHA = 0.05
OFFSETS = (0.0, 0.01, 0.03, 0.05, 0.1, 0.15)


def test_each_bet_keeps_every_factor_nonnegative_and_its_mean_at_most_one_under_the_null() -> None:
    for rate in (0.1, 0.5, 0.8, 0.95):
        for lam in bets(rate, "pass"):
            assert 0 < lam <= 1 / rate + 1e-12
            assert 1 + lam * (0 - rate) >= -1e-12  # a failure
            # Under a rate p <= r the factor's mean is 1 + lam (p - r) <= 1.
            assert 1 + lam * ((rate - 0.01) - rate) < 1
        for lam in bets(rate, "fail"):
            assert 0 < lam <= 1 / (1 - rate) + 1e-12
            assert 1 - lam * (1 - rate) >= -1e-12  # a pass on the FAIL process
        assert len(alternatives(rate, "pass")) == len(alternatives(rate, "fail")) == GRID


def test_the_wealth_is_the_mixture_of_the_products_and_depends_only_on_the_counts() -> None:
    rate = 0.8
    outcomes = [1, 1, 0, 1, 1, 1, 0, 1]
    sides: tuple[tuple[Literal["pass", "fail"], int], ...] = (("pass", 1), ("fail", -1))
    for side, sign in sides:
        assert math.fsum(weights(side)) == pytest.approx(1.0, rel=1e-15) and min(weights(side)) > 0
        products = [math.prod(1 + sign * lam * (x - rate) for x in outcomes) for lam in bets(rate, side)]
        expected = math.fsum(w * p for w, p in zip(weights(side), products, strict=True))
        assert math.exp(log_wealth(6, 2, rate, side)) == pytest.approx(expected, rel=1e-12)
        for order in itertools.islice(itertools.permutations(outcomes), 0, 200, 7):
            products = [math.prod(1 + sign * lam * (x - rate) for x in order) for lam in bets(rate, side)]
            mixed = math.fsum(w * p for w, p in zip(weights(side), products, strict=True))
            assert mixed == pytest.approx(expected, rel=1e-12)


def test_half_the_pass_mixture_bets_on_a_task_that_always_passes() -> None:
    """An all-pass task (half of the published AppWorld suite's tasks) crosses 0.8 at alpha 0.05 after 16 passes;
    with the weight spread evenly it took 18."""
    assert alternatives(0.8, "pass")[-1] == 1.0 and weights("pass")[-1] == CERTAIN == 0.5
    assert weights("pass")[:-1] == (0.125,) * (GRID - 1) and weights("fail") == (0.2,) * GRID
    first = next(n for n in range(1, 40) if crossing(n, 0, 0.8, ALPHA) == "pass")
    assert first == 16
    even = math.log(sum((q / 0.8) ** 17 for q in alternatives(0.8, "pass")) / GRID)
    assert even < -math.log(ALPHA)  # equal weights: not yet at 17


def test_the_two_processes_never_cross_together() -> None:
    for rate in (0.2, 0.5, 0.8, 0.9):
        for n in range(1, 80):
            for passes in range(n + 1):
                wealth = (log_wealth(passes, n - passes, rate, "pass"), log_wealth(passes, n - passes, rate, "fail"))
                assert min(wealth) < -math.log(0.49)


@pytest.mark.parametrize("cap", [10, 40, 200])
@pytest.mark.parametrize("offset", OFFSETS)
def test_a_wrong_verdict_has_probability_at_most_alpha_near_the_bar(cap: int, offset: float) -> None:
    """Exact over every path up to the cap: PASS below the bar, FAIL at or above it, each at most alpha."""
    rate = 0.8
    below = operating(rate - offset if offset else rate - 1e-9, cap, rate, ALPHA)
    at_or_above = operating(rate + offset, cap, rate, ALPHA)
    assert below.passed <= ALPHA
    assert at_or_above.failed <= ALPHA
    for figures in (below, at_or_above):
        assert figures.passed + figures.failed + figures.undecided == pytest.approx(1.0, abs=1e-9)


def test_a_wrong_verdict_stays_below_alpha_at_other_bars_and_alphas() -> None:
    for rate, alpha in ((0.5, 0.05), (0.9, 0.05), (0.95, 0.01), (0.7, 0.1)):
        for offset in OFFSETS:
            low = max(rate - offset, 0.0) if offset else rate - 1e-9
            assert operating(low, 100, rate, alpha).passed <= alpha
            assert operating(min(rate + offset, 1.0), 100, rate, alpha).failed <= alpha


def simulate(p: float, cap: int, rate: float, alpha: float, runs: int, seed: int) -> tuple[int, int, float]:
    """Seeded runs through :func:`decide`, one repetition at a time: (PASS count, FAIL count, mean repetitions)."""
    rng = random.Random(seed)
    passed = failed = used = 0
    for _ in range(runs):
        outcomes: list[bool] = []
        decision = None
        while decision is None:
            outcomes.append(rng.random() < p)
            decision = decide(outcomes, cap, rate, alpha)
        used += len(outcomes)
        passed += decision.verdict == "pass"
        failed += decision.verdict == "fail"
    return passed, failed, used / runs


@pytest.mark.parametrize("offset", [0.0, 0.05, 0.15])
def test_simulated_runs_through_decide_err_at_most_alpha_and_match_the_exact_figures(offset: float) -> None:
    """2000 seeded runs per rate: the wrong-verdict count is within 3 standard errors of at most alpha, and the
    counts agree with :func:`operating` (so the exact figures describe :func:`decide`)."""
    rate, cap, runs = 0.8, 40, 2000
    for p, wrong_is_pass in ((rate - offset if offset else rate - 1e-9, True), (rate + offset, False)):
        passed, failed, mean = simulate(p, cap, rate, ALPHA, runs, seed=43 + int(offset * 100))
        wrong = passed if wrong_is_pass else failed
        assert wrong / runs <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / runs)
        exact = operating(p, cap, rate, ALPHA)
        for count, probability in ((passed, exact.passed), (failed, exact.failed)):
            assert abs(count / runs - probability) <= 4 * math.sqrt(max(probability * (1 - probability), 1e-4) / runs)
        assert mean == pytest.approx(exact.repetitions, rel=0.05)


def test_power_figures_at_cap_40_and_min_rate_0_8() -> None:
    """What the process decides, exactly: an all-pass task at 16 repetitions (fixed n needs 14/14 to pass, and
    curtailment at cap 40 needs 37 passes), a task at half the bar fails within about 16 repetitions."""
    rate, cap = 0.8, 40
    assert decide([True] * 15, cap, rate, ALPHA) is None
    assert decide([True] * 16, cap, rate, ALPHA) == Decision("pass", "evidence", 16)
    perfect = operating(1.0, cap, rate, ALPHA)
    assert (perfect.passed, perfect.repetitions) == (1.0, 16.0)
    half = operating(0.5, cap, rate, ALPHA)
    assert half.failed > 0.9 and half.repetitions < 17
    high = operating(0.95, cap, rate, ALPHA)
    assert 0.5 < high.passed < 0.65 and high.repetitions < 25
    zero = decide([False] * 7, cap, rate, ALPHA)
    assert zero is not None and zero.verdict == "fail"


def test_the_decision_reads_the_repetitions_in_their_numbers_order() -> None:
    """The first crossing decides: later outcomes that would undo it change nothing."""
    rate, cap = 0.8, 40
    decided = decide([True] * 16, cap, rate, ALPHA)
    assert decided == Decision("pass", "evidence", 16)
    assert decide([True] * 16 + [False] * 10, cap, rate, ALPHA) == decided
    assert crossing(16, 10, rate, ALPHA) is None  # the counts at the end alone would not decide


def test_undecided_at_the_cap_is_at_the_first_repetition_that_leaves_no_crossing() -> None:
    """Under xdist more outcomes may be known than the serial run read: the repetition an undecided task is decided
    at (``decided_at`` in the report, which ``verify`` checks) is where no crossing was left, whatever came after."""
    edge = [c == "P" for c in "PPPPF" * 8]  # a rate of exactly 0.8: no crossing reachable from repetition 29
    assert decide(edge[:29], 40, 0.8, ALPHA) == Decision("undecided", "cap", 29)
    assert decide(edge[:28], 40, 0.8, ALPHA) is None
    assert decide(edge[:35], 40, 0.8, ALPHA) == decide(edge, 40, 0.8, ALPHA) == Decision("undecided", "cap", 29)


def test_undecided_at_the_cap_is_known_once_no_crossing_is_reachable() -> None:
    """Brute force over every continuation at a small cap: ``cap`` is declared early exactly when no continuation
    crosses, and a task at the cap without a crossing is undecided, never a point verdict."""
    rate, cap = 0.8, 12
    for length in range(cap + 1):
        for prefix in itertools.product((True, False), repeat=length):
            outcomes = list(prefix)
            if any(decide(outcomes[:i], cap, rate, ALPHA) is not None for i in range(length)):
                continue  # decided earlier
            decision = decide(outcomes, cap, rate, ALPHA)
            continuations = [
                decide(outcomes + list(rest), cap, rate, ALPHA)
                for rest in itertools.product((True, False), repeat=cap - length)
            ]
            can_cross = any(d is not None and d.decided_by == "evidence" for d in continuations)
            if decision is None:
                assert can_cross
            elif decision.decided_by == "cap":
                assert decision.verdict == "undecided" and not can_cross
                assert not reachable(sum(outcomes), length - sum(outcomes), cap, rate, ALPHA)


def test_at_least_n_min_repetitions_run_and_the_first_crossing_still_decides() -> None:
    rate, cap = 0.8, 40
    plain = operating(0.0, cap, rate, ALPHA)
    assert plain.failed == 1.0 and plain.repetitions < 10
    assert operating(0.0, cap, rate, ALPHA, n_min=20) == type(plain)(0.0, 1.0, 0.0, 20.0)


def test_peeking_at_the_exact_test_is_not_valid() -> None:
    """Reading the fixed-n exact test after every repetition up to 40 (optional stopping) passes a task just below
    the bar more often than alpha; the sequential process does not."""
    rate, cap, p = 0.8, 40, 0.78
    mass = {(0, 0): 1.0}
    wrong = 0.0
    for _ in range(cap):
        following: dict[tuple[int, int], float] = {}
        for (s, f), weight in mass.items():
            for step, chance in (((s + 1, f), p), ((s, f + 1), 1 - p)):
                if rate_verdict(step[0], sum(step), rate, ALPHA) == "pass":
                    wrong += weight * chance
                else:
                    following[step] = following.get(step, 0.0) + weight * chance
        mass = following
    assert wrong > ALPHA
    assert operating(p, cap, rate, ALPHA).passed <= ALPHA


def test_the_bounds_agree_with_the_verdicts_and_cover_the_rate_whenever_the_run_stops() -> None:
    """Each bound excludes exactly the bars a process rejects: a PASS at the bar puts the lower bound above it, a
    FAIL the upper bound below it. Seeded runs stopped at their decision (cap 40) cover the true rate from each side
    at least 1 - alpha of the time."""
    rate = 0.8
    assert bounds(0, 0, ALPHA).low == 0.0 and bounds(0, 0, ALPHA).high == 1.0
    assert bounds(16, 0, ALPHA).low >= rate > bounds(15, 0, ALPHA).low
    assert bounds(0, 3, ALPHA).high < rate
    for passes, failures in ((23, 6), (30, 5), (10, 10), (1, 0), (200, 3)):
        interval = bounds(passes, failures, ALPHA)
        assert interval.low <= passes / (passes + failures) <= interval.high
    rng = random.Random(4301)
    for p in (0.5, 0.75, 0.9, 0.97):
        low_misses = high_misses = 0
        runs = 600
        for _ in range(runs):
            outcomes: list[bool] = []
            while decide(outcomes, 40, rate, ALPHA) is None:
                outcomes.append(rng.random() < p)
            interval = bounds(sum(outcomes), len(outcomes) - sum(outcomes), ALPHA)
            low_misses += interval.low > p
            high_misses += interval.high < p
        limit = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / runs)
        assert low_misses / runs <= limit and high_misses / runs <= limit


@pytest.mark.parametrize(
    "call",
    [
        lambda: crossing(1, 0, 1.0, ALPHA),
        lambda: crossing(1, 0, 0.8, 0.5),
        lambda: log_wealth(-1, 0, 0.8, "pass"),
        lambda: decide([True], 0, 0.8, ALPHA),
        lambda: decide([True, True], 1, 0.8, ALPHA),
        lambda: operating(1.5, 10, 0.8, ALPHA),
    ],
)
def test_invalid_arguments_are_refused(call: object) -> None:
    with pytest.raises(ValueError):
        call()  # type: ignore[operator]


def test_the_plan_for_a_fresh_sequential_run_is_a_cap_larger_than_one_looks_n() -> None:
    """An undecided task's advice in sequential mode: every look is paid for, so an all-pass task at 0.8 needs a cap
    of 16 where one look needs 14; the cap given is the smallest likely (>= 0.8) to decide, and the rate seen being
    the bar itself has none."""
    from pytest_consistency.stats.rate import PLAN_POWER, planning_n
    from pytest_consistency.stats.sequential import planning_cap

    assert planning_cap(1, 1, 0.8, 0.05) == 16 and planning_n(1, 1, 0.8, 0.05) == 14
    assert planning_cap(0, 1, 0.8, 0.05) == 3
    for c, n in [(2, 3), (9, 10), (38, 40), (1, 4)]:
        cap = planning_cap(c, n, 0.8, 0.05)
        assert cap is not None and cap >= (planning_n(c, n, 0.8, 0.05) or 0), (c, n)
        decided = operating(c / n, cap, 0.8, 0.05)
        before = operating(c / n, cap - 1, 0.8, 0.05)
        assert decided.passed + decided.failed >= PLAN_POWER > before.passed + before.failed, (c, n, cap)
    assert planning_cap(4, 5, 0.8, 0.05) is None
