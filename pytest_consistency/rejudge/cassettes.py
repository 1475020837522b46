"""A judge sample's cassette: its source repetition's exchanges that are not the judge's, then the judge's new ones.

Why a filtered copy, and not a replay of the source cassette: vcrpy would answer the judge's request from the
source's own judge exchange (same agent output, same request), so the judge would never be asked again. A sample's
cassette is therefore written first as the source's exchanges whose recorded request is not tagged
``x-consistency-role: judge`` (the agent's and a simulated user's, in their order), and the sample runs on it in a
mode that replays those and records only the judge's (:mod:`.guard`). A sample cassette holding a judge exchange is
*complete* and replays offline; it is trusted only while its other exchanges are still the source's, so re-recording
the source makes its old samples an error naming the file, never a silent replay of another agent output.

Pure functions of files and plain data (no pytest, no vcrpy).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_consistency.resample.prefix import first_difference, interactions

#: The recorded request header naming a call's role (``capture.wire.ROLE_HEADER``), and the judge's role.
ROLE_HEADER = "x-consistency-role"
JUDGE = "judge"


def role_of(exchange: dict[str, Any]) -> str:
    """The role a recorded exchange was made with: its request's ``x-consistency-role`` header, else ``agent``."""
    headers = (exchange.get("request") or {}).get("headers") or {}
    for name, value in headers.items() if isinstance(headers, dict) else ():
        if str(name).lower() == ROLE_HEADER:
            found = value[0] if isinstance(value, list) and value else value
            return str(found) if found else "agent"
    return "agent"


def not_judged(source: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The exchanges of ``source`` that are not the judge's, in order: what a judge sample replays."""
    return [exchange for exchange in source if role_of(exchange) != JUDGE]


@dataclass(frozen=True)
class SampleState:
    """What a sample's cassette on disk is: ``missing`` (or only the copy an interrupted sample wrote: it is asked
    again), ``complete`` (it holds a judge exchange and the source's other exchanges unchanged), or ``stale`` (its
    other exchanges are no longer the source's: ``call`` is the first that differs, 1-based)."""

    state: Literal["missing", "complete", "stale"]
    call: int = 0


def sample_state(replayed: list[dict[str, Any]], path: Path) -> SampleState:
    """Compare the sample cassette at ``path`` with ``replayed`` (its source's exchanges that are not the judge's).

    Raises :class:`~pytest_consistency.resample.prefix.PrefixError` when the file is not a readable cassette."""
    if not path.is_file():
        return SampleState("missing")
    recorded = interactions(path)
    if not any(role_of(exchange) == JUDGE for exchange in recorded):
        return SampleState("missing")
    theirs = not_judged(recorded)
    differs = first_difference(replayed, theirs, max(len(replayed), len(theirs)))
    return SampleState("complete") if differs is None else SampleState("stale", differs)
