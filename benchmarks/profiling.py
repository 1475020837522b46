"""Where the time of one pytest process goes, for the configurations of figures 1 to 3, by pyinstrument.

Why a separate step: profiling slows the process it watches, so it never shares a run with a timed sample; and
the question is not "how slow" but "which of our (or vcrpy's) functions to look at first". So the session is
saved (``.pyisession``, open it with ``pyinstrument --load``), and the functions that belong to
``pytest_consistency`` or ``vcr`` are ranked by cumulative time: a function's time counts once per call stack
even when it recurses, and the total is the profiled wall time of the whole process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

#: Path fragments of the code whose cost is ours to explain.
OURS = ("pytest_consistency", f"{os.sep}vcr{os.sep}")


def run_profiled(cwd: Path, args: list[str], env: dict[str, str], out: Path) -> None:
    """Run ``python -m pytest *args`` in ``cwd`` under pyinstrument, saving the session to ``out``."""
    command = [sys.executable, "-m", "pyinstrument", "-r", "pyisession", "-o", str(out), "-m", "pytest", *args]
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def owner(frame: Any) -> bool:
    path = frame.file_path or ""
    return any(part in path for part in OURS)


def label(frame: Any) -> str:
    path = str(frame.file_path or "")
    for part in ("pytest_consistency", "vcr"):
        index = path.rfind(f"{os.sep}{part}{os.sep}")
        if index >= 0:
            path = path[index + 1 :]
            break
    return f"{path}:{frame.function}"


def ranked(session_file: Path, top: int = 15) -> dict[str, Any]:
    """The ``top`` functions of ours by cumulative seconds, and the profiled total."""
    from pyinstrument.session import Session

    session = Session.load(str(session_file))
    root = session.root_frame()
    if root is None:
        return {"total_s": 0.0, "top": []}
    cumulative: dict[str, float] = defaultdict(float)

    def walk(frame: Any, above: frozenset[str]) -> None:
        here = above
        if owner(frame):
            name = label(frame)
            if name not in above:
                cumulative[name] += frame.time
                here = above | {name}
        for child in frame.children:
            walk(child, here)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    walk(root, frozenset())
    total = root.time
    best = sorted(cumulative.items(), key=lambda item: -item[1])[:top]
    return {
        "total_s": total,
        "top": [{"function": name, "cumulative_s": seconds, "share": seconds / total} for name, seconds in best],
    }
