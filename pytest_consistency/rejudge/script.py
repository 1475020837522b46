"""An agent sample's cassette (``--consistency-rejudge-role=agent``): its source repetition's simulated-user turns,
then the agent's and the judge's new exchanges.

Why the user's turns alone: the agent is sampled again on the recorded user, so the sample's cassette holds only
what replays, the source's exchanges whose recorded request is tagged ``x-consistency-role: user``, in their order
(the *script*). The agent's and the judge's requests are asked again and recorded after them. The user's turns are
played by role and order (:func:`.guard.hold_to_script`), never matched on their body: the user's request holds the
agent's words, which now differ. A sample cassette holding an exchange that is not the user's is *complete* and
replays offline; it is trusted only while its user turns are still the source's, so re-recording the source makes
its old samples an error naming the file.

Why not the reverse (replay the agent, sample the user): once a user turn differs, the agent's next request holds
it and differs from every recorded one, so the agent cannot replay; sampling the user samples the agent after it
too, and splits nothing.

Pure functions of files and plain data (no pytest, no vcrpy).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_consistency.rejudge.cassettes import SampleState, role_of
from pytest_consistency.resample.prefix import first_difference, interactions

#: The simulated user's role (``consistency.role("user")``), whose recorded turns an agent sample replays.
USER = "user"


def user_turns(source: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The exchanges of ``source`` that are the simulated user's, in order: what an agent sample replays."""
    return [exchange for exchange in source if role_of(exchange) == USER]


def script_state(script: list[dict[str, Any]], path: Path) -> SampleState:
    """Compare the agent sample cassette at ``path`` with ``script`` (its source's user turns): ``missing`` (no
    file, or only the copy an interrupted sample left), ``complete`` (an exchange that is not the user's, and the
    source's user turns unchanged), ``stale`` (``call``: its first user turn that differs, 1-based).

    Raises :class:`~pytest_consistency.resample.prefix.PrefixError` when the file is not a readable cassette."""
    if not path.is_file():
        return SampleState("missing")
    recorded = interactions(path)
    if all(role_of(exchange) == USER for exchange in recorded):
        return SampleState("missing")
    theirs = user_turns(recorded)
    differs = first_difference(script, theirs, max(len(script), len(theirs)))
    return SampleState("complete") if differs is None else SampleState("stale", differs)
