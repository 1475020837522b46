"""``pytest-consistency cassettes convert --to json|yaml``: the migration between the two cassette formats.

Why: a JSON cassette (``--consistency-cassette-format=json``) is parsed about five times faster than the YAML one
(``docs/performance.md``), and both are vcrpy's own formats, so users' tools keep reading them. A suite that switches
format must not re-record (that costs money and changes the recordings), so this converts each repetition's cassette
in place: the same data, read with vcrpy's serializer of one format and written with the other's.

Each file is converted on its own and only when it is safe: the new file is written atomically beside the old one
and read back, and the old one is removed only when the data read back equals the data read; otherwise the old file
stays as it was and the file is reported. A cassette with a binary body (not UTF-8 text) cannot be JSON and stays
YAML. A repetition that already has a file in the target format is left alone (nothing is overwritten). Resample
cassettes (``sample-<i>.yaml``) are always YAML and are not touched. A symbolic link is not converted through,
whether it is the cassette file or a directory above it below the directories given: each such cassette is reported
with the link and where it points (converting it would change files elsewhere, perhaps another suite's); a
directory given on the command line is followed, so the advice is to convert the directory the link points to.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: A repetition's cassette in either format (``paths.cassette_path``).
_REPETITION = re.compile(r"rep-[0-9]+\.(yaml|json)")
FORMATS = ("json", "yaml")


class ConvertError(ValueError):
    """The command cannot run at all (a directory that is not there): exit status 2."""


@dataclass
class Outcome:
    """What a conversion did, file by file."""

    converted: list[Path] = field(default_factory=list)
    already: list[Path] = field(default_factory=list)
    #: Files left as they were, with the reason.
    left: list[tuple[Path, str]] = field(default_factory=list)


def _serializer(name: str) -> Any:
    from pytest_consistency.cassette import _vcr

    return _vcr.serializer(name)


def cassettes(directories: Iterable[Path]) -> Iterator[tuple[Path, Path | None]]:
    """Every repetition cassette below ``directories``, in a stable order, with the symbolic link to a directory it
    is reached through (None when it is not); every directory is checked first, so a wrong argument stops the
    command before it changed anything.

    A directory given is followed even when it is a link (it is what was asked for). Below it, a link to a directory
    is looked into but not walked on (os.walk's default), so a link to a directory above it is seen once, and
    what it holds is reported rather than converted (:func:`linked_reason`)."""
    directories = list(directories)
    for directory in directories:
        if not directory.is_dir():
            raise ConvertError(f"{directory} is not a directory; give the cassette directory (default: cassettes)")
    for directory in directories:
        for root, dirs, files in os.walk(directory):
            dirs.sort()
            for name in sorted(files):
                if _REPETITION.fullmatch(name):
                    yield Path(root) / name, None
            for name in dirs:
                link = Path(root) / name
                if link.is_symlink():
                    for inner, _, names in os.walk(link):  # links below it are not walked: no cycle
                        yield from ((Path(inner) / n, link) for n in sorted(names) if _REPETITION.fullmatch(n))


def convert_file(path: Path, to: str, dry_run: bool = False) -> str | None:
    """Convert one cassette to format ``to``; None when it was converted (or would be), else why it was left."""
    source = _serializer("json" if path.suffix == ".json" else "yaml")
    target = _serializer(to)
    destination = path.with_suffix("." + to)
    if path.is_symlink():
        return "is a symbolic link; convert the file it points to"
    if destination.exists() or destination.is_symlink():
        return f"{destination.name} is there too; remove the one you do not want"
    try:
        text = path.read_text(encoding="utf-8")
        data = source.deserialize(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"cannot be read ({type(exc).__name__}: {exc})"
    except Exception as exc:  # PyYAML's errors, and vcrpy's for cassettes of another era
        return f"cannot be read ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        return "is not a vcrpy cassette (no list of interactions)"
    try:
        written = target.serialize(data)
    except TypeError:
        if to != "json":
            raise
        return "holds a value the JSON format cannot (a binary body, a YAML date or timestamp); it stays YAML"
    except Exception as exc:  # PyYAML's representer, on a string it cannot write
        return f"cannot be written as {to.upper()} ({type(exc).__name__}: {exc})"
    try:
        same = target.deserialize(written) == data
    except Exception:
        same = False
    if not same:
        return f"would not read back the same as {to.upper()} (a NaN, or a key that is not text); left as it is"
    if dry_run:
        return None
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        fd, tmp = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        return f"cannot write beside it ({exc.strerror or exc}); left as it is"
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(written)
        os.chmod(tmp, mode)  # the permissions of the file it replaces, not mkstemp's 0600
        os.replace(tmp, destination)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        return f"cannot write {destination.name} ({exc.strerror or exc}); left as it is"
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        path.unlink()
    except OSError as exc:
        destination.unlink(missing_ok=True)  # one file per repetition: the old one stays, the new one goes
        return f"cannot be removed ({exc.strerror or exc}); left as it is"
    return None


def linked_reason(link: Path, to: str) -> str:
    """Why a cassette below a symbolic link to a directory is left, as a linked file is: converting it would change
    files elsewhere (another suite's, or a copy shared by two tasks) under a name that is not theirs."""
    target = link.resolve()
    return (
        f"its directory {link} is a symbolic link (to {target}); cassettes are converted only where they are: "
        f"convert that directory (pytest-consistency cassettes convert --to {to} {shlex.quote(str(target))})"
    )


def convert(directories: Iterable[Path], to: str, dry_run: bool = False) -> Outcome:
    """Convert every repetition cassette below ``directories`` to format ``to`` (``json`` or ``yaml``)."""
    if to not in FORMATS:
        raise ConvertError(f"--to {to!r}: choose json or yaml")
    outcome = Outcome()
    for path, link in cassettes(directories):
        if path.suffix == "." + to:
            outcome.already.append(path)
            continue
        reason = convert_file(path, to, dry_run) if link is None else linked_reason(link, to)
        if reason is None:
            outcome.converted.append(path)
        else:
            outcome.left.append((path, reason))
    return outcome


def summary_lines(outcome: Outcome, to: str, dry_run: bool) -> list[str]:
    """What the command prints: one line per file left, then the counts."""
    lines = [f"left as it is: {path}: {reason}" for path, reason in outcome.left]
    verb = "would convert" if dry_run else "converted"
    lines.append(
        f"{verb} {len(outcome.converted)} cassette(s) to {to.upper()}; {len(outcome.already)} already {to.upper()}, "
        f"{len(outcome.left)} left as they were"
    )
    if not dry_run and outcome.converted:
        lines.append(f"replay them with --consistency-cassette-format={to} (ini: consistency_cassette_format = {to})")
    return lines
