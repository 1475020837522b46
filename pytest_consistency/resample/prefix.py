"""A sample's cassette starts as the recorded prefix of the repetition it was resampled from.

Why a copy, and not a replay of the source cassette: vcrpy would serve step STEP from the source recording too
(same context, same request), so the step would never go live. A sample's cassette is therefore written as the
source's first STEP-1 exchanges, exactly as recorded, and the sample runs on it in a mode that replays those and
records what follows (see :mod:`.guard`). A sample cassette on disk is *complete* once it holds more than the
prefix; it is trusted only while its first STEP-1 exchanges are still those of the source, so re-recording the
source makes its old samples an error that names the step, not a silent replay of another trajectory.

Pure functions of files and plain data (no pytest, no vcrpy).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from pytest_consistency.cassette.bounds import refuse_depth, refuse_references

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class PrefixError(ValueError):
    """A cassette cannot serve as a prefix (unreadable, not a cassette, or no longer the source's prefix)."""


def interactions(path: Path) -> list[dict[str, Any]]:
    """The recorded exchanges of a vcrpy cassette, in the order they were made."""
    try:
        text = path.read_text(encoding="utf-8")
        # A JSON cassette (--consistency-cassette-format=json) is read as JSON: PyYAML refuses (libyaml) or misreads
        # (two lone surrogates) the \u escapes of a character beyond the BMP.
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            refuse_references(text, _LOADER)  # the bounds every cassette is read within (cassette.bounds)
            data = yaml.load(text, Loader=_LOADER)
        refuse_depth(data)
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
        why = str(exc) if len(str(exc)) <= 300 else str(exc)[:297] + "..."
        raise PrefixError(f"cannot read cassette {path}: {type(exc).__name__}: {why}") from None
    found = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(found, list) or not all(isinstance(i, dict) and "request" in i for i in found):
        raise PrefixError(f"{path} is not a vcrpy cassette (no list of interactions)")
    return found


def write_prefix(source: list[dict[str, Any]], length: int, path: Path) -> None:
    """Write ``path`` as a cassette of the first ``length`` exchanges of ``source``, atomically."""
    write_cassette(source[:length], path)


def write_cassette(exchanges: list[dict[str, Any]], path: Path) -> None:
    """Write ``path`` as a cassette of ``exchanges`` (YAML, or JSON for a ``.json`` path), atomically."""
    data = {"interactions": exchanges, "version": 1}
    if path.suffix == ".json":
        text = json.dumps(data, indent=4, ensure_ascii=False)
    else:
        text = yaml.dump(data, Dumper=_DUMPER, allow_unicode=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: Paths of the calls that are model steps (as the trajectory counts them): Chat Completions, Responses, legacy
#: completions, Messages.
SAMPLING_PATHS = ("/chat/completions", "/responses", "/completions", "/messages")


def step_exchanges(source: list[dict[str, Any]]) -> list[int]:
    """The index of each step's exchange: an answered (2xx) sampling call. A failed attempt that the SDK retried
    (a 429, a 500) is an exchange of the cassette but not a step, as in the divergence map."""
    found = []
    for index, exchange in enumerate(source):
        uri = str((exchange.get("request") or {}).get("uri", "")).split("?", 1)[0].rstrip("/")
        status = ((exchange.get("response") or {}).get("status") or {}).get("code")
        if isinstance(status, int) and 200 <= status < 300 and uri.endswith(SAMPLING_PATHS):
            found.append(index)
    return found


def _body(request: dict[str, Any]) -> Any:
    body = request.get("body")
    return body.get("string") if isinstance(body, dict) else body


def first_difference(source: list[dict[str, Any]], sample: list[dict[str, Any]], length: int) -> int | None:
    """The first step (1-based) among the first ``length`` whose request or response in ``sample`` is not the one
    ``source`` recorded (method, URI, body as stored; response status and body); None when the prefix is intact.

    A sample shorter than the prefix differs at its first missing step."""
    for index in range(length):
        if index >= len(sample) or index >= len(source):
            return index + 1
        a, b = source[index], sample[index]
        ra, rb = a.get("request", {}), b.get("request", {})
        same_request = (ra.get("method"), ra.get("uri"), _body(ra)) == (rb.get("method"), rb.get("uri"), _body(rb))
        sa, sb = a.get("response", {}), b.get("response", {})
        if not same_request or (sa.get("status"), sa.get("body")) != (sb.get("status"), sb.get("body")):
            return index + 1
    return None


def is_complete(sample: list[dict[str, Any]], length: int) -> bool:
    """A sample holds its resampled step (the prefix alone is an interrupted live sample, sampled again)."""
    return len(sample) > length
