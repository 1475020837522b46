"""The concurrency slots: real threads, real processes and real flock locks, no mocks.

Timing assertions are orderings, non-overlap and lower bounds only; the machine running these is shared and noisy.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from itertools import pairwise
from multiprocessing.synchronize import Event
from pathlib import Path

import pytest

from pytest_consistency.shared.slots import Slots

Interval = tuple[float, float, int]  # (entered, left, who)

SPAWN = multiprocessing.get_context("spawn")


class GaveUp(Exception):
    pass


def unbounded(seconds: float) -> float:
    return seconds


def within(seconds: float) -> Callable[[float], float]:
    """A bound that gives up (raises GaveUp) ``seconds`` from now, as the throttle's acquire timeout does."""
    deadline = time.monotonic() + seconds

    def bound(wait: float) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise GaveUp
        return min(wait, left)

    return bound


@contextmanager
def holding(slots: Slots, bound: Callable[[float], float] = unbounded) -> Iterator[None]:
    fd = slots.take(bound)
    try:
        yield
    finally:
        slots.release(fd)


def slots_of(directory: Path | str, concurrency: int = 1) -> Slots:
    return Slots(os.path.join(directory, "openai"), concurrency)


def max_overlap(intervals: list[Interval]) -> int:
    # a departure sorts before an arrival at the same instant: touching intervals do not overlap
    events = sorted([(enter, 1) for enter, _, _ in intervals] + [(left, -1) for _, left, _ in intervals])
    depth = peak = 0
    for _, step in events:
        depth += step
        peak = max(peak, depth)
    return peak


def hold_in_threads(slots: Slots, threads: int, holds: int, hold: float) -> list[Interval]:
    """Each thread takes a slot ``holds`` times and keeps it ``hold`` seconds; entry and exit are taken inside."""
    lock = threading.Lock()
    intervals: list[Interval] = []
    barrier = threading.Barrier(threads)

    def run(who: int) -> None:
        barrier.wait()
        for _ in range(holds):
            with holding(slots):
                entered = time.monotonic()
                time.sleep(hold)
                with lock:
                    intervals.append((entered, time.monotonic(), who))

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(run, range(threads)))  # re-raises a thread's exception
    return sorted(intervals)


# -- processes: module-level so that 'spawn' can import them ------------------------------------------------------


def _hold_repeatedly(directory: str, ready: Event, go: Event, out: str, holds: int, hold: float) -> None:
    slots = slots_of(directory)
    ready.set()
    assert go.wait(30)
    lines = []
    for _ in range(holds):
        with holding(slots, within(30)):
            entered = time.time()
            time.sleep(hold)
            lines.append(f"{entered!r} {time.time()!r}")
    Path(out).write_text("\n".join(lines))


def _hold_forever(directory: str, waiting: Event, holding_now: Event) -> None:
    slots = slots_of(directory)
    waiting.set()
    with holding(slots):
        holding_now.set()
        time.sleep(60)


# -- within one process --------------------------------------------------------------------------------------------


def test_one_slot_lets_one_thread_at_a_time(tmp_path: Path) -> None:
    intervals = hold_in_threads(slots_of(tmp_path), threads=4, holds=1, hold=0.05)
    assert len(intervals) == 4 and max_overlap(intervals) == 1
    assert all(left <= entered for (_, left, _), (entered, _, _) in pairwise(intervals))


def test_two_slots_let_two_threads_at_a_time_and_no_more(tmp_path: Path) -> None:
    intervals = hold_in_threads(slots_of(tmp_path, 2), threads=6, holds=1, hold=0.05)
    assert len(intervals) == 6 and max_overlap(intervals) == 2


def test_waiters_are_served_first_come_first_served(tmp_path: Path) -> None:
    """A thread that releases and asks again at once queues behind the others instead of taking the slot back."""
    intervals = hold_in_threads(slots_of(tmp_path), threads=3, holds=4, hold=0.025)
    order = [who for _, _, who in intervals]
    assert len(order) == 12 and max_overlap(intervals) == 1
    assert all(a != b for a, b in pairwise(order)), order


def test_without_a_doorbell_waiters_poll_and_still_take_turns(tmp_path: Path) -> None:
    (tmp_path / "openai.bell").write_text("a regular file where the FIFO would go")
    intervals = hold_in_threads(slots_of(tmp_path), threads=3, holds=2, hold=0.02)
    assert len(intervals) == 6 and max_overlap(intervals) == 1


def test_a_wait_given_up_leaves_no_ticket_and_holds_up_nobody(tmp_path: Path) -> None:
    slots = slots_of(tmp_path)
    with holding(slots):
        with pytest.raises(GaveUp), holding(slots, within(0.1)):
            pass
    with holding(slots, within(5)):  # the ticket of the waiter that gave up does not hold up the queue
        pass
    assert not list(tmp_path.glob("openai.q-*"))


