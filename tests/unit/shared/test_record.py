"""The one-record files of the throttle: written in place, padded, never truncated."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_consistency.shared import record


def test_a_record_is_replaced_in_place_and_read_without_its_padding(tmp_path: Path) -> None:
    path = tmp_path / "openai.queue"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        assert record.read(fd) == b""  # a new file
        record.overwrite(fd, "1712345678.125")
        record.overwrite(fd, "7 3")  # shorter than the record it replaces: the padding covers the rest
        assert record.read(fd) == b"7 3"
        assert os.fstat(fd).st_size == record.SIZE
    finally:
        os.close(fd)
    assert path.read_bytes() == b"7 3".ljust(record.SIZE)
