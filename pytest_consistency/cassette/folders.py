"""Keep pytest's collection walk out of the plugin's own cassette directories.

Why: pytest walks every directory below its arguments. For each directory it looks for conftest files, and for each
file it asks every plugin whether to ignore it and how to collect it. A replayed suite keeps a directory per task and
a file per repetition under its cassette root: at 200 tasks × 5 repetitions that is 200 directories and 1,000 files
walked for nothing, about 600 M instructions, 3 % of the whole session (``benchmarks/run.py``'s figure 3).

What is skipped: a directory at or below the cassette root (``--consistency-cassettes``) that holds at least one
entry, every one of them one of the plugin's cassette files (``rep-<i>.yaml`` or ``.json``, a resample's
``sample-<i>.yaml``, or a temporary file the plugin left while writing one) or a directory of the same kind.

And only when nothing could collect such a file: every ``pytest_collect_file`` and ``pytest_collect_directory``
implementation registered is pytest's own (a plugin or conftest that collects YAML or JSON files, or directories,
turns the skip off), neither ``python_files`` nor ``--doctest-glob`` matches a cassette's name, and no plugin or
conftest called before this one answered ``pytest_ignore_collect`` itself (this hook is not ``tryfirst``, so a
user's ``False`` wins). An empty directory, a conftest, a test module, a README or a symbolic link keeps a directory
walked as before. pytest never asks about a path named on the command line itself.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from pathlib import Path
from types import ModuleType
from typing import Any

#: The files the plugin writes in a cassette directory (``paths.cassette_path``, ``resample.plan``, and the
#: temporary file of ``persist.Persister.save_cassette``); resample cassettes are always YAML.
_NAME = r"(?:rep-[0-9]+\.(?:yaml|json)|sample-[0-9]+\.yaml)"
_CASSETTE_FILE = re.compile(rf"{_NAME}|\.{_NAME}\.[^/]*\.tmp")
#: Names a cassette may have, to test collection patterns against.
_EXAMPLES = ("rep-1.yaml", "rep-1.json", "sample-1.yaml")
#: The collection hooks whose implementations decide whether anything could collect a cassette file.
_COLLECTING = ("pytest_collect_file", "pytest_collect_directory")


@functools.lru_cache(maxsize=8)
def _prefixes(root: Path) -> tuple[str, str]:
    """The root as pytest spells the paths it walks (absolute, ``..`` folded), and the prefix of those inside it."""
    base = os.path.abspath(root)
    return base, base.rstrip(os.sep) + os.sep


def under(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or inside it, compared as text without touching the disk."""
    text = str(path)
    base, prefix = _prefixes(root)
    return text == base or text.startswith(prefix)


def only_cassettes(directory: str, memo: dict[str, bool] | None = None) -> bool:
    """Whether ``directory`` holds at least one entry and every one is a cassette file or, recursively, a directory
    of the same kind.

    Symbolic links are never followed (a link is "something else"), so a loop cannot recur forever. A directory
    that cannot be read is not skipped: pytest's own walk reports it as it always did. ``memo`` keeps the answers
    of one walk, so that a deep tree is scanned once, not once per level."""
    if memo is not None and directory in memo:
        return memo[directory]
    found = False
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    found = only_cassettes(entry.path, memo)
                else:
                    found = entry.is_file(follow_symlinks=False) and bool(_CASSETTE_FILE.fullmatch(entry.name))
                if not found:
                    break
    except OSError:
        found = False
    if memo is not None:
        memo[directory] = found
    return found


def nothing_collects_cassettes(config: Any) -> bool:
    """Whether no collector of this session could collect a cassette file (see the module docstring)."""
    for name in _COLLECTING:
        for impl in getattr(config.hook, name).get_hookimpls():
            plugin = impl.plugin
            if not (isinstance(plugin, ModuleType) and plugin.__name__.startswith("_pytest.")):
                return False
    patterns = [*config.getini("python_files"), *(config.getoption("doctestglob", None) or ())]
    return not any(fnmatch.fnmatch(name, pattern) for name in _EXAMPLES for pattern in patterns)


def skip(collection_path: Path, root: Path, config: Any, memo: dict[str, bool] | None = None) -> bool:
    """Whether pytest's collection should leave ``collection_path`` out: a cassette-only directory under ``root``
    that nothing registered could collect from."""
    return (
        under(collection_path, root)
        and not collection_path.is_symlink()
        and only_cassettes(str(collection_path), memo)
        and nothing_collects_cassettes(config)
    )
