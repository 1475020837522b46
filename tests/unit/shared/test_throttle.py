"""The session-wide throttle, the slots and the rate limit together: real threads, processes and locks, no mocks.

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
from multiprocessing.synchronize import Event
from pathlib import Path

import pytest
from spacing import spacing_shortfalls

from pytest_consistency.shared.throttle import Throttle, ThrottleTimeout, Waited, file_stem

SPAWN = multiprocessing.get_context("spawn")


# -- processes: module-level so that 'spawn' can import them ------------------------------------------------------


def _start_paced(directory: str, ready: Event, go: Event, out: str, starts: int) -> None:
    throttle = Throttle(Path(directory), "openai", concurrency=None, rpm=600, acquire_timeout=30)
    ready.set()
    assert go.wait(30)
    lines = []
    for _ in range(starts):
        before = time.time()
        with throttle.slot():
            lines.append(f"{before!r} {time.time()!r}")
    Path(out).write_text("\n".join(lines))


def _run_together(target: Callable[..., None], directory: Path, outs: list[Path], *args: object) -> None:
    """Run one process per output file, release them together once all are ready."""
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
        go.set()
        for process in processes:
            process.join(30)
            assert process.exitcode == 0
    finally:
        for process in processes:
            process.kill()
            process.join(10)


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


# -- concurrency within one process ------------------------------------------------------------------------------


def test_the_wait_for_a_slot_is_reported(tmp_path: Path) -> None:
    throttle = Throttle(tmp_path, "openai", concurrency=1, rpm=None)
    waits: list[Waited] = []

    def wait_for_the_slot() -> None:
        with throttle.slot() as waited:
            waits.append(waited)

    with throttle.slot() as first:
        waiter = threading.Thread(target=wait_for_the_slot)
        waiter.start()
        while not list(tmp_path.glob("openai.q-*")):  # the waiter has queued: its wait has begun
            time.sleep(0.001)
        queued = time.monotonic()
        time.sleep(0.05)
        released = time.monotonic()
    waiter.join(30)
    (waited,) = waits
    assert waited.slot_seconds >= released - queued >= 0.05 and waited.rate_seconds == 0.0
    assert throttle.total_waited == pytest.approx(first.seconds + waited.seconds)


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
    befores, starts, waits = [], [], []
    for _ in range(5):
        befores.append(time.time())
        with throttle.slot() as waited:
            starts.append(time.time())
            waits.append(waited)
    # lower bounds only (tests/support/spacing.py): a start that overslept its turn cannot fail the check
    assert not spacing_shortfalls(befores, starts, 0.1)
    assert all(waited.slot_seconds == 0.0 and waited.rate_seconds >= 0.0 for waited in waits)
    assert throttle.total_waited == pytest.approx(sum(waited.seconds for waited in waits))


def test_rpm_is_shared_by_processes(tmp_path: Path) -> None:
    outs = [tmp_path / f"starts-{k}" for k in range(3)]
    _run_together(_start_paced, tmp_path, outs, 3)
    pairs = [line.split() for out in outs for line in out.read_text().splitlines()]
    assert len(pairs) == 9
    befores, starts = [float(before) for before, _ in pairs], [float(start) for _, start in pairs]
    assert not spacing_shortfalls(befores, starts, 0.1)


# -- asyncio -------------------------------------------------------------------------------------------------------


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
