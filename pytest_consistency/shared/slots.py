"""The concurrency slots of one route (``--consistency-concurrency``), shared by every process of a session.

Concurrency is N lock files, ``<route>.slot-<i>``, each held with an exclusive ``flock`` for the whole request (see
:meth:`.throttle.Throttle.acquire` for where a request ends: its last body byte, or a stream's headers). A lock,
not a counter, because the kernel releases it when its holder dies: a worker killed mid-request (a timeout, ``-x``,
an OOM kill) cannot leak a slot and stall the rest of the session. Every acquisition opens its own file descriptor,
and ``flock`` locks of separate opens conflict even inside one process, so threads and asyncio tasks of one worker
each count as one request.

Who gets the next free slot is decided by a ticket queue, not by whoever polls first. Without it a worker that
releases a slot and asks again a microsecond later (an agent's next call) finds the slot free before any sleeping
waiter wakes, and can keep it for as long as it loops. Each acquisition takes a ticket from ``<route>.queue`` and
holds a lock on ``<route>.q-<ticket>`` while it waits; only the oldest live ticket, the head, may take a slot, so
slots are handed out first come, first served. A waiter that dies or gives up leaves an unlocked ticket file, which
its successors step over.

The head learns that a slot came free from the :mod:`.doorbell`, and still looks every 50 ms, because a holder
killed by a signal releases its slot without ringing. Waiters behind the head, which only need to notice that the
head moved on, poll their predecessor's ticket lock every few milliseconds. Every wait is a short sleep or a wait
with a timeout, never a blocking ``flock``, so an acquire timeout and the cancellation of an asyncio task always
take effect, and the async API never blocks the event loop for longer than the queue file's lock is held (one
read and one write).

Why ``flock`` by hand and not ``filelock`` (which the rate limit and the token ledger use): a slot is held past the
call that took it and released from whichever thread closes the response, or from a finalizer (``filelock``'s
holds are per thread unless shared, and a shared object is reentrant, so two tasks of one thread would both get
it); a waiter must test its predecessor's ticket lock without taking it (``LOCK_SH | LOCK_NB``) and remove the file
of a dead one; and the head's look at N slot files is in the hand-off's hot path (a few microseconds a file here,
about 200 us through ``filelock``'s acquire). The queue file's lock is the same short read-and-write as the rate
file's, but it is taken twice per request in that path, and this module needs ``fcntl`` anyway.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass

from pytest_consistency.shared import record
from pytest_consistency.shared.doorbell import Doorbell, await_readable, drain, wait_readable

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: Whether slots can be shared at all: ``flock`` (and FIFOs) need Linux or macOS.
AVAILABLE = fcntl is not None

#: First pause of a polling wait; pauses double from here (with jitter, so waiters do not wake in lockstep).
_PAUSE_MIN = 0.001
#: Longest pause of a waiter behind the head, polling its predecessor's ticket.
_QUEUE_PAUSE_MAX = 0.005
#: Longest pause of the head polling the slots when no doorbell could be made (a file system without FIFOs).
_SLOT_PAUSE_MAX = 0.02
#: How long the head waits on the doorbell before looking at the slots anyway (a killed holder never rings).
_BELL_TIMEOUT = 0.05

#: Cuts a wait of so many seconds short at the caller's deadline, or raises once the deadline has passed.
Bound = Callable[[float], float]


@dataclass(frozen=True)
class _Sleep:
    seconds: float


@dataclass(frozen=True)
class _Listen:
    """Wait until ``fd`` is readable, or ``seconds`` have passed."""

    fd: int
    seconds: float


_Steps = Generator[_Sleep | _Listen, None, int]


class Slots:
    """``concurrency`` slots behind a first-come, first-served queue; the files are ``<prefix>.<suffix>``."""

    def __init__(self, prefix: str, concurrency: int) -> None:
        self.prefix = prefix
        self.concurrency = concurrency
        self._bell = Doorbell(self._path("bell"))

    def take(self, bound: Bound) -> int:
        """Wait for a slot, blocking; returns the descriptor that holds it, for :meth:`release`. Any exception
        (``bound``'s, KeyboardInterrupt) leaves nothing held and withdraws the ticket."""
        steps = self._steps()
        try:
            step = next(steps)
            while True:
                if isinstance(step, _Listen):
                    wait_readable(step.fd, bound(step.seconds))
                else:
                    time.sleep(bound(step.seconds))
                step = next(steps)
        except StopIteration as done:
            fd: int = done.value
            return fd
        finally:
            steps.close()

    async def atake(self, bound: Bound) -> int:
        """:meth:`take` without blocking the loop; a cancelled wait leaves nothing held, like any exception."""
        steps = self._steps()
        try:
            step = next(steps)
            while True:
                if isinstance(step, _Listen):
                    await await_readable(step.fd, bound(step.seconds))
                else:
                    await asyncio.sleep(bound(step.seconds))
                step = next(steps)
        except StopIteration as done:
            fd: int = done.value
            return fd
        finally:
            steps.close()

    def release(self, fd: int) -> None:
        """Give back the slot held by ``fd`` (exactly once: a second close could close another request's lock)."""
        os.close(fd)  # releases the flock: this must come before the ring, which the head answers by looking
        self._bell.ring()

    def _path(self, suffix: str) -> str:
        return f"{self.prefix}.{suffix}"  # a str, not a Path: it is built several times per request

    def _steps(self) -> _Steps:
        """Queue up, then take a slot as the head; yields the waits for :meth:`take` or :meth:`atake`.

        All clean-up is in ``finally``, so closing the generator at any wait (a timeout, a cancelled task,
        KeyboardInterrupt) withdraws the ticket; the slot's descriptor is returned only once it is held.
        """
        ticket, low, ticket_fd = self._enqueue()
        bell: tuple[int, int] | None = None
        head = False
        try:
            pause = _PAUSE_MIN
            while low < ticket:
                if _locked(self._path(f"q-{low}")):
                    yield _Sleep(_jitter(pause))
                    pause = min(2 * pause, _QUEUE_PAUSE_MAX)
                else:  # finished, gave up or died: tickets never come back to life
                    low += 1
            head = True
            bell = self._bell.listen()  # before the first look, so a release after that look is not missed
            pause = _PAUSE_MIN
            while True:
                if bell is not None:
                    drain(bell[0])
                fd = self._try_slots()
                if fd is not None:
                    return fd
                if bell is not None:
                    yield _Listen(bell[0], _BELL_TIMEOUT)
                else:
                    yield _Sleep(_jitter(pause))
                    pause = min(2 * pause, _SLOT_PAUSE_MAX)
        finally:
            if bell is not None:
                os.close(bell[0])
                os.close(bell[1])
            self._dequeue(ticket, ticket_fd, head)

    def _enqueue(self) -> tuple[int, int, int]:
        """Take the next ticket and lock its file; returns the ticket, the lowest ticket that may still be live, and
        the ticket file's descriptor. The ticket file is locked before its number is published, so a successor never
        mistakes a live ticket for a dead one."""
        fd = os.open(self._path("queue"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            ticket, low = _counters(record.read(fd))
            while True:
                ticket_fd = os.open(self._path(f"q-{ticket}"), os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(ticket_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:  # only after a damaged counter: that ticket is someone's
                    os.close(ticket_fd)
                    ticket += 1
                except BaseException:
                    os.close(ticket_fd)
                    raise
            try:
                record.overwrite(fd, f"{ticket + 1} {low}")
            except BaseException:
                self._dequeue(ticket, ticket_fd, head=False)
                raise
            return ticket, min(low, ticket), ticket_fd
        finally:
            os.close(fd)

    def _dequeue(self, ticket: int, ticket_fd: int, head: bool) -> None:
        """Withdraw a ticket; a head also raises the low mark, since every ticket before it is gone for good."""
        try:
            os.unlink(self._path(f"q-{ticket}"))
        except FileNotFoundError:
            pass
        os.close(ticket_fd)
        if not head:
            return
        fd = os.open(self._path("queue"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            next_ticket, low = _counters(record.read(fd))
            if low <= ticket:
                record.overwrite(fd, f"{max(next_ticket, ticket + 1)} {ticket + 1}")
        finally:
            os.close(fd)

    def _try_slots(self) -> int | None:
        for i in range(self.concurrency):
            fd = os.open(self._path(f"slot-{i}"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            except BaseException:
                os.close(fd)
                raise
            return fd
        return None


def _jitter(pause: float) -> float:
    return pause * (0.5 + random.random() / 2)


def _counters(raw: bytes) -> tuple[int, int]:
    """The queue file's ``<next ticket> <low mark>``; a damaged file starts over (see :meth:`Slots._enqueue`)."""
    try:
        next_ticket, low = (int(part) for part in raw.decode().split())
    except ValueError:
        return 0, 0
    return (next_ticket, low) if 0 <= low <= next_ticket else (0, 0)


def _locked(path: str) -> bool:
    """Whether a ticket file is still locked by a live waiter; an abandoned one is removed on the way."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    try:
        os.unlink(path)  # its waiter died: ticket numbers are never reused, so no live waiter owns this path
    except FileNotFoundError:
        pass
    return False
