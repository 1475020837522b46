"""The rate limit's reservations: real processes, a real lock file, the real clock; no mocks.

What the rate file promises is checked on the reservations it hands out (each returned by :meth:`Rate.reserve`), not
on when sleeping processes woke: any two reservations are an interval apart however the processes are scheduled.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
from itertools import pairwise
from multiprocessing.synchronize import Event
from pathlib import Path

import pytest
from filelock import FileLock

from pytest_consistency.shared.rate import Rate, TooFar, next_start

SPAWN = multiprocessing.get_context("spawn")


def rate_of(directory: Path | str, rpm: int) -> Rate:
    return Rate(os.path.join(directory, "openai"), rpm)


def _reserve_repeatedly(directory: str, ready: Event, go: Event, out: str, reservations: int) -> None:
    rate = rate_of(directory, 600)
    ready.set()
    assert go.wait(30)
    Path(out).write_text("\n".join(repr(rate.reserve()) for _ in range(reservations)))


def _hold_the_lock(directory: str, holding: Event) -> None:
    with FileLock(os.path.join(directory, "openai.rpm.lock")):
        holding.set()
        time.sleep(60)


def test_next_start_reads_the_rate_file_defensively() -> None:
    assert next_start(b"", 100.0) == 100.0  # first request of the session
    assert next_start(b"99.5", 100.0) == 100.0  # the turn has passed: now
    assert next_start(b"100.25", 100.0) == 100.25
    for damaged in [b"garbage", b"inf", b"nan", b"\xff"]:
        assert next_start(damaged, 100.0) == 100.0


def test_reservations_of_several_processes_are_an_interval_apart(tmp_path: Path) -> None:
    """Three processes reserve eight starts each, all at once, at 600 rpm (an interval of 0.1 s)."""
    outs = [tmp_path / f"reserved-{k}" for k in range(3)]
    go = SPAWN.Event()
    ready = [SPAWN.Event() for _ in outs]
    processes = [
        SPAWN.Process(target=_reserve_repeatedly, args=(str(tmp_path), flag, go, str(out), 8))
        for flag, out in zip(ready, outs, strict=True)
    ]
    for process in processes:
        process.start()
    try:
        assert all(flag.wait(30) for flag in ready)
        began = time.time()
        go.set()
        for process in processes:
            process.join(30)
            assert process.exitcode == 0
    finally:
        for process in processes:
            process.kill()
            process.join(10)
    reserved = sorted(float(line) for out in outs for line in out.read_text().splitlines())
    assert len(reserved) == 24 and reserved[0] >= began
    gaps = [b - a for a, b in pairwise(reserved)]
    # exact up to the rounding of a wall-clock time (its last bit is 2.4e-7 s): one reservation at a time, each
    # moving the next one interval on
    assert min(gaps) >= 0.1 - 1e-6, gaps


def test_a_start_past_the_deadline_is_refused_and_reserves_nothing(tmp_path: Path) -> None:
    rate = rate_of(tmp_path, 1)  # one start a minute
    first = rate.reserve()
    for _ in range(2):  # the refused request reserved nothing: the next start is still one interval on, not two
        with pytest.raises(TooFar) as refused:
            rate.reserve(time.monotonic() + 0.1)
        assert 50 < refused.value.away <= 60
    assert rate.reserve() == first + 60


def test_a_start_given_back_is_reused_only_if_it_was_the_latest(tmp_path: Path) -> None:
    rate = rate_of(tmp_path, 60)  # one a second
    first = rate.reserve()
    second = rate.reserve()
    rate.unreserve(second)
    assert rate.reserve() == second  # given back: the next request takes it
    third = rate.reserve()
    rate.unreserve(second)  # no longer the latest: giving it back would let two requests start together
    assert rate.reserve() == third + 1 and second == first + 1


def test_a_holder_of_the_lock_that_dies_does_not_stall_the_rate(tmp_path: Path) -> None:
    holding = SPAWN.Event()
    holder = SPAWN.Process(target=_hold_the_lock, args=(str(tmp_path), holding))
    try:
        holder.start()
        assert holding.wait(30)
        holder.kill()  # killed inside the critical section: the kernel releases its flock
        holder.join(10)
        rate_of(tmp_path, 60).reserve()
    finally:
        holder.kill()
        holder.join(10)


def test_an_async_reservation_waits_for_a_held_lock_without_blocking_the_loop(tmp_path: Path) -> None:
    holding = SPAWN.Event()
    holder = SPAWN.Process(target=_hold_the_lock, args=(str(tmp_path), holding))
    ticks: list[float] = []

    async def main() -> None:
        stop = asyncio.Event()

        async def ticker() -> None:
            while not stop.is_set():
                ticks.append(time.monotonic())
                await asyncio.sleep(0.005)

        ticking = asyncio.create_task(ticker())
        reserving = asyncio.create_task(rate_of(tmp_path, 60).areserve())
        while len(ticks) < 10:  # the loop runs while the reservation waits for the lock
            await asyncio.sleep(0.005)
        assert not reserving.done()
        holder.kill()
        await reserving
        stop.set()
        await ticking

    try:
        holder.start()
        assert holding.wait(30)
        asyncio.run(main())
    finally:
        holder.kill()
        holder.join(10)
