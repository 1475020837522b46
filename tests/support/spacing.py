"""Whether request starts kept a rate limit's spacing, judged from lower bounds only, so that load cannot fail it.

A rate limit promises that request *reservations* are at least ``interval`` apart and that no request starts before
its reservation; it cannot promise that two observed starts are an interval apart, since a process that overslept its
turn (a busy machine) starts late while the next one starts on time. What any observer can check is this: every
request read its ``before`` time before it asked for its turn, so its reservation is at or after it, and its
``start`` after the turn came. For any time ``t`` among the befores, the ``m`` requests that asked at or after ``t``
hold ``m`` distinct reservations at or after ``t``, spaced ``interval`` apart, so at least ``m - i`` of all the
starts lie at or after ``t + i * interval``. Lateness only moves starts later, so the check holds on a loaded
machine; without the limit, requests asked together start together and it fails.
"""

from __future__ import annotations

from collections.abc import Sequence


def spacing_shortfalls(befores: Sequence[float], starts: Sequence[float], interval: float) -> list[str]:
    """What the starts owe the spacing (empty when kept). ``befores`` and ``starts`` need not be paired; the
    starts must include every request's, the befores any subset."""
    problems = []
    for t in sorted(set(befores)):
        asked = sum(before >= t for before in befores)
        for i in range(1, asked):
            due = t + i * interval
            late_enough = sum(start >= due - 1e-6 for start in starts)
            if late_enough < asked - i:
                problems.append(
                    f"{asked} requests asked at or after {t:.3f}, so {asked - i} starts are due at or after "
                    f"{due:.3f}; {late_enough} are"
                )
    return problems
