"""The suite consistency gap tested sequentially, in rounds: a gate verdict valid after whichever round the run stops.

The gap of a suite of T tasks at a pinned k is ``(1/T) sum_i g_i`` with ``g_i = p_i - p_i^k`` (Mean@k - pass^k,
docs/metrics.md). A batch of k repetitions of task i gives an unbiased term ``Y = mean(batch) - 1{all k passed}``:
``E[Y] = p_i - p_i^k``, and ``0 <= Y <= (k - 1) / k`` (an all-pass batch gives 0, any other its mean).

Rounds: round r covers repetitions ``(r - 1) k + 1 .. r k`` of the tasks it includes. Round 1 includes every task;
round r >= 2 includes task i with probability ``pi_{i,r}`` (:func:`inclusion_probability`), a function of the task's
own batches in earlier rounds, so fixed before the round, and the draw is a deterministic hash of (seed, task, r)
(:func:`included`): serial runs, xdist workers and replays include the same tasks. The Horvitz-Thompson term of
(task i, round r) is ``Z = 1{included} Y / pi``: given everything before it, its mean is ``g_i`` exactly, and it lies
in ``[0, B]`` with ``B = (k - 1) / (k pi)``, known before the step.

The confidence sequence. Each (round, task) term is one step, in a fixed order (rounds, then tasks by id). For
terms x in [0, 1] with conditional means m and a prediction x^ in [0, 1] fixed before the step, Fan's inequality
gives ``E exp(lam (x - m) - psi(lam) (x - x^)^2) <= 1`` for lam in [0, 1), ``psi(lam) = -log(1 - lam) - lam``
(Howard, Ramdas, McAuliffe & Sekhon 2021; the predictable plug-in empirical-Bernstein process of Waudby-Smith &
Ramdas 2023), and the same with ``m - x``. A term Z of range B is x = Z / B; betting ``lam = c B`` on it turns the
product into ``exp(c (Z - g) - psi(c B) ((Z - Z^) / B)^2)``. The bet ``c`` is the same for every step of a round
(chosen from the earlier rounds only), so at the end of round R the sum of ``c (Z - g)`` is ``T g_suite sum_r c_r``:
the weighted mean of the conditional means IS the suite gap. By Ville's inequality, with probability at least
1 - alpha, for every round R at once::

    gap >= (sum c Z - log(1/alpha) - sum psi(c B) ((Z - Z^) / B)^2) / (T sum_r c_r)

and the same upward, each side at its own alpha. The gate PASSES ("gap <= threshold") when the upper end is at or
below the threshold and FAILS when the lower end is above it, so a decided verdict is wrong with probability at
most alpha whatever the tasks' rates and after whichever round the run stops; undecided otherwise.

The bet of round r is tuned for the horizon (T tasks x the cap's rounds), as the papers allow for a planned horizon:
``c_r = sqrt(2 log(1/alpha) / (s2 N))`` with ``s2`` the mean squared residual of the earlier rounds (a prior of
:data:`PRIOR_VARIANCE` with the weight of :data:`PRIOR_WEIGHT` steps), at most :data:`BET_SHARE` of the largest safe
bet ``1 / max B``. The prediction ``Z^`` of a step is the task's mean term over its earlier included rounds; in round
1, the mean term of the tasks before it in that round (0 for the first). Standard library only.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

#: The inclusion probability of a task whose batches so far are all-pass or all-fail (a mixed one is always
#: included). Tuned with ``benchmarks/sequential.py --suite`` (0.2, 0.3, 0.5 tried; docs/sequential.md).
FLOOR = 0.3
#: The bet's prior: the squared residual of one step assumed before any round is seen, with the weight of this many
#: steps. Tuned with the benchmark.
PRIOR_VARIANCE = 0.05
PRIOR_WEIGHT = 20
#: The bet is at most this share of the largest safe one (lam < 1 on every step of the round).
BET_SHARE = 0.5


def batch_gap(batch: Sequence[bool]) -> float:
    """The unbiased gap term of one batch of k outcomes: its mean minus 1 when all passed."""
    if not batch:
        raise ValueError("a batch needs at least one outcome")
    passes = sum(1 for passed in batch if passed)
    return passes / len(batch) - (1.0 if passes == len(batch) else 0.0)


def inclusion_probability(batches: Sequence[Sequence[bool]], floor: float = FLOOR) -> float:
    """pi of a task in its next round from its own earlier included batches: 1 in round 1 and while its outcomes
    are mixed (passes and failures), ``floor`` while they are all alike."""
    seen = {passed for batch in batches for passed in batch}
    return 1.0 if len(seen) != 1 else floor


def draw(seed: int, task_id: str, round_number: int) -> float:
    """The uniform draw in [0, 1) of (seed, task, round): a hash, the same in every process and on replay."""
    digest = hashlib.sha256(f"{seed}\x00{task_id}\x00{round_number}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def included(seed: int, task_id: str, round_number: int, pi: float) -> bool:
    """Whether the task is in round ``round_number`` at inclusion probability ``pi`` (round 1: always)."""
    return round_number == 1 or pi >= 1.0 or draw(seed, task_id, round_number) < pi


def psi(lam: float) -> float:
    """``-log(1 - lam) - lam``, the empirical-Bernstein cumulant bound, for lam in [0, 1)."""
    return -math.log1p(-lam) - lam


@dataclass(frozen=True)
class Step:
    """One (round, task) term: its value Z, its range [low, high] and its prediction Z^ (all but Z known before
    it). The gap's terms range over [0, B]; the pass rate's difference terms (:func:`rate_term`) over a range that
    can start below 0."""

    value: float
    high: float
    prediction: float
    low: float = 0.0

    @property
    def width(self) -> float:
        return self.high - self.low


@dataclass
class RoundSequence:
    """The running empirical-Bernstein confidence sequence of a suite mean (the gap, or the pass rate), fed round
    by round (module docstring): every round has one step per task, all with the same bet c.

    ``tasks``: T; ``alpha``: each side's level; ``rounds``: the cap's rounds (the horizon the bet is tuned for)."""

    tasks: int
    alpha: float
    rounds: int
    weighted: float = 0.0  # sum of c Z
    penalty: float = 0.0  # sum of psi(c W) ((Z - Z^) / W)^2, W the step's width
    bets: float = 0.0  # T sum_r c_r
    squares: float = 0.0  # sum of (Z - Z^)^2 over the steps so far
    steps: int = 0

    def bet(self, width: float) -> float:
        """The bet c of the next round, from the earlier rounds only; ``width``: the widest step of the round."""
        variance = (PRIOR_VARIANCE * PRIOR_WEIGHT + self.squares) / (PRIOR_WEIGHT + self.steps)
        horizon = self.tasks * max(1, self.rounds)
        tuned = math.sqrt(2.0 * math.log(1.0 / self.alpha) / (max(variance, 1e-9) * horizon))
        return min(tuned, BET_SHARE / width)

    def add_round(self, steps: Sequence[Step]) -> None:
        """One round's steps, every task's one (a task left out adds its step too: its value is then fixed)."""
        if len(steps) != self.tasks:
            raise ValueError(f"a round has one step per task: {len(steps)} for {self.tasks}")
        c = self.bet(max(step.width for step in steps))
        for step in steps:
            residual = step.value - step.prediction
            self.weighted += c * step.value
            self.penalty += psi(c * step.width) * (residual / step.width) ** 2
            self.squares += residual * residual
            self.steps += 1
        self.bets += c * self.tasks

    @property
    def estimate(self) -> float:
        """The bets' weighted mean of the terms: the point the bounds are centred on."""
        return self.weighted / self.bets if self.bets else 0.0

    def bounds(self, floor: float = 0.0, ceiling: float = 1.0) -> tuple[float, float]:
        """The one-sided bounds of the suite mean after the rounds so far, each at 1 - alpha, clipped to its
        range [floor, ceiling]."""
        if not self.bets:
            return floor, ceiling
        width = math.log(1.0 / self.alpha) + self.penalty
        low = (self.weighted - width) / self.bets
        high = (self.weighted + width) / self.bets
        return max(floor, low), min(ceiling, high)


