"""The rate limit of one route (``--consistency-rpm``), shared by every process of a session.

The rate limit spaces request starts ``60 / rpm`` seconds apart: ``<route>.rpm`` holds the wall-clock time (comparable
between processes) the next request may start; each request reserves ``max(now, next)``, moves ``next`` one interval
on, and sleeps until its reservation. Reservations are made one at a time, so any two are at least one interval
apart, whichever processes made them. The throttle takes a request's slot first and then its start time, so with
both limits starts leave in reservation order.

The file is read and written while an exclusive lock on its neighbour ``<route>.rpm.lock`` is held through
``filelock`` (as the token ledger's), a critical section of one read and one write: ``flock`` underneath, which
the kernel releases if the holder dies, polled every millisecond (:data:`POLL`) by a process that finds it
held. Taking it costs about 200 us against a hand-written ``flock``'s 10 us, once per live request.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from typing import TYPE_CHECKING

from pytest_consistency.shared import record

if TYPE_CHECKING:
    from filelock import BaseFileLock

#: Seconds between two attempts at the held lock: it is held for one read and one write, a few microseconds.
POLL = 0.001


class TooFar(Exception):
    """The next start is further away than the caller may wait; nothing was reserved."""

    def __init__(self, away: float) -> None:
        super().__init__(f"the next start is {away:.1f}s away")
        self.away = away


def next_start(raw: bytes, now: float) -> float:
    """When the next request may start, from the rate file's content; anything unreadable means now."""
    try:
        stored = float(raw.decode())
    except ValueError:  # empty (first request), or damaged: UnicodeDecodeError is a ValueError too
        return now
    return max(now, stored) if math.isfinite(stored) else now


class Rate:
    """At most ``rpm`` request starts a minute, through the files ``<prefix>.rpm`` and ``<prefix>.rpm.lock``."""

    def __init__(self, prefix: str, rpm: int) -> None:
        # Imported here: a session without a rate limit does not pay for filelock's import (30-70 ms).
        from filelock import FileLock, Timeout

        #: What a non-blocking acquire of a held lock raises.
        self._busy: type[Exception] = Timeout

        self.rpm = rpm
        self.interval = 60.0 / rpm
        self._path = f"{prefix}.rpm"
        # Holds are per thread (filelock's default), so two threads of one worker exclude each other as two workers
        # do; the lock is never held across an await, so asyncio tasks of one thread cannot interleave inside it.
        self._lock: BaseFileLock = FileLock(f"{self._path}.lock", mode=0o600)

    def reserve(self, deadline: float | None = None) -> float:
        """Reserve the next start time (``time.time()``) and move the next one interval on; raises :class:`TooFar`,
        reserving nothing, if that start is later than ``deadline`` (on ``time.monotonic()``; None: no deadline)."""
        while (start := self._try_reserve(deadline)) is None:
            time.sleep(POLL)
        return start

    async def areserve(self, deadline: float | None = None) -> float:
        """:meth:`reserve` for asyncio: a held lock is waited for with ``asyncio.sleep``, never by blocking the loop."""
        while (start := self._try_reserve(deadline)) is None:
            await asyncio.sleep(POLL)
        return start

    def _try_reserve(self, deadline: float | None) -> float | None:
        """:meth:`reserve` if the lock is free at once, else None."""
        try:
            self._lock.acquire(blocking=False)
        except self._busy:
            return None
        try:
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                now = time.time()
                start = next_start(record.read(fd), now)
                if deadline is not None and start - now > deadline - time.monotonic():
                    raise TooFar(start - now)
                record.overwrite(fd, repr(start + self.interval))
                return start
            finally:
                os.close(fd)
        finally:
            self._lock.release()

    def unreserve(self, start: float) -> None:
        """Give back a start time that will not be used, if no later request has reserved after it."""
        with self._lock.acquire(poll_interval=POLL):
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                if record.read(fd) == repr(start + self.interval).encode():
                    record.overwrite(fd, repr(start))
            finally:
                os.close(fd)
