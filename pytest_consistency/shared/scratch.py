"""The session's shared scratch directories in ``$TMPDIR``, and who removes them.

The throttle's slot files, the token ledger and the adaptive board live in directories that every process of a
session shares: the controller (the only process without xdist) makes them in ``pytest_configure`` and hands their
paths to its workers. Only the process that made a directory removes it, at its ``pytest_unconfigure``: for the
controller that is after every worker has finished, so no worker ever finds its directory gone; a worker, handed
its directories, makes and removes none. Unconfigure runs also when configure stopped at a usage error, so a
refused session leaves nothing behind either.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path


class Scratch:
    """Directories made for this session by this process, removed together by :meth:`remove`."""

    def __init__(self) -> None:
        self.made: list[Path] = []

    def directory(self, handed: str | None, prefix: str) -> Path:
        """The directory the controller handed to this worker, or a new one this process owns."""
        if handed:
            return Path(handed)
        path = Path(tempfile.mkdtemp(prefix=prefix))
        self.made.append(path)
        return path

    def remove(self) -> None:
        """Remove every directory this process made (what is already gone is fine)."""
        while self.made:
            shutil.rmtree(self.made.pop(), ignore_errors=True)
