"""Limits on live requests shared by every process of a session (``--consistency-concurrency``, ``--consistency-rpm``).

Repetitions multiply requests, and xdist multiplies them again: eight workers each running one repetition at a time
are eight concurrent calls, which is how a run meets a provider's 429s and then measures the rate limiter instead
of the model. A per-process limit cannot help, so the limits live in a directory every worker of the session shares
(like the token ledger), one set of files per route so two providers do not slow each other down.

Concurrency is N lock files, ``<route>.slot-<i>``, each held with an exclusive ``flock`` for the whole request
(see :meth:`Throttle.acquire` for where a request ends: its last body byte, or a stream's headers). A
lock, not a counter, because the kernel releases it when its holder dies: a worker killed mid-request (a timeout,
``-x``, an OOM kill) cannot leak a slot and stall the rest of the session. Every acquisition opens its own file
descriptor, and ``flock`` locks of separate opens conflict even inside one process, so threads and asyncio tasks of
one worker each count as one request.

Who gets the next free slot is decided by a ticket queue, not by whoever polls first. Without it a worker that
releases a slot and asks again a microsecond later (an agent's next call) finds the slot free before any sleeping
waiter wakes, and can keep it for as long as it loops. Each acquisition takes a ticket from ``<route>.queue`` and
holds a lock on ``<route>.q-<ticket>`` while it waits; only the oldest live ticket, the head, may take a slot, so
slots are handed out first come, first served. A waiter that dies or gives up leaves an unlocked ticket file, which
its successors step over.

The head learns that a slot came free from a doorbell, ``<route>.bell``: a FIFO that every release writes one byte
to, which the head waits on. That makes the hand-off about as fast as the kernel can wake a process, where polling
would trade latency against wasted wake-ups; the head still looks every 50 ms, because a holder killed by a signal
releases its slot without ringing. Waiters behind the head, which only need to notice that the head moved on,
poll their predecessor's ticket lock every few milliseconds. Every wait is a short sleep or a wait with a timeout,
never a blocking ``flock``, so an acquire timeout and the cancellation of an asyncio task always take effect, and
the async API never blocks the event loop for longer than a lock held for a few microseconds.

The rate limit spaces request starts ``60 / rpm`` seconds apart: ``<route>.rpm`` holds, under a ``flock``, the
wall-clock time the next request may start; each request reserves ``max(now, next)``, moves ``next`` one interval
on, and sleeps until its reservation. A request first takes its slot and then its start time, so starts leave in
reservation order.

The time spent waiting is returned to the caller (:class:`Waited`), so each repetition can report it and keep it
out of its measured latency.

``flock`` and FIFOs need Linux or macOS: on Windows a limit is refused with an error instead of silently ignored.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import random
import re
import selectors
import stat
import threading
import time
import weakref
from collections.abc import AsyncIterator, Generator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: First pause of a polling wait; pauses double from here (with jitter, so waiters do not wake in lockstep).
_PAUSE_MIN = 0.001
#: Longest pause of a waiter behind the head, polling its predecessor's ticket.
_QUEUE_PAUSE_MAX = 0.005
#: Longest pause of the head polling the slots when no doorbell could be made (a file system without FIFOs).
_SLOT_PAUSE_MAX = 0.02
#: How long the head waits on the doorbell before looking at the slots anyway (a killed holder never rings).
_BELL_TIMEOUT = 0.05


class ThrottleTimeout(RuntimeError):
    """Raised when a request could not start within the throttle's acquire timeout."""


@dataclass(frozen=True)
class Waited:
    """How long one request waited before it could start: for a concurrency slot, then for its rate-limit turn."""

    slot_seconds: float = 0.0
    rate_seconds: float = 0.0

    @property
    def seconds(self) -> float:
        return self.slot_seconds + self.rate_seconds


_NO_WAIT = Waited()


@dataclass(frozen=True)
class _Sleep:
    seconds: float


@dataclass(frozen=True)
class _Listen:
    """Wait until ``fd`` is readable, or ``seconds`` have passed."""

    fd: int
    seconds: float


_Steps = Generator[_Sleep | _Listen, None, int]


