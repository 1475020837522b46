"""Hold a rejudge sample's cassette to its recording: only the judge's requests may go out (or, sampling the agent,
none of the simulated user's).

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

An agent sample (``--consistency-rejudge-role=agent``) is held the other way round (:func:`hold_to_script`): the
simulated user's requests are played from the recording by role and order, or refused, never sent; the agent's and
the judge's go live. The role header is on every request that is not the agent's while a repetition records or
replays, so a committed agent sample replays its user turns by order too.
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


def same_role(r1: Any, r2: Any) -> None:
    """vcrpy matcher: a request plays only an exchange of its own role (an agent's never plays the user's)."""
    assert request_role(r1) == request_role(r2), f"role {request_role(r1)} != {request_role(r2)}"


def hold_to_script(cassette: Any, live: bool) -> None:
    """Play the simulated user's turns of an agent sample's cassette (``--consistency-rejudge-role=agent``) by role
    and order: the user's k-th request gets the k-th recorded user exchange whatever its body (it holds the agent's
    words, which differ now), and one beyond them is refused as a replay mismatch (vcrpy's ``none`` mode), never
    sent. Every other request: ``live`` (a sample being asked, ``new_episodes``), never played, recorded; else (a
    committed sample replaying) played from the cassette's exchanges of its own role by vcrpy's matchers.

    ``cassette`` is vcrpy's ``Cassette`` or the plugin's deferred one (a replay), which is loaded here: vcrpy's
    patches reach the methods set on the loaded cassette through it."""
    from pytest_consistency.cassette import _vcr
    from pytest_consistency.cassette.matchers import match_key
    from pytest_consistency.cassette.replay import DeferredCassette
    from pytest_consistency.rejudge.script import USER

    real = cassette.get() if isinstance(cassette, DeferredCassette) else cassette
    # A patch of vcrpy's cassette, on this one cassette, as hold_to_recording's (no upstream issue: vcrpy has no
    # per-request record mode and no way to serve a request by position); its data, play_counts and _match_on are
    # read at each play.
    recording, replaying = real.record_mode, _vcr.record_mode("none")
    real._match_on = (*(m for m in real._match_on if m is not match_key), same_role)
    turns = [index for index, (request, _) in enumerate(real.data) if request_role(request) == USER]
    served: list[int] = []
    can_play, play = real.can_play_response_for, real.play_response

    def by_role(request: Any) -> bool:
        if request_role(request) == USER:
            real.record_mode = replaying
            return len(served) < len(turns)
        if live:
            real.record_mode = recording
            return False
        return bool(can_play(request))

    def in_order(request: Any) -> Any:
        if request_role(request) != USER:
            return play(request)
        if len(served) >= len(turns):
            # by_role said it could not (vcrpy asks it first); only a concurrent user call gets here
            raise RuntimeError(f"the simulated user's call {len(served) + 1} is beyond the {len(turns)} recorded")
        index = turns[len(served)]
        served.append(index)
        real.play_counts[index] += 1
        return real.data[index][1]

    real.can_play_response_for = by_role
    real.play_response = in_order
