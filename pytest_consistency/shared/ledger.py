"""The token and cost budgets shared by every process of a session (xdist workers included).

The token count lives in one small file (with a cost budget, the dollars in ``<file>.usd`` beside it), read, added to
and written back while an exclusive lock on its neighbour ``<file>.lock`` is held (``filelock``: ``flock`` on Linux
and macOS, ``msvcrt.locking`` on Windows), so workers add to one total instead of each spending a full budget. They
are the only files processes share, and only through the lock. A new total replaces its file whole
(``os.replace``), so a worker killed while writing leaves the last total, never an empty count.

The ledger prices nothing itself (this wing imports nothing of the plugin): the session hands it the function that
prices a call record (``model.prices``), and ``consistency.cost(usd)`` adds what a test spent beyond the calls.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from filelock import BaseFileLock

#: Seconds between two attempts at a held lock: it is held for one read and one write, a few microseconds.
POLL = 0.001


class TokenBudgetExceeded(RuntimeError):
    """Raised instead of sending a live request once the session's token budget is used up."""


class CostBudgetExceeded(RuntimeError):
    """Raised instead of sending a live request once the session's cost budget (US dollars) is used up."""


class Ledger:
    """What the session spent, in tokens and (with a cost budget) US dollars, against its budgets: ``limit`` tokens
    (None: no token budget) and ``cost_limit`` dollars (None: no cost budget)."""

    def __init__(
        self,
        path: Path,
        limit: int | None,
        cost_limit: float | None = None,
        price: Callable[[Any], float | None] | None = None,
    ) -> None:
        self.path = path
        self.limit = limit
        self.cost_limit = cost_limit
        #: Prices one call record (None: no price); used with a cost budget only.
        self.price = price
        self.usd_path = path.with_name(f"{path.name}.usd")
        # Imported here: a session without a budget does not pay for filelock's import (30-70 ms).
        from filelock import FileLock

        # One lock object per ledger; its holds are per thread (filelock's default), so two threads of one worker
        # exclude each other as two workers do.
        self._lock: BaseFileLock = FileLock(f"{path}.lock", mode=0o600)

    @staticmethod
    def _read(path: Path, kind: type[int] | type[float]) -> int | float:
        try:
            return kind(path.read_text() or "0")
        except FileNotFoundError:
            return kind(0)

    @staticmethod
    def _write(path: Path, total: float) -> None:
        scratch = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, repr(total).encode())
        finally:
            os.close(fd)
        os.replace(scratch, path)

    def _update(self, add: int, usd: float = 0.0) -> tuple[int, float]:
        with self._lock.acquire(poll_interval=POLL):
            total = int(self._read(self.path, int)) + add
            dollars = float(self._read(self.usd_path, float)) + usd if self.cost_limit is not None else 0.0
            if add:
                self._write(self.path, total)
            if usd and self.cost_limit is not None:
                self._write(self.usd_path, dollars)
            return total, dollars

    def spent(self) -> int:
        return self._update(0)[0]

    def spent_usd(self) -> float:
        return self._update(0)[1]

    def add(self, tokens: int, usd: float = 0.0) -> None:
        if tokens or usd:
            self._update(tokens, usd)

    def spend(self, call: Any) -> None:
        """Add what a call record spent: its tokens, and with a cost budget its price (an unpriced call adds none)."""
        usd = (self.price(call) or 0.0) if self.price is not None and self.cost_limit is not None else 0.0
        self.add(call.total_tokens, usd)

    def check(self) -> None:
        tokens, usd = self._update(0)
        if self.limit is not None and tokens > self.limit:
            raise TokenBudgetExceeded(
                f"token budget exhausted: {tokens} tokens used > --consistency-token-budget={self.limit}; "
                "no further live calls are made in this session"
            )
        if self.cost_limit is not None and usd > self.cost_limit:
            raise CostBudgetExceeded(
                f"cost budget exhausted: ${usd:.6g} spent > --consistency-cost-budget={self.cost_limit:g}; "
                "no further live calls are made in this session"
            )