def positive_limit(value: int | None, option: str) -> int | None:
    """The limit, or None for no limit; anything but a positive int is refused, naming the command-line option."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{option} must be a positive integer (leave it unset for no limit), got {value!r}")
    return value


def file_stem(route: str) -> str:
    """The route as a file name: itself when it is a plain name, else a digest of it (URLs, slashes, empty)."""
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", route):
        return route
    return "route-" + hashlib.sha256(route.encode()).hexdigest()[:16]


def next_start(raw: bytes, now: float) -> float:
    """When the next request may start, from the rate file's content; anything unreadable means now."""
    try:
        stored = float(raw.decode())
    except ValueError:  # empty (first request), or damaged: UnicodeDecodeError is a ValueError too
        return now
    return max(now, stored) if math.isfinite(stored) else now


def _jitter(pause: float) -> float:
    return pause * (0.5 + random.random() / 2)


#: Size of the queue and rate files' one record. Written whole at offset 0 and padded with spaces, never truncated:
#: on ext4 an ``ftruncate`` costs over a millisecond, which every request would pay.
_RECORD = 64


def _overwrite(fd: int, text: str) -> None:
    os.pwrite(fd, text.ljust(_RECORD).encode(), 0)


def _read_all(fd: int) -> bytes:
    return os.pread(fd, _RECORD, 0).strip()


