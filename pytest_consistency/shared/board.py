"""The adaptive board: outcomes of the repetitions run so far, per task, shared by every process of the session.

Repetitions of one task may run on different xdist workers, so what ``--consistency-adaptive`` and
``--consistency-sequential`` decide from (see :mod:`pytest_consistency.analysis.adaptive` and
:mod:`pytest_consistency.analysis.sequential`) lives here: one small append-only file per task in a directory the
controller creates and hands to every worker, one line per repetition (its outcome's initial, its number and its
node id), read and appended to while an exclusive lock on its neighbour ``<file>.lock`` is held (``filelock``, as
the token ledger). A repetition's first outcome is the one that counts: a rerun of the same repetition
(``pytest-rerunfailures``) adds nothing.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from filelock import BaseFileLock

#: A repetition's outcome on the board.
Mark = Literal["pass", "fail", "skip", "unrecorded"]
#: Seconds between two attempts at a held lock: it is held for one read and at most one append.
POLL = 0.001


@dataclass(frozen=True)
class Tally:
    """A task's repetitions reported so far, across workers: passes, failures and skips."""

    passes: int = 0
    failures: int = 0
    #: Repetitions that skipped at run time. A task with a skip is never curtailed: the full run scores it on the
    #: repetitions that ran (and calls it incomplete below k), which the curtailment arithmetic does not model.
    skipped: int = 0


class Board:
    """Outcomes of the repetitions run so far, per task, shared by every process of the session."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._locks: dict[Path, BaseFileLock] = {}

    def _file(self, task_id: str) -> Path:
        return self.directory / hashlib.sha256(task_id.encode()).hexdigest()[:24]

    def _lock(self, path: Path) -> BaseFileLock:
        """The lock of one task's file. Its holds are per thread (filelock's default): two threads exclude each
        other as two workers do."""
        lock = self._locks.get(path)
        if lock is None:
            from filelock import FileLock  # only adaptive sessions pay for its import

            lock = self._locks[path] = FileLock(f"{path}.lock", mode=0o600)
        return lock

    def record(self, task_id: str, nodeid: str, outcome: Mark, repeat: int = 0) -> None:
        """Note a repetition's first outcome (a rerun of the same repetition is not a second outcome), with its
        number (``repeat``, 1..n: sequential mode reads the outcomes in that order). ``unrecorded``: a replay found
        no cassette for it (sequential mode then ends the task's sequence there, with no live call)."""
        path = self._file(task_id)
        line = f"{outcome[0]} {repeat} {nodeid}\n".encode()
        with self._lock(path).acquire(poll_interval=POLL):
            if not any(seen[2:] == line[2:] for seen in _lines(path)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                try:
                    os.write(fd, line)
                finally:
                    os.close(fd)

    def tally(self, task_id: str) -> Tally:
        path = self._file(task_id)
        if not path.exists():
            return Tally()
        with self._lock(path).acquire(poll_interval=POLL):
            marks = [line[:1] for line in _lines(path)]
        return Tally(passes=marks.count(b"p"), failures=marks.count(b"f"), skipped=marks.count(b"s"))

    def claim(self, limit: int) -> bool:
        """Count one more repetition started in the session (``--consistency-repetition-budget``), unless ``limit``
        have started already: then count nothing and answer False. One count for every process, in the board's
        ``repetitions`` file, read and written under its lock as a task's file is: two workers never both take the
        last one."""
        path = self.directory / "repetitions"
        with self._lock(path).acquire(poll_interval=POLL):
            try:
                started = int(path.read_bytes() or b"0")
            except FileNotFoundError:
                started = 0
            if started >= limit:
                return False
            scratch = path.with_name(f"repetitions.{os.getpid()}.tmp")
            fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, str(started + 1).encode())
            finally:
                os.close(fd)
            os.replace(scratch, path)  # a worker killed while writing leaves the last count, never an empty one
        return True

    def started(self) -> int:
        """Repetitions counted by :meth:`claim` so far."""
        try:
            return int((self.directory / "repetitions").read_bytes() or b"0")
        except FileNotFoundError:
            return 0

    def outcomes(self, task_id: str) -> dict[int, Mark]:
        """The first outcome of each repetition reported so far, by its number (those recorded with one)."""
        path = self._file(task_id)
        if not path.exists():
            return {}
        with self._lock(path).acquire(poll_interval=POLL):
            lines = _lines(path)
        words: dict[bytes, Mark] = {b"p": "pass", b"f": "fail", b"s": "skip", b"u": "unrecorded"}
        found: dict[int, Mark] = {}
        for line in lines:
            number = int(line.split(b" ", 2)[1])
            if number:
                found.setdefault(number, words[line[:1]])
        return found


def _lines(path: Path) -> list[bytes]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return [line + b"\n" for line in data.split(b"\n") if line]
