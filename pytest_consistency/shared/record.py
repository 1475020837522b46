"""One short record at the start of a file, read and written in place: the throttle's queue and rate files.

A record is written whole at offset 0 and padded with spaces to :data:`SIZE` bytes, never truncated: on ext4 an
``ftruncate`` costs over a millisecond, which every request would pay. The caller holds the file's lock.
"""

from __future__ import annotations

import os

#: Size of a file's one record.
SIZE = 64


def overwrite(fd: int, text: str) -> None:
    """Replace the record of the open file ``fd`` with ``text`` (at most :data:`SIZE` bytes)."""
    os.pwrite(fd, text.ljust(SIZE).encode(), 0)


def read(fd: int) -> bytes:
    """The record of the open file ``fd``, without its padding (empty for a new file)."""
    return os.pread(fd, SIZE, 0).strip()
