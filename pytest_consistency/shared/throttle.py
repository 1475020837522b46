"""Limits on live requests shared by every process of a session (``--consistency-concurrency``, ``--consistency-rpm``).

Repetitions multiply requests, and xdist multiplies them again: eight workers each running one repetition at a time
are eight concurrent calls, which is how a run meets a provider's 429s and then measures the rate limiter instead
of the model. A per-process limit cannot help, so the limits live in a directory every worker of the session shares
(like the token ledger), one set of files per route so two providers do not slow each other down.

:class:`Throttle` composes the two limits: a concurrency slot (:mod:`.slots`: lock files behind a first-come,
first-served ticket queue, woken by the :mod:`.doorbell`), then a rate-limit turn (:mod:`.rate`: one shared "next
start" time). A request first takes its slot and then its start time, so starts leave in reservation order.

The time spent waiting is returned to the caller (:class:`Waited`), so each repetition can report it and keep it
out of its measured latency.

``flock`` and FIFOs need Linux or macOS: on Windows a limit is refused with an error instead of silently ignored.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from pytest_consistency.shared import slots
from pytest_consistency.shared.rate import Rate, TooFar


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
        self._total_lock = threading.Lock()
        self._total_waited = 0.0
        self._slots: slots.Slots | None = None
        self._rate: Rate | None = None
        if not self.active:
            return
        if not slots.AVAILABLE:
            raise NotImplementedError(
                "--consistency-concurrency and --consistency-rpm share their limits between processes through flock "
                "file locks, which need Linux or macOS; run without them on Windows"
            )
        directory.mkdir(parents=True, exist_ok=True)
        prefix = os.path.join(directory, file_stem(route))
        if self.concurrency is not None:
            self._slots = slots.Slots(prefix, self.concurrency)
        if self.rpm is not None:
            self._rate = Rate(prefix, self.rpm)

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
        fd = self._slots.take(lambda seconds: self._bounded(seconds, deadline)) if self._slots else None
        try:
            got_slot = time.monotonic() if fd is not None else began
            if self._rate is not None:
                try:
                    start = self._rate.reserve(deadline)
                except TooFar as far:
                    raise self._too_far(far) from None
                try:
                    while (left := start - time.time()) > 0:
                        time.sleep(left)
                except BaseException:
                    self._rate.unreserve(start)
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
        fd = await self._slots.atake(lambda seconds: self._bounded(seconds, deadline)) if self._slots else None
        try:
            got_slot = time.monotonic() if fd is not None else began
            if self._rate is not None:
                try:
                    start = await self._rate.areserve(deadline)
                except TooFar as far:
                    raise self._too_far(far) from None
                try:
                    while (left := start - time.time()) > 0:
                        await asyncio.sleep(left)
                except BaseException:
                    self._rate.unreserve(start)
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

    # -- the parts --------------------------------------------------------------------------------------------------

    def _release(self, fd: int) -> None:
        assert self._slots is not None
        self._slots.release(fd)

    def _too_far(self, far: TooFar) -> ThrottleTimeout:
        return ThrottleTimeout(
            f"throttle for route {self.route!r}: the next request start allowed by "
            f"--consistency-rpm={self.rpm} is {far.away:.1f}s away, past the acquire timeout of "
            f"{self.acquire_timeout:g}s"
        )

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

    def _note(self, began: float, got_slot: float) -> Waited:
        waited = Waited(got_slot - began, time.monotonic() - got_slot if self.rpm is not None else 0.0)
        with self._total_lock:
            self._total_waited += waited.seconds
        return waited
