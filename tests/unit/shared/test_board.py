"""The adaptive board: each repetition's first outcome counted once, whichever process or thread records it."""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.synchronize import Event
from pathlib import Path

from pytest_consistency.shared.board import Board, Tally

SPAWN = multiprocessing.get_context("spawn")
#: Enough that, without the lock, two processes recording the same repetition at once is all but certain.
REPETITIONS = 300


def test_board_is_shared_and_counts_each_repetition_once(tmp_path: Path) -> None:
    one, two = Board(tmp_path), Board(tmp_path)  # two processes see the same directory
    one.record("task[a]", "t.py::x[rep1]", "pass")
    two.record("task[a]", "t.py::x[rep2]", "fail")
    two.record("task[a]", "t.py::x[rep2]", "pass")  # a rerun of rep2: its first outcome stands
    one.record("task[a]", "t.py::x[rep3]", "skip")
    one.record("task[b]", "t.py::y[rep1]", "pass")
    assert one.tally("task[a]") == Tally(passes=1, failures=1, skipped=1)
    assert two.tally("task[b]").passes == 1 and two.tally("unknown") == Tally()


def test_board_keeps_each_repetitions_first_outcome_by_its_number(tmp_path: Path) -> None:
    """Sequential mode reads the outcomes in the order of the repetitions' numbers, whatever order they arrived in."""
    one, two = Board(tmp_path), Board(tmp_path)
    two.record("task", "t.py::x[rep3]", "fail", 3)
    one.record("task", "t.py::x[rep1]", "pass", 1)
    one.record("task", "t.py::x[rep1]", "fail", 1)  # a rerun: the first outcome stands
    two.record("task", "t.py::x[rep4]", "unrecorded", 4)
    one.record("task", "t.py::x[rep2]", "skip", 2)
    assert two.outcomes("task") == {1: "pass", 2: "skip", 3: "fail", 4: "unrecorded"}
    assert one.tally("task") == Tally(passes=1, failures=1, skipped=1)
    assert one.outcomes("unknown") == {}


def _record_all(directory: str, ready: Event, go: Event, outcome: str) -> None:
    board = Board(Path(directory))
    ready.set()
    assert go.wait(30)
    for i in range(REPETITIONS):
        board.record("task", f"t.py::x[rep{i}]", outcome)  # type: ignore[arg-type]


def test_processes_recording_the_same_repetitions_at_once_count_each_once(tmp_path: Path) -> None:
    """Three workers record the same repetitions together: the look for an earlier outcome and the append are one
    step under the lock, so no repetition is counted twice (without the lock two workers both find it absent)."""
    go = SPAWN.Event()
    ready = [SPAWN.Event() for _ in range(3)]
    outcomes = ["pass", "fail", "skip"]
    processes = [
        SPAWN.Process(target=_record_all, args=(str(tmp_path), flag, go, outcome))
        for flag, outcome in zip(ready, outcomes, strict=True)
    ]
    for process in processes:
        process.start()
    try:
        assert all(flag.wait(30) for flag in ready)
        go.set()
        for process in processes:
            process.join(60)
            assert process.exitcode == 0
    finally:
        for process in processes:
            process.kill()
            process.join(10)
    tally = Board(tmp_path).tally("task")
    assert tally.passes + tally.failures + tally.skipped == REPETITIONS, tally


def test_threads_of_one_process_recording_at_once_count_each_once(tmp_path: Path) -> None:
    board = Board(tmp_path)  # one board, one lock object per task: its holds are per thread
    barrier = threading.Barrier(4)

    def run(who: int) -> None:
        barrier.wait()
        for i in range(REPETITIONS):
            board.record("task", f"t.py::x[rep{i}]", "pass" if who % 2 else "fail")

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(run, range(4)))
    tally = board.tally("task")
    assert tally.passes + tally.failures == REPETITIONS and tally.skipped == 0, tally


def test_repetition_budget_hands_out_exactly_its_count_across_processes_and_threads(tmp_path: Path) -> None:
    """``--consistency-repetition-budget``: every claim reads and writes the one count under its lock, so eight
    threads of two boards (two workers) claiming together start exactly the budget, never one more."""
    boards = [Board(tmp_path), Board(tmp_path)]
    start = threading.Barrier(8)

    def claims(index: int) -> int:
        start.wait()
        return sum(boards[index % 2].claim(100) for _ in range(40))

    with ThreadPoolExecutor(8) as pool:
        taken = sum(pool.map(claims, range(8)))
    assert taken == 100 and boards[0].started() == 100
    assert not boards[1].claim(100) and boards[1].claim(101) and boards[0].started() == 101
    assert Board(tmp_path / "fresh").started() == 0
