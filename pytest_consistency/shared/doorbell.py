"""The doorbell by which a concurrency slot's release wakes the waiter at the head of the queue (``<route>.bell``).

A FIFO that every release writes one byte to, which the head waits on. That makes the hand-off about as fast as the
kernel can wake a process, where polling would trade latency against wasted wake-ups; the head still looks at the
slots every so often (:mod:`.slots`), because a holder killed by a signal releases its slot without ringing. Where a
FIFO cannot be made (a file system without them, a regular file in its place) there is no doorbell and the head
polls. No library offers a cross-process wake-up of this kind (``filelock`` only locks), so it is written here.
"""

from __future__ import annotations

import asyncio
import os
import selectors
import stat

#: How long a wait on the bell sleeps instead, in an asyncio loop without readers (a poll, like the head's).
_PAUSE_WITHOUT_READERS = 0.02


class Doorbell:
    """The FIFO at ``path``; :attr:`path` is None where one could not be made (then nobody rings or listens)."""

    def __init__(self, path: str) -> None:
        self.path = _make_fifo(path)

    def listen(self) -> tuple[int, int] | None:
        """Open the doorbell to wait on: its read end, and a write end held only so that the FIFO never reads as
        closed (which would make it readable forever) once a ringer has come and gone. The caller closes both."""
        if self.path is None:
            return None
        try:
            read_fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            write_fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            os.close(read_fd)
            return None
        return read_fd, write_fd

    def ring(self) -> None:
        if self.path is None:
            return
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: nobody is listening, so nobody is waiting for a slot
            return
        try:
            os.write(fd, b"\0")
        except OSError:  # full (the head has rings to read already) or the head just left
            pass
        finally:
            os.close(fd)


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


def drain(fd: int) -> None:
    """Read every ring waiting on the bell's read end ``fd``, so that the next wait waits for a new one."""
    while True:
        try:
            if not os.read(fd, 512):
                return
        except BlockingIOError:
            return


def wait_readable(fd: int, seconds: float) -> None:
    """Block until ``fd`` is readable (a ring), or ``seconds`` have passed."""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        selector.select(seconds)


async def await_readable(fd: int, seconds: float) -> None:
    """:func:`wait_readable` without blocking the event loop (through the loop's reader)."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_reader(fd, wake)
    except NotImplementedError:  # a loop without readers: poll instead
        await asyncio.sleep(min(seconds, _PAUSE_WITHOUT_READERS))
        return
    try:
        await asyncio.wait([ready], timeout=seconds)
    finally:
        loop.remove_reader(fd)
