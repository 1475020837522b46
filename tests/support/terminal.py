"""An inner pytest session on a real terminal (a pseudo-terminal of the standard library's ``pty``), and what the
terminal shows after it: for the tests of what the plugin writes to a TTY (the live status line, ``plugin/status.py``).
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

#: ANSI control sequences (colours, and any cursor command): they take no column.
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run_on_a_terminal(
    args: list[str], cwd: Path, env: Mapping[str, str], columns: int = 120, timeout: float = 120
) -> tuple[int, str]:
    """Run ``python -m pytest *args`` with a pseudo-terminal as its stdin, stdout and stderr (so ``isatty()`` is
    true, as in a user's shell), ``columns`` wide; return its exit status and every byte it wrote, as text."""
    master, slave = os.openpty()
    environment = {**env, "COLUMNS": str(columns), "LINES": "40"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args],
        cwd=cwd,
        env=environment,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal (EIO on Linux)
                break
            if not data:
                break
            chunks.append(data)
        else:
            proc.kill()
            raise TimeoutError(f"pytest on a terminal did not finish in {timeout} s")
    finally:
        os.close(master)
    return proc.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")


def screen(raw: str, columns: int = 120) -> list[str]:
    """What a terminal ``columns`` wide shows once ``raw`` is written: carriage returns, backspaces and newlines
    applied, a character written over the one under the cursor, one written past the last column on the next line (a
    backspace never goes back up), the control sequences dropped (they take no column)."""
    lines: list[list[str]] = [[]]
    row = column = 0
    for char in _CONTROL.sub("", raw):
        if column >= columns and char not in "\r\n\b":  # the line is full: the terminal wraps
            row, column = row + 1, 0
            if len(lines) <= row:
                lines.append([])
        if char == "\n":
            row, column = row + 1, 0
            if len(lines) <= row:
                lines.append([])
        elif char == "\r":
            column = 0
        elif char == "\b":
            column = max(min(column, columns - 1) - 1, 0)
        else:
            line = lines[row]
            line.extend(" " * (column + 1 - len(line)))
            line[column] = char
            column += 1
    return ["".join(line).rstrip() for line in lines]
