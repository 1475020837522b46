"""The session-wide throttle: real threads, real processes and real flock locks, no mocks.

Timing assertions are orderings, non-overlap and lower bounds only; the machine running these is shared and noisy.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from multiprocessing.synchronize import Event
from pathlib import Path

import pytest

from pytest_consistency.shared.rate import next_start
from pytest_consistency.shared.throttle import Throttle, ThrottleTimeout, Waited, file_stem

Interval = tuple[float, float, int]  # (entered, left, who)

SPAWN = multiprocessing.get_context("spawn")


def _max_overlap(intervals: list[Interval]) -> int:
    # a departure sorts before an arrival at the same instant: touching intervals do not overlap
    events = sorted([(enter, 1) for enter, _, _ in intervals] + [(left, -1) for _, left, _ in intervals])
    depth = peak = 0
    for _, step in events:
        depth += step
        peak = max(peak, depth)
    return peak


def _hold_in_threads(throttle: Throttle, threads: int, holds: int, hold: float) -> tuple[list[Interval], list[Waited]]:
    """Each thread takes a slot ``holds`` times and keeps it ``hold`` seconds; entry and exit are taken inside."""
    lock = threading.Lock()
    intervals: list[Interval] = []
    waits: list[Waited] = []
    barrier = threading.Barrier(threads)

    def run(who: int) -> None:
        barrier.wait()
        for _ in range(holds):
            with throttle.slot() as waited:
                entered = time.monotonic()
                time.sleep(hold)
                with lock:
                    intervals.append((entered, time.monotonic(), who))
                    waits.append(waited)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(run, range(threads)))  # re-raises a thread's exception
    return sorted(intervals), waits


# -- processes: module-level so that 'spawn' can import them ------------------------------------------------------


def _hold_repeatedly(directory: str, ready: Event, go: Event, out: str, holds: int, hold: float) -> None:
    throttle = Throttle(Path(directory), "openai", concurrency=1, rpm=None, acquire_timeout=30)
    ready.set()
    assert go.wait(30)
    lines = []
    for _ in range(holds):
        with throttle.slot():
            entered = time.time()
            time.sleep(hold)
            lines.append(f"{entered!r} {time.time()!r}")
    Path(out).write_text("\n".join(lines))


def _start_paced(directory: str, ready: Event, go: Event, out: str, starts: int) -> None:
    throttle = Throttle(Path(directory), "openai", concurrency=None, rpm=600, acquire_timeout=30)
    ready.set()
    assert go.wait(30)
    lines = []
    for _ in range(starts):
        with throttle.slot():
            lines.append(repr(time.time()))
    Path(out).write_text("\n".join(lines))


def _hold_forever(directory: str, waiting: Event, holding: Event) -> None:
    throttle = Throttle(Path(directory), "openai", concurrency=1, rpm=None)
    waiting.set()
    with throttle.slot():
        holding.set()
        time.sleep(60)


def _run_together(target: Callable[..., None], directory: Path, outs: list[Path], *args: object) -> float:
    """Run one process per output file, release them together once all are ready; returns the release time."""
    go = SPAWN.Event()
    ready = [SPAWN.Event() for _ in outs]
    processes = [
        SPAWN.Process(target=target, args=(str(directory), flag, go, str(out), *args))
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
    return began


def _read_intervals(path: Path, who: int) -> list[Interval]:
    return [(float(a), float(b), who) for a, b in (line.split() for line in path.read_text().splitlines())]


# -- validation and pure helpers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
@pytest.mark.parametrize("option", ["concurrency", "rpm"])
def test_limits_must_be_positive_integers_and_the_error_names_the_option(
    tmp_path: Path, option: str, bad: object
) -> None:
    limits: dict[str, object] = {"concurrency": None, "rpm": None, option: bad}
    with pytest.raises(ValueError, match=f"--consistency-{option} must be a positive integer"):
        Throttle(tmp_path, "openai", **limits)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-0.5, float("nan")])
def test_acquire_timeout_must_not_be_negative(tmp_path: Path, bad: float) -> None:
    with pytest.raises(ValueError, match="acquire_timeout"):
        Throttle(tmp_path, "openai", 1, None, acquire_timeout=bad)


def test_without_limits_the_throttle_is_a_no_op_that_touches_no_file(tmp_path: Path) -> None:
    throttle = Throttle(tmp_path / "never", "openai", None, None)
    assert not throttle.active
    with throttle.slot() as waited, throttle.slot() as nested:
        assert waited.seconds == nested.seconds == 0.0

    async def enter() -> float:
        async with throttle.aslot() as waited:
            return waited.seconds

    assert asyncio.run(enter()) == 0.0
    assert throttle.total_waited == 0.0 and not (tmp_path / "never").exists()


def test_route_names_become_file_names() -> None:
    assert file_stem("openai") == "openai" and file_stem("azure-eu.1") == "azure-eu.1"
    hashed = {file_stem(route) for route in ["https://api.openai.com/v1", "../etc", "", "a/b", "a b"]}
    assert len(hashed) == 5 and all(stem.startswith("route-") and "/" not in stem for stem in hashed)


def test_next_start_reads_the_rate_file_defensively() -> None:
    assert next_start(b"", 100.0) == 100.0  # first request of the session
    assert next_start(b"99.5", 100.0) == 100.0  # the turn has passed: now
    assert next_start(b"100.25", 100.0) == 100.25
    for damaged in [b"garbage", b"inf", b"nan", b"\xff"]:
        assert next_start(damaged, 100.0) == 100.0


# -- concurrency within one process ------------------------------------------------------------------------------


def test_one_slot_lets_one_thread_at_a_time_and_reports_the_wait(tmp_path: Path) -> None:
    throttle = Throttle(tmp_path, "openai", concurrency=1, rpm=None)
    intervals, waits = _hold_in_threads(throttle, threads=4, holds=1, hold=0.05)
    assert len(intervals) == 4 and _max_overlap(intervals) == 1
    assert all(left <= entered for (_, left, _), (entered, _, _) in pairwise(intervals))
    # the last of the four waited for the three holds before it
    longest = sorted(waited.seconds for waited in waits)
    assert longest[-1] >= 0.1 and all(waited.rate_seconds == 0.0 for waited in waits)
    assert throttle.total_waited == pytest.approx(sum(waited.seconds for waited in waits))


def test_two_slots_let_two_threads_at_a_time_and_no_more(tmp_path: Path) -> None:
    throttle = Throttle(tmp_path, "openai", concurrency=2, rpm=None)
    intervals, _ = _hold_in_threads(throttle, threads=6, holds=1, hold=0.05)
    assert len(intervals) == 6 and _max_overlap(intervals) == 2


def test_waiters_are_served_first_come_first_served(tmp_path: Path) -> None:
    """A thread that releases and asks again at once queues behind the others instead of taking the slot back."""
    throttle = Throttle(tmp_path, "openai", concurrency=1, rpm=None)
    intervals, _ = _hold_in_threads(throttle, threads=3, holds=4, hold=0.025)
    order = [who for _, _, who in intervals]
    assert len(order) == 12 and _max_overlap(intervals) == 1
    assert all(a != b for a, b in pairwise(order)), order


def test_without_a_doorbell_waiters_poll_and_still_take_turns(tmp_path: Path) -> None:
    (tmp_path / "openai.bell").write_text("a regular file where the FIFO would go")
    throttle = Throttle(tmp_path, "openai", concurrency=1, rpm=None)
    intervals, _ = _hold_in_threads(throttle, threads=3, holds=2, hold=0.02)
    assert len(intervals) == 6 and _max_overlap(intervals) == 1


def test_routes_have_independent_limits(tmp_path: Path) -> None:
    openai = Throttle(tmp_path, "openai", concurrency=1, rpm=1)
    anthropic = Throttle(tmp_path, "anthropic", concurrency=1, rpm=1, acquire_timeout=0.5)
    with openai.slot(), anthropic.slot():  # the openai slot and its rate turn are taken; anthropic's are not
        pass
    assert {path.name for path in tmp_path.glob("*.slot-0")} == {"openai.slot-0", "anthropic.slot-0"}


# -- timeouts ----------------------------------------------------------------------------------------------------


def test_a_slot_wait_past_the_timeout_raises_and_leaves_nothing_behind(tmp_path: Path) -> None:
    throttle = Throttle(tmp_path, "openai", concurrency=1, rpm=None)
    impatient = Throttle(tmp_path, "openai", concurrency=1, rpm=None, acquire_timeout=0.1)
    with throttle.slot():
        started = time.monotonic()
        with pytest.raises(ThrottleTimeout, match=r"'openai'.*0\.1s.*--consistency-concurrency=1"), impatient.slot():
            pass
        assert time.monotonic() - started >= 0.1
    with impatient.slot():  # the ticket of the waiter that gave up does not hold up the queue
        pass
    assert not list(tmp_path.glob("openai.q-*"))


def test_a_rate_turn_past_the_timeout_raises_without_using_up_the_turn(tmp_path: Path) -> None:
    paced = Throttle(tmp_path, "anthropic", concurrency=None, rpm=1, acquire_timeout=0.1)
    with paced.slot():
        pass
    for _ in range(2):  # the refused request reserved nothing: the next one is still about 60s away, not 120s
        with pytest.raises(ThrottleTimeout, match=r"'anthropic'.*--consistency-rpm=1") as refused, paced.slot():
            pass
        away = float(re.search(r"is (\d+\.\d)s away", str(refused.value)).group(1))  # type: ignore[union-attr]
        assert 50 < away <= 60


# -- rate ----------------------------------------------------------------------------------------------------------


def test_rpm_spaces_sequential_starts(tmp_path: Path) -> None:
    throttle = Throttle(tmp_path, "openai", concurrency=None, rpm=600)  # one start every 0.1 s
    began = time.time()
    starts = []
    for _ in range(5):
        with throttle.slot() as waited:
            starts.append(time.time())
            assert waited.slot_seconds == 0.0
    # the k-th start is at least k intervals after the first could have been (exact: starts follow reservations)
    assert all(start >= began + k * 0.1 - 1e-6 for k, start in enumerate(starts))
    assert all(b - a >= 0.1 - 0.03 for a, b in pairwise(starts))
    assert throttle.total_waited >= 0.3


def test_rpm_is_shared_by_processes(tmp_path: Path) -> None:
    outs = [tmp_path / f"starts-{k}" for k in range(2)]
    began = _run_together(_start_paced, tmp_path, outs, 3)
    starts = sorted(float(line) for out in outs for line in out.read_text().splitlines())
    assert len(starts) == 6
    assert all(start >= began + k * 0.1 - 1e-6 for k, start in enumerate(starts))
    assert all(b - a >= 0.1 - 0.03 for a, b in pairwise(starts))


# -- concurrency across processes ----------------------------------------------------------------------------------


def test_one_slot_is_shared_by_processes(tmp_path: Path) -> None:
    outs = [tmp_path / f"intervals-{k}" for k in range(3)]
    _run_together(_hold_repeatedly, tmp_path, outs, 4, 0.03)
    intervals = sorted(interval for who, out in enumerate(outs) for interval in _read_intervals(out, who))
    assert len(intervals) == 12 and _max_overlap(intervals) == 1
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
        with pytest.raises(ThrottleTimeout), Throttle(tmp_path, "openai", 1, None, acquire_timeout=0.05).slot():
            pass
        waiter.kill()  # killed at the head of the queue, then the holder killed mid-request: neither releases
        waiter.join(10)
        holder.kill()
        holder.join(10)
        with Throttle(tmp_path, "openai", 1, None, acquire_timeout=1.0).slot() as waited:
            assert waited.seconds < 1.0
    finally:
        for process in (holder, waiter):
            process.kill()
            process.join(10)


# -- asyncio -------------------------------------------------------------------------------------------------------


def test_async_slots_never_overlap_and_the_loop_keeps_running(tmp_path: Path) -> None:
    # were a waiting task to block the loop, the holder could never finish: the timeout turns that hang into an error
    throttle = Throttle(tmp_path, "openai", concurrency=1, rpm=None, acquire_timeout=5)
    intervals: list[Interval] = []
    ticks: list[float] = []
    waits: list[float] = []

    async def request(who: int) -> None:
        async with throttle.aslot() as waited:
            entered = time.monotonic()
            await asyncio.sleep(0.05)
            intervals.append((entered, time.monotonic(), who))
            waits.append(waited.seconds)

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
    assert len(intervals) == 3 and _max_overlap(intervals) == 1
    # the last to enter waited through at least the whole hold of the one before it (a sleep of 0.05 s); a bound of
    # two holds would count from a start the waiting task only reaches after the first holder entered
    assert max(waits) >= 0.05
    # while the second and third requests waited, the ticker went on ticking
    assert sum(intervals[0][0] < tick < intervals[-1][0] for tick in ticks) >= 5


def test_a_cancelled_async_wait_holds_nothing(tmp_path: Path) -> None:
    throttle = Throttle(tmp_path, "openai", concurrency=1, rpm=None)

    async def enter_and_leave(throttle: Throttle) -> None:
        async with throttle.aslot():
            pass

    async def main() -> None:
        held, release = asyncio.Event(), asyncio.Event()

        async def holder() -> None:
            async with throttle.aslot():
                held.set()
                await release.wait()

        holding = asyncio.create_task(holder())
        await held.wait()
        waiting = [asyncio.create_task(enter_and_leave(throttle)) for _ in range(2)]  # the head and one behind it
        await asyncio.sleep(0.1)
        for task in waiting:
            task.cancel()
        for task in waiting:
            with pytest.raises(asyncio.CancelledError):
                await task
        release.set()
        await holding
        await enter_and_leave(Throttle(tmp_path, "openai", 1, None, acquire_timeout=0.5))

    asyncio.run(main())
    assert not list(tmp_path.glob("openai.q-*"))
    with Throttle(tmp_path, "openai", 1, None, acquire_timeout=0.5).slot():
        pass


def test_a_request_cancelled_during_its_rate_wait_releases_its_slot_and_gives_back_its_turn(tmp_path: Path) -> None:
    throttle = Throttle(tmp_path, "openai", concurrency=1, rpm=6)  # one start every 10 s

    async def main() -> None:
        async with throttle.aslot():
            pass

        async def second() -> None:
            async with throttle.aslot():
                raise AssertionError("the second start is 10 s away")

        task = asyncio.create_task(second())
        await asyncio.sleep(0.1)  # it holds the slot and sleeps towards its turn
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    with Throttle(tmp_path, "openai", 1, None, acquire_timeout=0.5).slot():  # the slot is free
        pass
    paced = Throttle(tmp_path, "openai", None, 6, acquire_timeout=0.1)
    with pytest.raises(ThrottleTimeout) as refused, paced.slot():
        pass
    away = float(re.search(r"is (\d+\.\d)s away", str(refused.value)).group(1))  # type: ignore[union-attr]
    assert away <= 10  # the cancelled request's turn came back: the next start is the second one, not the third


def test_a_held_slot_is_released_once_however_often_it_is_released(tmp_path: Path) -> None:
    """The transport releases a request's slot from several places (body end, close, failure, repetition end):
    only the first may close the lock's descriptor, or a second close would close another request's lock."""
    throttle = Throttle(tmp_path, "r", 1, None, acquire_timeout=0)
    held = throttle.acquire()
    assert held.held
    with pytest.raises(ThrottleTimeout):
        throttle.acquire()  # the slot outlives the call that took it
    held.release()
    held.release()
    assert not held.held
    other = throttle.acquire()
    held.release()  # a late release of the first holder must not free the second one's slot
    with pytest.raises(ThrottleTimeout):
        throttle.acquire()
    other.release()
    throttle.acquire().release()


def test_a_held_slot_nobody_releases_is_freed_when_it_is_garbage(tmp_path: Path) -> None:
    throttle = Throttle(tmp_path, "r", 1, None, acquire_timeout=0)
    held = throttle.acquire()
    del held  # a response the agent dropped without reading or closing it
    gc.collect()
    throttle.acquire().release()


def test_without_limits_a_held_slot_holds_nothing(tmp_path: Path) -> None:
    held = Throttle(tmp_path / "none", "r", None, None).acquire()
    assert not held.held and held.waited == Waited()
    held.release()
    assert not (tmp_path / "none").exists()