#: The gap's sequence (the name its first users know).
GapSequence = RoundSequence


def rate_term(passed: float | None, prediction: float, pi: float) -> Step:
    """The pass rate's difference term of one (round, task): ``m + 1{included} (X - m) / pi`` with m the task's
    prediction, fixed before the round, and X the batch's share of passes (None: not included). Its mean given the
    past is the task's pass rate whatever m is; a task whose outcomes match m adds no noise, which plain
    Horvitz-Thompson (``X / pi``) would."""
    low, high = prediction * (1.0 - 1.0 / pi), prediction + (1.0 - prediction) / pi
    value = prediction if passed is None else prediction + (float(passed) - prediction) / pi
    return Step(value, high if high > low else low + 1e-9, prediction, low)


def top_of(k: int, pi: float) -> float:
    """B, the largest gap term of a task at inclusion probability pi: ``(k - 1) / (k pi)`` (at least a tiny positive
    range for k = 1, whose gap is 0)."""
    return max((k - 1) / k, 1e-9) / pi


def baseline_bounds(counts: Sequence[tuple[int, int]], tail: float) -> tuple[float, float]:
    """One-sided bounds, each at 1 - ``tail``, of a fixed-n baseline's suite pass rate (the mean of its tasks' rates)
    from its (passes, scored) per task. Every task at one n: the exact Clopper-Pearson bounds on the pooled count
    (the binomial bounds hold for a sum of independent Bernoullis whatever their rates, Hoeffding 1956); else
    Hoeffding's bound on the mean of the task means."""
    from pytest_consistency.stats.binomial import clopper_pearson

    tasks = [(c, n) for c, n in counts if n > 0]
    if not tasks:
        return 0.0, 1.0
    if len({n for _, n in tasks}) == 1:
        interval = clopper_pearson(sum(c for c, _ in tasks), sum(n for _, n in tasks), 1.0 - 2.0 * tail)
        return interval.low, interval.high
    mean = sum(c / n for c, n in tasks) / len(tasks)
    width = math.sqrt(sum(1.0 / n for _, n in tasks) * math.log(1.0 / tail) / 2.0) / len(tasks)
    return max(0.0, mean - width), min(1.0, mean + width)
