"""Bisection: the step whose resampling alone reproduces a task's inconsistency.

Definitions (one recorded repetition REP of S steps; resampling step s replays REP's steps 1..s-1 and lets s..S go
live, M times):

- resampling step s *reproduces* the inconsistency, R(s), when the M resampled outcomes include at least one pass
  and at least one failure;
- R(S+1) is false by definition (nothing is resampled: REP replays as recorded, one outcome);
- the step whose resampling *alone* reproduces it is a step s with R(s) and not R(s+1): with REP's decisions up to
  s-1 held the outcome is still open, and once step s's decision is held too it is settled. The inconsistency
  is then in the sampling of step s.

Resampling step 1 replays nothing, so R(1) is a fresh run of the task; when it is false in M samples there is no
inconsistency to attribute and the search stops. Otherwise the search is a binary search on [1, S+1) keeping
R(low) true and R(high) false, which ends at a step with R(s) and not R(s+1) after about log2(S) probes. When R is
monotone (holding more of the prefix never makes the outcome less settled) that step is the earliest such step
and the only one; the probes it made are returned, so a non-monotone pattern shows.

Pure: ``reproduces`` is the caller's probe (a resample session); this module only decides which step to ask.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Bisection:
    """The step found (None: resampling step 1 does not reproduce an inconsistency), and every probe's answer."""

    step: int | None
    steps: int
    probes: dict[int, bool] = field(default_factory=dict)

    def sentence(self) -> str:
        tried = ", ".join(f"step {s}: {'reproduces' if r else 'settled'}" for s, r in sorted(self.probes.items()))
        if self.step is None:
            return f"no inconsistency to attribute: resampling step 1 (a fresh run) gives one outcome ({tried})"
        return (
            f"step {self.step} is the step whose resampling alone reproduces the inconsistency: resampled from step "
            f"{self.step} the outcomes differ, with step {self.step} held they do not ({tried})"
        )


def bisect(steps: int, reproduces: Callable[[int], bool]) -> Bisection:
    """Search ``1..steps`` for a step s with ``reproduces(s)`` and not ``reproduces(s + 1)`` (see the module)."""
    if steps < 1:
        raise ValueError(f"a trajectory of {steps} steps has no step to resample")
    result = Bisection(None, steps)

    def probe(step: int) -> bool:
        if step > steps:
            return False
        if step not in result.probes:
            result.probes[step] = bool(reproduces(step))
        return result.probes[step]

    if not probe(1):
        return result
    low, high = 1, steps + 1
    while high - low > 1:
        middle = (low + high) // 2
        if probe(middle):
            low = middle
        else:
            high = middle
    result.step = low
    return result
