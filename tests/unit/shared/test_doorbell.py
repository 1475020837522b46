"""The doorbell: a real FIFO, rung and listened to in one process (the slots' tests ring it across processes)."""

from __future__ import annotations

import asyncio
import os
import select
from pathlib import Path

from pytest_consistency.shared.doorbell import Doorbell, await_readable, drain, wait_readable


def readable(fd: int) -> bool:
    """poll, not select: select refuses a descriptor past 1,023, which a long test process can reach."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def test_a_ring_wakes_the_listener_and_draining_resets_it(tmp_path: Path) -> None:
    bell = Doorbell(str(tmp_path / "openai.bell"))
    listening = bell.listen()
    assert bell.path is not None and listening is not None
    read_fd, write_fd = listening
    try:
        assert not readable(read_fd)
        bell.ring()
        bell.ring()
        wait_readable(read_fd, 30)  # rung already: returns at once
        assert readable(read_fd)
        drain(read_fd)
        assert not readable(read_fd)  # both rings read; the held write end keeps the FIFO from reading as closed
        bell.ring()
        asyncio.run(await_readable(read_fd, 30))
        assert readable(read_fd)
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_ringing_with_nobody_listening_does_nothing(tmp_path: Path) -> None:
    bell = Doorbell(str(tmp_path / "openai.bell"))
    for _ in range(3):
        bell.ring()
    listening = bell.listen()
    assert listening is not None
    try:
        assert not readable(listening[0])  # no ring was kept for a later listener
    finally:
        os.close(listening[0])
        os.close(listening[1])


def test_where_no_fifo_can_be_made_there_is_no_doorbell(tmp_path: Path) -> None:
    (tmp_path / "openai.bell").write_text("a regular file where the FIFO would go")
    for path in [tmp_path / "openai.bell", tmp_path / "missing-directory" / "openai.bell"]:
        bell = Doorbell(str(path))
        assert bell.path is None and bell.listen() is None
        bell.ring()  # nothing to ring, no error
