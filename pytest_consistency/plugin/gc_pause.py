"""The cyclic garbage collector held off while the end of a session builds and writes its results.

Why: the end of a session allocates millions of small, acyclic objects (the summary, its dict form, the redacted
copy, the text of each output) and frees them by reference counting. The cyclic collector, triggered by the
allocations alone, walks the whole heap again and again meanwhile: for 1,000 tasks x 10 repetitions x 20 calls it
was a quarter of the end of session's CPU time (12.3 s with it, 9.4 s without, `benchmarks/trajectory.py`'s
records). It runs again as soon as the block ends, as it would have; a collector already disabled stays so.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No automatic cyclic collection inside the block; the collector's earlier state restored after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
