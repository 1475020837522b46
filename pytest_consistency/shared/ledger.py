"""A token budget shared by every process of a session (xdist workers included).

The count lives in one small file guarded by an exclusive ``flock``, so workers add to one total instead of
each spending a full budget. It is the only file processes share, and only through the lock.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class TokenBudgetExceeded(RuntimeError):
    """Raised instead of sending a live request once the session's token budget is used up."""


class Ledger:
    def __init__(self, path: Path, limit: int) -> None:
        self.path = path
        self.limit = limit

    def _update(self, add: int) -> int:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = os.read(fd, 64).decode() or "0"
            total = int(raw) + add
            if add:
                os.lseek(fd, 0, os.SEEK_SET)
                os.ftruncate(fd, 0)
                os.write(fd, str(total).encode())
            return total
        finally:
            os.close(fd)

    def spent(self) -> int:
        return self._update(0)

    def add(self, tokens: int) -> None:
        if tokens:
            self._update(tokens)

    def check(self) -> None:
        spent = self.spent()
        if spent > self.limit:
            raise TokenBudgetExceeded(
                f"token budget exhausted: {spent} tokens used > --consistency-token-budget={self.limit}; "
                "no further live calls are made in this session"
            )
