"""Hold a live sample's cassette to its prefix: replay-only until the first STEP-1 calls were served in order.

Why: a sample runs in vcrpy's ``new_episodes`` mode (replay what is recorded, record what is new). Left at that, a
prefix request that differs by one byte from the recording would simply go live, and the "resampled" step would
be resampled from another context. While the prefix lasts the cassette is write-protected (vcrpy's ``none``), so
such a request is refused as a replay mismatch (no live call); once the prefix's last call was played, in order,
the cassette records: step STEP and everything after it go live.

While the prefix lasts, the key fingerprint is not matched: the prefix is a replay, and the plugin never lets the
environment's key decide what replays (replay-only sessions do not compare it either); the live steps are matched
and recorded with the key they are sent with, and each call's recorded fingerprint stays in the report.
"""

from __future__ import annotations

from typing import Any


class PrefixOrderError(RuntimeError):
    """A prefix call was answered out of order: the agent's calls are not the recorded trajectory's."""


def hold_prefix(cassette: Any, length: int) -> None:
    """Make ``cassette`` (a vcrpy ``Cassette`` in ``new_episodes`` mode) replay-only for its first ``length`` plays.

    Play k must serve exchange k (a prefix is a sequence, not a set of answers); when ``length`` plays are done the
    cassette's own mode is restored. ``length`` 0 leaves the cassette as it is (step 1: everything is live)."""
    if length <= 0:
        return
    from pytest_consistency.cassette import _vcr
    from pytest_consistency.cassette.matchers import match_key

    # A patch of vcrpy's cassette, on this one cassette: its mode and matchers swapped while the prefix lasts, its
    # play_response wrapped to check the order. No upstream issue: vcrpy has no per-play hook and no way to change a
    # cassette's mode or matchers once it is loaded (its record_mode and _match_on attributes are read at each play).
    recording_mode, matchers = cassette.record_mode, cassette._match_on
    cassette.record_mode = _vcr.record_mode("none")
    cassette._match_on = tuple(m for m in matchers if m is not match_key)  # vcrpy keeps its matchers there
    play = cassette.play_response

    def play_in_order(request: Any) -> Any:
        response = play(request)
        played = sorted(index for index, count in cassette.play_counts.items() if count)
        if played != list(range(len(played))):
            step = next(i for i, index in enumerate(played) if i != index) + 1
            raise PrefixOrderError(
                f"resample: call {len(played)} of the replayed prefix matched a later recorded call than step {step}; "
                "the agent's calls are not in the recorded order"
            )
        if len(played) >= length:
            cassette.record_mode, cassette._match_on = recording_mode, matchers
        return response

    cassette.play_response = play_in_order
