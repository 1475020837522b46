"""Where a task's cassettes live: pure path functions, in a module of their own.

Why apart from the rest of the wing: every repetition of a recording mode names its cassette, but a replay-only
repetition whose cassette does not exist enters neither vcrpy nor anything else of the wing (its transports and the
network block refuse every request). Importing the cassette scope (and with it ``wire``, the scrubber, the matchers
and vcrpy's reset helpers) only to build a path cost every such session the compilation and execution of those
modules.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from pathlib import Path

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    """A file name for ``text``; when characters had to be replaced, a hash of the original keeps it unique."""
    safe = _SAFE.sub("_", text).strip("._") or "task"
    if safe != text:
        safe = f"{safe[:80]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return safe


#: The file suffix of each cassette format (``--consistency-cassette-format``); vcrpy's serializer has the same name.
SUFFIXES = {"yaml": ".yaml", "json": ".json"}


def cassette_path(root: Path, task_id: str, repeat: int, suffix: str = ".yaml") -> Path:
    """``root/<module path without .py>/<task>/rep-<i>.yaml`` (or ``.json``): repetition i keeps its file when n
    changes."""
    return task_directory(root, task_id) / f"rep-{repeat}{suffix}"


def serializer_name(path: Path) -> str:
    """The vcrpy serializer a cassette file is read and written with, by its suffix."""
    return "json" if path.suffix == ".json" else "yaml"


def format_hint(other_shown: str, wanted: str) -> str:
    """What to do when a repetition's cassette is in the other format: convert them, or read them as they are."""
    return (
        f"{other_shown} is there, in the other format: convert the cassettes with "
        f"`pytest-consistency cassettes convert --to {wanted}`, or pass "
        f"--consistency-cassette-format={'yaml' if wanted == 'json' else 'json'}"
    )


def cassette_exists(path: Path) -> bool:
    """Whether ``path`` holds a cassette: a file with something in it. vcrpy (and the plugin's persister) read an
    empty or blank file as no cassette, so one next to a recording in the other format is not a reason to record."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    if info.st_size > 64:
        return True
    try:
        return bool(Path(path).read_bytes().strip())
    except OSError:
        return True  # there, but unreadable: the persister names the problem in the repetition's setup


def other_format(path: Path) -> Path | None:
    """The same cassette in the other format, when that file exists (a missing cassette's likeliest cause after a
    change of ``--consistency-cassette-format``)."""
    other = path.with_suffix(".yaml" if path.suffix == ".json" else ".json")
    return other if other.is_file() else None


@functools.lru_cache(maxsize=1024)
def task_directory(root: Path, task_id: str) -> Path:
    """The directory of a task's cassettes; cached, since each of its n repetitions asks (a pure function)."""
    module, _, task = task_id.partition("::")
    module_dir = Path(*[safe_name(part) for part in Path(module).with_suffix("").parts])
    return root / module_dir / safe_name(task or module)
