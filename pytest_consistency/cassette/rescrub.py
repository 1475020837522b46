"""A secret learned late is a secret everywhere: the session's last pass over what it wrote before it knew one.

Each repetition's text is redacted as soon as it exists (its cassette before it is written, its report before pytest
prints, serialises or writes it: see ``known`` and ``failure_text``), with the secrets its process knew then. A
credential first sent by a later repetition (a gateway header the agent adds from repetition 2 on), or by a
repetition on another xdist worker, was not among them: it stayed in clear in the earlier cassettes, failure text,
``-l`` locals, captured output and log, warnings and JUnit's file. So the controlling process, once every worker is
down and the list is complete, looks again at everything of the session that still exists:

- **cassettes**: each file the session wrote (every worker hands the list of its own, in memory, with the secrets
  each was scanned for before it was written) is searched for the secrets its scan did not know, and rewritten
  without them: every string (URIs, headers, bodies, in every encoding), the response's ``content-length`` set to
  the body's new length, in the file's own format (vcrpy's YAML or JSON writer, so vcrpy reads it as before),
  atomically, keeping its permissions. A request body keeps its digest of what was sent, so a replay still matches
  it. A file that cannot be made clean (a binary body) is removed and its repetition becomes an infrastructure
  error, as a refused write is;
- **pytest's text**: every report the terminal still holds (``terminalreporter.stats``: failures, errors, passes,
  their captured sections and ``-l`` locals, tolerated ones) and every warning's message, before the terminal
  summary prints them;
- **JUnit's file**, once pytest and the plugin's annotator have written it.

Nothing is written anywhere for this but the redacted files themselves: the lists travel in memory.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_consistency.secrets.literals import find_secret, redactor

#: The ``workeroutput`` entries of a worker's written cassettes, and of the secrets it first redacted text with.
WRITTEN_KEY = "consistency_written_cassettes"
FIRST_KEY = "consistency_first_redaction"


class Written:
    """The cassette files one session wrote in this process, each with the secrets its pre-write scan looked for
    (the later write of a file replaces the earlier: it is what the file now holds)."""

    def __init__(self) -> None:
        self.files: dict[str, frozenset[str]] = {}

    def output(self) -> dict[str, Any]:
        """For ``workeroutput``: plain lists, each distinct set of secrets once (most files share one)."""
        sets: dict[frozenset[str], int] = {}
        files = [[path, sets.setdefault(secrets, len(sets))] for path, secrets in self.files.items()]
        return {"sets": [sorted(secrets) for secrets in sets], "files": files}

    def merge(self, output: Mapping[str, Any] | None) -> None:
        if not output:
            return
        sets = [frozenset(secrets) for secrets in output.get("sets", ())]
        for path, index in output.get("files", ()):
            self.files[str(path)] = sets[index]


#: The sessions running in this process, innermost last (pytester runs one inside another's test).
_SESSIONS: list[Written] = []


def open_session() -> Written:
    written = Written()
    _SESSIONS.append(written)
    return written


def close_session(written: Written) -> None:
    if written in _SESSIONS:
        _SESSIONS.remove(written)


def note_written(path: str | os.PathLike[str], secrets: Iterable[str]) -> None:
    """The persister wrote ``path`` after scanning it for ``secrets``."""
    if _SESSIONS:
        _SESSIONS[-1].files[os.path.abspath(path)] = frozenset(secrets)


def late(known: Iterable[str], first: Iterable[frozenset[str]]) -> list[str]:
    """The secrets some text of the session may still hold: those missing from the list a process first redacted
    with (each process's list only grows, so its first is the shortest)."""
    known = set(known)
    missing: set[str] = set()
    for used in first:
        missing |= known - used
    return sorted(missing)


# --- cassettes ----------------------------------------------------------------------------------------------


class UncleanCassette(Exception):
    """A cassette still held a secret after it was rewritten; it has been removed."""


def rescrub_cassettes(files: Mapping[str, frozenset[str]], known: Iterable[str]) -> dict[str, str]:
    """Rewrite each of ``files`` that holds a secret of ``known`` its pre-write scan did not look for; returns the
    files that could not be made clean (removed), with why."""
    known = frozenset(known)
    problems: dict[str, str] = {}
    for path, scanned in files.items():
        missing = sorted(known - scanned)
        if not missing:
            continue
        try:
            rescrub(Path(path), missing)
        except Exception as exc:  # whatever stops the rewrite, the file must not stay as it is
            if isinstance(exc, UncleanCassette):
                reason = str(exc)
            else:  # the error's name only: a parser's message may quote the line that holds the secret
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
                reason = f"it could not be rewritten ({why}), so it was removed; re-record it"
            try:
                Path(path).unlink(missing_ok=True)
            except OSError as gone:
                reason += f"; it could not be removed either ({gone.strerror or gone})"
            problems[path] = reason
    return problems


def rescrub(path: Path, secrets: list[str]) -> bool:
    """Rewrite the cassette at ``path`` without ``secrets`` when it holds one; whether it was rewritten."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return False
    serializer = _serializer(path)
    data = serializer.deserialize(text)
    # The text as written (every escape the writer used) and as read back (a folded YAML line splits no value).
    if find_secret(text, secrets) is None and find_secret(data, secrets) is None:
        return False
    redact = redactor(secrets, shapes=False)
    for interaction in data.get("interactions", ()) if isinstance(data, dict) else ():
        _redact_interaction(interaction, redact)
    if isinstance(data, dict):
        for key in [k for k in data if k != "interactions"]:
            data[key] = _redacted(data[key], redact)
    cleaned = serializer.serialize(data)
    found = find_secret(cleaned, secrets) or find_secret(serializer.deserialize(cleaned), secrets)
    if found:
        raise UncleanCassette(
            f"it still held {found} after redaction (a binary body?), so it was removed; re-record it"
        )
    write_atomic(path, cleaned)
    return True


def _serializer(path: Path) -> Any:
    """What the persister reads and writes the file's format with: vcrpy's serializer (loaded on first use)."""
    from pytest_consistency.cassette import _vcr

    return _vcr.serializer("json" if path.suffix == ".json" else "yaml")


def _redact_interaction(interaction: Any, redact: Callable[[str], str]) -> None:
    """Every string of one exchange redacted in place; a response whose body changed gets its new length."""
    if not isinstance(interaction, dict):
        return
    response = interaction.get("response")
    body = response.get("body") if isinstance(response, dict) else None
    before = body.get("string") if isinstance(body, dict) else None
    for key in list(interaction):
        interaction[key] = _redacted(interaction[key], redact)
    response = interaction.get("response")
    body = response.get("body") if isinstance(response, dict) else None
    after = body.get("string") if isinstance(body, dict) else None
    if after == before or not isinstance(after, (str, bytes)) or not isinstance(response, dict):
        return
    headers = response.get("headers")
    if not isinstance(headers, dict):
        return
    length = len(after.encode("utf-8") if isinstance(after, str) else after)
    for name in list(headers):
        if isinstance(name, str) and name.lower() == "content-length" and isinstance(headers[name], list):
            headers[name] = [str(length)]


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` with every string (and text held as bytes) redacted; mappings and lists changed in place."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, bytes):
        try:
            return redact(value.decode("utf-8")).encode("utf-8")
        except UnicodeDecodeError:  # binary: each byte as a character, so a secret's ASCII bytes are still found
            return redact(value.decode("latin-1")).encode("latin-1", "replace")
    if isinstance(value, list):
        value[:] = [_redacted(item, redact) for item in value]
    elif isinstance(value, dict):
        items = [(_redacted(k, redact), _redacted(v, redact)) for k, v in value.items()]
        value.clear()
        value.update(items)
    return value


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` through a file beside it, keeping its permissions."""
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
