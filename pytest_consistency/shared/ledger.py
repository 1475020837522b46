"""A token budget shared by every process of a session (xdist workers included).

The count lives in one small file, read, added to and written back while an exclusive lock on its neighbour
``<file>.lock`` is held (``filelock``: ``flock`` on Linux and macOS, ``msvcrt.locking`` on Windows), so workers add
to one total instead of each spending a full budget. It is the only file processes share, and only through the
lock. The new total replaces the file whole (``os.replace``), so a worker killed while writing leaves the last
total, never an empty count.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from filelock import BaseFileLock

#: Seconds between two attempts at a held lock: it is held for one read and one write, a few microseconds.
POLL = 0.001


class TokenBudgetExceeded(RuntimeError):
    """Raised instead of sending a live request once the session's token budget is used up."""


class Ledger:
    def __init__(self, path: Path, limit: int) -> None:
        self.path = path
        self.limit = limit
        # Imported here: a session without a budget does not pay for filelock's import (30-70 ms).
        from filelock import FileLock

        # One lock object per ledger; its holds are per thread (filelock's default), so two threads of one worker
        # exclude each other as two workers do.
        self._lock: BaseFileLock = FileLock(f"{path}.lock", mode=0o600)

    def _update(self, add: int) -> int:
        with self._lock.acquire(poll_interval=POLL):
            try:
                total = int(self.path.read_text() or "0") + add
            except FileNotFoundError:
                total = add
            if add:
                scratch = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
                fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                try:
                    os.write(fd, str(total).encode())
                finally:
                    os.close(fd)
                os.replace(scratch, self.path)
            return total

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
