"""Keep pytest's collection walk out of the plugin's own cassette directories.

Why: pytest walks every directory below its arguments. For each directory it looks for conftest files, and for each
file it asks every plugin whether to ignore it and how to collect it. A replayed suite keeps a directory per task and
a file per repetition under its cassette root: at 200 tasks × 5 repetitions that is 200 directories and 1,000 files
walked for nothing, about 600 M instructions, 3 % of the whole session (``benchmarks/run.py``'s figure 3).

What is skipped: a directory at or below the cassette root (``--consistency-cassettes``) whose every entry is one of
the plugin's cassette files (``rep-<i>.yaml`` or ``.json``, a resample's ``sample-<i>.yaml``, or a temporary file
the plugin left while writing one) or a directory of the same kind. Nothing in such a directory can be collected:
no Python file, no conftest, nothing but cassettes. A directory holding anything else (a README, a conftest, a
symbolic link) is walked as always, and a path named on the command line is collected as before (pytest does not
ask about it).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

#: The files the plugin writes in a cassette directory (``paths.cassette_path``, ``resample.plan``, and the
#: temporary file of ``cassettes.Persister.save_cassette``).
_CASSETTE_FILE = re.compile(r"(?:rep|sample)-[0-9]+\.(?:yaml|json)|\.(?:rep|sample)-[0-9]+\.(?:yaml|json)\.[^/]*\.tmp")


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


def only_cassettes(directory: str) -> bool:
    """Whether every entry of ``directory`` is a cassette file or, recursively, a directory of the same kind.

    Symbolic links are never followed (a link is "something else"), so a loop cannot recur forever. A directory
    that cannot be read is not skipped: pytest's own walk reports it as it always did."""
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if not only_cassettes(entry.path):
                        return False
                elif not (entry.is_file(follow_symlinks=False) and _CASSETTE_FILE.fullmatch(entry.name)):
                    return False
    except OSError:
        return False
    return True


def skip(collection_path: Path, root: Path) -> bool:
    """Whether pytest's collection should leave ``collection_path`` out: a cassette-only directory under ``root``."""
    return under(collection_path, root) and not collection_path.is_symlink() and only_cassettes(str(collection_path))