class Held:
    """A slot taken by :meth:`Throttle.acquire`: released once, by :meth:`release` (any later call does nothing),
    or when the object is garbage-collected, so a response nobody closes cannot keep its slot for the session."""

    def __init__(self, throttle: Throttle | None, fd: int | None, waited: Waited) -> None:
        self.waited = waited
        self._finalizer = weakref.finalize(self, throttle._release, fd) if throttle and fd is not None else None

    @property
    def held(self) -> bool:
        return self._finalizer is not None and self._finalizer.alive

    def release(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # runs its callback at most once, even from two threads


class Throttle:
    """The concurrency and rate limits of one route, shared through ``directory`` by every process of a session.

    ``with throttle.slot() as waited:`` (or ``async with throttle.aslot() as waited:``) around each live request;
    ``waited.seconds`` is the time spent waiting before it. ``acquire_timeout`` bounds that wait (None: forever);
    past it :class:`ThrottleTimeout` is raised and nothing is held. With neither limit set both are free no-ops.
    """

    def __init__(
        self,
        directory: Path,
        route: str,
        concurrency: int | None,
        rpm: int | None,
        *,
        acquire_timeout: float | None = None,
    ) -> None:
        self.concurrency = positive_limit(concurrency, "--consistency-concurrency")
        self.rpm = positive_limit(rpm, "--consistency-rpm")
        if acquire_timeout is not None and not acquire_timeout >= 0:  # `not >=` refuses NaN too
            raise ValueError(f"acquire_timeout must be a number of seconds >= 0 or None, got {acquire_timeout!r}")
        self.directory = directory
        self.route = route
        self.acquire_timeout = acquire_timeout
        self._prefix = os.path.join(directory, file_stem(route))
        self._total_lock = threading.Lock()
        self._total_waited = 0.0
        self._bell: str | None = None
        if not self.active:
            return
        if fcntl is None:
            raise NotImplementedError(
                "--consistency-concurrency and --consistency-rpm share their limits between processes through flock "
                "file locks, which need Linux or macOS; run without them on Windows"
            )
        directory.mkdir(parents=True, exist_ok=True)
        if self.concurrency is not None:
            self._bell = _make_fifo(self._path("bell"))

    @property
    def active(self) -> bool:
        return self.concurrency is not None or self.rpm is not None

    @property
    def total_waited(self) -> float:
        """Seconds this process's requests spent waiting on this throttle so far (other processes not included)."""
        with self._total_lock:
            return self._total_waited

    # -- the context managers -----------------------------------------------------------------------------------

    def acquire(self) -> Held:
        """Wait for a slot (and the request's rate-limit turn) and hold it until :meth:`Held.release`.

        For a request whose slot must outlive the call that sent it. What ``--consistency-concurrency`` promises:
        the transport releases a non-streamed request's slot when its response body has been read to the end or
        closed (or the request failed), not when the headers arrive, since the provider is still sending; a
        stream's (``text/event-stream``) when its headers arrive, because an agent calls tools while it reads a
        stream and holding the slot would deadlock ``--consistency-concurrency=1``.
        """
        if not self.active:
            return Held(None, None, _NO_WAIT)
        began = time.monotonic()
        deadline = self._deadline(began)
        fd = _run(self._slot_steps(deadline)) if self.concurrency is not None else None
        try:
            got_slot = time.monotonic() if fd is not None else began
            if self.rpm is not None:
                start = self._reserve(deadline)
                try:
                    while (left := start - time.time()) > 0:
                        time.sleep(left)
                except BaseException:
                    self._unreserve(start)
                    raise
            waited = self._note(began, got_slot)
        except BaseException:
            if fd is not None:
                self._release(fd)
            raise
        return Held(self, fd, waited)

    async def aacquire(self) -> Held:
        """:meth:`acquire` for asyncio: waits with ``asyncio.sleep`` and the loop's reader, and a cancelled wait
        holds nothing afterwards (its ticket is withdrawn, its slot released, its rate-limit turn given back if it
        is still the latest)."""
        if not self.active:
            return Held(None, None, _NO_WAIT)
        began = time.monotonic()
        deadline = self._deadline(began)
        fd = await _arun(self._slot_steps(deadline)) if self.concurrency is not None else None
        try:
            got_slot = time.monotonic() if fd is not None else began
            if self.rpm is not None:
                start = self._reserve(deadline)
                try:
                    while (left := start - time.time()) > 0:
                        await asyncio.sleep(left)
                except BaseException:
                    self._unreserve(start)
                    raise
            waited = self._note(began, got_slot)
        except BaseException:
            if fd is not None:
                self._release(fd)
            raise
        return Held(self, fd, waited)

    @contextmanager
    def slot(self) -> Iterator[Waited]:
        """Hold a slot (and the request's rate-limit turn) for the duration of the block."""
        held = self.acquire()
        try:
            yield held.waited
        finally:
            held.release()

    @asynccontextmanager
    async def aslot(self) -> AsyncIterator[Waited]:
        """:meth:`slot` for asyncio (see :meth:`aacquire`)."""
        held = await self.aacquire()
        try:
            yield held.waited
        finally:
            held.release()

    # -- concurrency: ticket queue, slots, doorbell -----------------------------------------------------------

    def _path(self, suffix: str) -> str:
        return f"{self._prefix}.{suffix}"  # a str, not a Path: it is built several times per request

    def _slot_steps(self, deadline: float | None) -> _Steps:
        """Queue up, then take a slot as the head; yields the waits for a driver (:func:`_run`, :func:`_arun`).

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
                    yield _Sleep(self._bounded(_jitter(pause), deadline))
                    pause = min(2 * pause, _QUEUE_PAUSE_MAX)
                else:  # finished, gave up or died: tickets never come back to life
                    low += 1
            head = True
            bell = self._listen()  # before the first look, so a release after that look is not missed
            pause = _PAUSE_MIN
            while True:
                if bell is not None:
                    _drain(bell[0])
                fd = self._try_slots()
                if fd is not None:
                    return fd
                if bell is not None:
                    yield _Listen(bell[0], self._bounded(_BELL_TIMEOUT, deadline))
                else:
                    yield _Sleep(self._bounded(_jitter(pause), deadline))
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
            ticket, low = _counters(_read_all(fd))
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
                _overwrite(fd, f"{ticket + 1} {low}")
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
            next_ticket, low = _counters(_read_all(fd))
            if low <= ticket:
                _overwrite(fd, f"{max(next_ticket, ticket + 1)} {ticket + 1}")
        finally:
            os.close(fd)

    def _try_slots(self) -> int | None:
        for i in range(self.concurrency or 0):
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

    def _release(self, fd: int) -> None:
        os.close(fd)  # releases the flock: this must come before the ring, which the head answers by looking
        self._ring()

    def _listen(self) -> tuple[int, int] | None:
        """Open the doorbell to wait on: its read end, and a write end held only so that the FIFO never reads as
        closed (which would make it readable forever) once a ringer has come and gone."""
        if self._bell is None:
            return None
        try:
            read_fd = os.open(self._bell, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            write_fd = os.open(self._bell, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            os.close(read_fd)
            return None
        return read_fd, write_fd

    def _ring(self) -> None:
        if self._bell is None:
            return
        try:
            fd = os.open(self._bell, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: nobody is listening, so nobody is waiting for a slot
            return
        try:
            os.write(fd, b"\0")
        except OSError:  # full (the head has rings to read already) or the head just left
            pass
        finally:
            os.close(fd)

    def _deadline(self, began: float) -> float | None:
        return None if self.acquire_timeout is None else began + self.acquire_timeout

    def _bounded(self, seconds: float, deadline: float | None) -> float:
        """A wait cut short at the deadline, or ThrottleTimeout once it has passed."""
        if deadline is None:
            return seconds
        left = deadline - time.monotonic()
        if left <= 0:
            raise ThrottleTimeout(
                f"throttle for route {self.route!r}: no request slot came free within the acquire timeout of "
                f"{self.acquire_timeout:g}s (--consistency-concurrency={self.concurrency}, shared by every worker "
                "of the session)"
            )
        return min(seconds, left)

    # -- rate: one shared "next start" time ---------------------------------------------------------------------

    def _reserve(self, deadline: float | None) -> float:
        """Reserve the next start time (wall clock, comparable between processes) and move it one interval on."""
        assert self.rpm is not None
        interval = 60.0 / self.rpm
        fd = os.open(self._path("rpm"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            now = time.time()
            start = next_start(_read_all(fd), now)
            if deadline is not None and start - now > deadline - time.monotonic():
                raise ThrottleTimeout(
                    f"throttle for route {self.route!r}: the next request start allowed by "
                    f"--consistency-rpm={self.rpm} is {start - now:.1f}s away, past the acquire timeout of "
                    f"{self.acquire_timeout:g}s"
                )
            _overwrite(fd, repr(start + interval))
            return start
        finally:
            os.close(fd)

    def _unreserve(self, start: float) -> None:
        """Give back a start time that will not be used, if no later request has reserved after it."""
        assert self.rpm is not None
        fd = os.open(self._path("rpm"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _read_all(fd) == repr(start + 60.0 / self.rpm).encode():
                _overwrite(fd, repr(start))
        finally:
            os.close(fd)

    def _note(self, began: float, got_slot: float) -> Waited:
        waited = Waited(got_slot - began, time.monotonic() - got_slot if self.rpm is not None else 0.0)
        with self._total_lock:
            self._total_waited += waited.seconds
        return waited


# -- helpers --------------------------------------------------------------------------------------------------------


def _counters(raw: bytes) -> tuple[int, int]:
    """The queue file's ``<next ticket> <low mark>``; a damaged file starts over (see :meth:`Throttle._enqueue`)."""
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


def _make_fifo(path: str) -> str | None:
    """The doorbell FIFO, or None where one cannot be made (waiters then poll the slots)."""
    try:
        os.mkfifo(path, 0o600)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        return path if stat.S_ISFIFO(os.stat(path).st_mode) else None
    except OSError:
        return None


def _drain(fd: int) -> None:
    while True:
        try:
            if not os.read(fd, 512):
                return
        except BlockingIOError:
            return


def _wait_readable(fd: int, seconds: float) -> None:
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        selector.select(seconds)


async def _await_readable(fd: int, seconds: float) -> None:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_reader(fd, wake)
    except NotImplementedError:  # a loop without readers: poll instead
        await asyncio.sleep(min(seconds, _SLOT_PAUSE_MAX))
        return
    try:
        await asyncio.wait([ready], timeout=seconds)
    finally:
        loop.remove_reader(fd)


def _run(steps: _Steps) -> int:
    """Drive :meth:`Throttle._slot_steps` by blocking; any exception closes it, which withdraws its ticket."""
    try:
        step = next(steps)
        while True:
            if isinstance(step, _Listen):
                _wait_readable(step.fd, step.seconds)
            else:
                time.sleep(step.seconds)
            step = next(steps)
    except StopIteration as done:
        fd: int = done.value
        return fd
    finally:
        steps.close()


async def _arun(steps: _Steps) -> int:
    """Drive :meth:`Throttle._slot_steps` without blocking the loop; cancellation closes it like :func:`_run`."""
    try:
        step = next(steps)
        while True:
            if isinstance(step, _Listen):
                await _await_readable(step.fd, step.seconds)
            else:
                await asyncio.sleep(step.seconds)
            step = next(steps)
    except StopIteration as done:
        fd: int = done.value
        return fd
    finally:
        steps.close()
