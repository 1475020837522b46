"""A closed interval, the one value type every statistic in this package returns.

It exists so that rates, pass^k figures and gaps travel with their uncertainty as one immutable object. Assumptions:
rates are fractions in [0, 1]; gaps (Mean@k - pass^k) are in percentage points; both ends are finite and low <= high.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Interval:
    """The closed interval [low, high]."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            raise ValueError(f"interval ends must be finite, got [{self.low}, {self.high}]")
        if self.low > self.high:
            raise ValueError(f"interval low must not exceed high, got [{self.low}, {self.high}]")

    def contains(self, x: float) -> bool:
        """True when ``x`` lies in the interval, both ends included."""
        return self.low <= x <= self.high

    @property
    def width(self) -> float:
        """high - low."""
        return self.high - self.low