# -- across processes ----------------------------------------------------------------------------------------------


def test_one_slot_is_shared_by_processes(tmp_path: Path) -> None:
    outs = [tmp_path / f"intervals-{k}" for k in range(3)]
    go = SPAWN.Event()
    ready = [SPAWN.Event() for _ in outs]
    processes = [
        SPAWN.Process(target=_hold_repeatedly, args=(str(tmp_path), flag, go, str(out), 4, 0.03))
        for flag, out in zip(ready, outs, strict=True)
    ]
    for process in processes:
        process.start()
    try:
        assert all(flag.wait(30) for flag in ready)
        go.set()
        for process in processes:
            process.join(30)
            assert process.exitcode == 0
    finally:
        for process in processes:
            process.kill()
            process.join(10)
    intervals = sorted(
        (float(a), float(b), who)
        for who, out in enumerate(outs)
        for a, b in (line.split() for line in out.read_text().splitlines())
    )
    assert len(intervals) == 12 and max_overlap(intervals) == 1
    assert len({who for _, _, who in intervals[:6]}) == 3  # nobody runs all its holds before the others start


def test_killed_processes_free_their_slot_and_their_place_in_the_queue(tmp_path: Path) -> None:
    holder_waiting, holder_holding, waiter_waiting, waiter_holding = (SPAWN.Event() for _ in range(4))
    holder = SPAWN.Process(target=_hold_forever, args=(str(tmp_path), holder_waiting, holder_holding))
    waiter = SPAWN.Process(target=_hold_forever, args=(str(tmp_path), waiter_waiting, waiter_holding))
    try:
        holder.start()
        assert holder_holding.wait(30)
        waiter.start()
        assert waiter_waiting.wait(30)
        deadline = time.monotonic() + 10
        while not list(tmp_path.glob("openai.q-*")) and time.monotonic() < deadline:  # the waiter's ticket
            time.sleep(0.01)
        time.sleep(0.1)
        assert not waiter_holding.is_set()
        with pytest.raises(GaveUp), holding(slots_of(tmp_path), within(0.05)):
            pass
        waiter.kill()  # killed at the head of the queue, then the holder killed mid-request: neither releases
        waiter.join(10)
        holder.kill()
        holder.join(10)
        with holding(slots_of(tmp_path), within(10)):
            pass
    finally:
        for process in (holder, waiter):
            process.kill()
            process.join(10)


# -- asyncio -------------------------------------------------------------------------------------------------------


def test_async_slots_never_overlap_and_the_loop_keeps_running(tmp_path: Path) -> None:
    # were a waiting task to block the loop, the holder could never finish: the bound turns that hang into an error
    slots = slots_of(tmp_path)
    intervals: list[Interval] = []
    ticks: list[float] = []

    async def request(who: int) -> None:
        fd = await slots.atake(within(5))
        try:
            entered = time.monotonic()
            await asyncio.sleep(0.05)
            intervals.append((entered, time.monotonic(), who))
        finally:
            slots.release(fd)

    async def ticker(stop: asyncio.Event) -> None:
        while not stop.is_set():
            ticks.append(time.monotonic())
            await asyncio.sleep(0.005)

    async def main() -> None:
        stop = asyncio.Event()
        ticking = asyncio.create_task(ticker(stop))
        await asyncio.gather(*(request(who) for who in range(3)))
        stop.set()
        await ticking

    asyncio.run(main())
    intervals.sort()
    assert len(intervals) == 3 and max_overlap(intervals) == 1
    # while the second and third requests waited, the ticker went on ticking
    assert sum(intervals[0][0] < tick < intervals[-1][0] for tick in ticks) >= 5


def test_a_cancelled_async_wait_holds_nothing(tmp_path: Path) -> None:
    slots = slots_of(tmp_path)

    async def enter_and_leave(bound: Callable[[float], float] = unbounded) -> None:
        slots.release(await slots.atake(bound))

    async def main() -> None:
        fd = await slots.atake(unbounded)
        waiting = [asyncio.create_task(enter_and_leave()) for _ in range(2)]  # the head and one behind it
        await asyncio.sleep(0.1)
        for task in waiting:
            task.cancel()
        for task in waiting:
            with pytest.raises(asyncio.CancelledError):
                await task
        slots.release(fd)
        await enter_and_leave(within(5))

    asyncio.run(main())
    assert not list(tmp_path.glob("openai.q-*"))
    with holding(slots_of(tmp_path), within(5)):
        pass
