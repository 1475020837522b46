"""Hold a judge sample's cassette to its recording: only the judge's requests may go out.

Why: a sample runs in vcrpy's ``new_episodes`` mode (replay what is recorded, record what is new). Left at that, an
agent request that differs by one byte from the recording would simply go live, and the judge would grade an agent
output that is not the recorded one (and the agent's call would be paid for). So each request is looked at as vcrpy
asks whether it can be played: the role the plugin's recording transport tagged it with (``x-consistency-role``,
set on every call that is not the agent's while a cassette records) decides. A request that is not the judge's is
played from the recording or refused as a replay mismatch (vcrpy's ``none`` mode: no live call); a judge's request
is never played from the recording (its copy holds no judge exchange; a retried judge call is asked again) and goes
live, recorded into the sample's cassette.

The key fingerprint is not matched: the agent's calls are a replay, and the plugin never lets the environment's key
decide what replays (the judge's calls are never matched at all).
"""

from __future__ import annotations

from typing import Any

from pytest_consistency.rejudge.cassettes import JUDGE, ROLE_HEADER


def request_role(request: Any) -> str:
    """The role of a vcrpy request: its ``x-consistency-role`` header, else ``agent``."""
    for name, value in dict(request.headers or {}).items():
        if str(name).lower() == ROLE_HEADER:
            found = value[0] if isinstance(value, list) and value else value
            return str(found) if found else "agent"
    return "agent"


def hold_to_recording(cassette: Any) -> None:
    """Make ``cassette`` (a vcrpy ``Cassette`` in ``new_episodes`` mode) replay-only for every request that is not
    the judge's, and record-only for the judge's."""
    from pytest_consistency.cassette import _vcr
    from pytest_consistency.cassette.matchers import match_key

    # A patch of vcrpy's cassette, on this one cassette: its mode chosen per request as vcrpy asks whether it can
    # play it. No upstream issue: vcrpy has no per-request record mode (its record_mode attribute is read by
    # write_protected right after can_play_response_for, for the same request).
    recording, replaying = cassette.record_mode, _vcr.record_mode("none")
    cassette._match_on = tuple(m for m in cassette._match_on if m is not match_key)  # vcrpy keeps its matchers there
    can_play = cassette.can_play_response_for

    def by_role(request: Any) -> bool:
        if request_role(request) == JUDGE:
            cassette.record_mode = recording
            return False
        cassette.record_mode = replaying
        return bool(can_play(request))

    cassette.can_play_response_for = by_role
