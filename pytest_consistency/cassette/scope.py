"""Everything around one marked repetition: its cassette entered, the network blocked in replay, the observer inside.

The top of the cassette wing: it builds vcrpy's ``VCR`` for the repetition (``_vcr.make_vcr``), registering the
plugin's matchers with the session's match rules bound by closure (``matchers.body_matcher``), the plugin's persister
(``persist``) and filters (``scrub``); chooses the fast replay path (``replay``) when the repetition only replays;
and puts the prepared patches in place (``_vcr.Patches``). What it hands the transports travels on the active
repetition (``state.replay``, ``state.answers``, ``state.explain``) and to the observer (vcrpy's unpatched network
transports, for requests an in-process mock answers).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pytest_consistency.capture import wire
from pytest_consistency.capture.active import current
from pytest_consistency.capture.standin import refusing
from pytest_consistency.cassette import _vcr
from pytest_consistency.cassette.match_rules import MatchRules
from pytest_consistency.cassette.matchers import body_matcher, match_key
from pytest_consistency.cassette.messages import mismatch_detail
from pytest_consistency.cassette.paths import serializer_name
from pytest_consistency.cassette.persist import Persister
from pytest_consistency.cassette.replay import DeferredCassette, Replay
from pytest_consistency.cassette.scrub import Scrubber, before_save_interaction

#: Modes in which every pinned call is answered from an existing cassette (see ``replay``).
FAST_REPLAY_MODES = ("none", "once")


def make_vcr(mode: str, scrubber: Scrubber, persister: Persister, serializer: str, rules: MatchRules) -> Any:
    """vcrpy's ``VCR`` for one repetition's cassette.

    Replay-only mode never sends, so the environment's key (none, a placeholder, a dummy, a real one) must not decide
    what replays: keys are then compared across the recorded repetitions (drift), not with the environment.
    Recording modes do compare it: another key is another route."""
    matchers = {"consistency_body": body_matcher(rules)}
    if mode != "none":
        matchers["consistency_key"] = match_key
    uri = ("path", "query") if rules.any_host else ("uri",)  # vcrpy's own matchers
    return _vcr.make_vcr(mode, serializer, persister, matchers, scrubber.response, before_save_interaction, uri)


@contextlib.contextmanager
def use_cassette(
    path: Path,
    mode: str,
    scrubber: Scrubber,
    rerecord: str,
    keep: Callable[[], bool],
    exists: bool | None = None,
    rules: MatchRules | None = None,
) -> Iterator[Any]:
    """Enter the cassette; on the way out save it only if ``keep()`` says the repetition is worth keeping.

    What vcrpy's ``use_cassette`` does, on prepared patches: load, patch, run, save (never after an exception),
    unpatch. The patches are removed even when the save fails, or every later request in the process would
    still go through this cassette.

    When the repetition only replays an existing file, the pinned clients are answered by ``replay.Replay`` from
    the file parsed here (a bad file still fails the setup), and vcrpy's ``Cassette`` is loaded only if some other
    client (or a request the fast path cannot answer) reaches vcrpy's patches.
    """
    rules = rules or MatchRules()
    persister = Persister(scrubber, rerecord)
    recorder = make_vcr(mode, scrubber, persister, serializer_name(path), rules)

    def load() -> Any:
        return _vcr.load_cassette(recorder, path, refusing(scrubber.filter))

    state = current()
    cassette: Any
    fast = None
    if mode in FAST_REPLAY_MODES and (path.is_file() if exists is None else exists):
        fast = Replay(path, scrubber, persister, match_key_fingerprint=mode != "none", rules=rules)
        fast.interactions()
        cassette = DeferredCassette(lambda: fast.adopt(load()))
    else:
        cassette = load()
    if state is not None:
        state.vcr_cassette = cassette
        state.replay = fast
        state.explain = mismatch_detail
        state.answers = functools.partial(answers, cassette)
    try:
        with _vcr.patches_for(cassette).applied(cassette):
            yield cassette
            loaded = cassette.loaded if fast is not None else cassette
            count_unobserved(loaded, fast)
            if keep() and loaded is not None:
                loaded._save()
    finally:
        if state is not None:
            state.replay = state.answers = None


def answers(cassette: Any, request: Any) -> bool:
    """Whether ``cassette`` will answer ``request`` (an httpx or httpx2 request): ``new_episodes`` asks this before
    throttling a request, as replays are never throttled (vcrpy asks again right after: the scrubbed form is
    cached, so the second time is cheap)."""
    if not len(cassette):
        return False
    headers = dict(request.headers.items())
    recorded = _vcr.request(request.method, str(request.url), wire.request_content(request), headers)
    return bool(cassette.can_play_response_for(recorded))


def count_unobserved(cassette: Any, fast: Any = None) -> None:
    """Exchanges the cassette served or recorded beyond the answered calls the plugin observed.

    vcrpy also patches requests, urllib3, aiohttp and others that the plugin does not observe; their traffic
    would otherwise read as "no calls, no drift" while it reached some host.
    """
    state = current()
    if state is None:
        return
    if cassette is None:  # vcrpy's cassette never loaded: only the fast replay path served anything
        served = sum(fast.played.values()) if fast is not None else 0
    else:
        served = sum(cassette.play_counts.values()) + max(0, len(cassette.data) - getattr(cassette, "_loaded_count", 0))
    answered = sum(1 for call in state.calls if call.status is not None)
    state.unobserved += max(0, served - answered)


@contextlib.contextmanager
def repetition_scope(
    path: Path | None,
    mode: str,
    scrubber: Scrubber,
    rerecord: str,
    keep: Callable[[], bool],
    observe: Callable[[Callable[[str, bool], Any]], contextlib.AbstractContextManager[Any]],
    exists: bool | None = None,
    rules: MatchRules | None = None,
) -> Iterator[None]:
    """Everything around one marked repetition, innermost last: cassette, network block, transport observer.

    The observer goes inside the cassette so that it wraps vcrpy's patch and sees replayed attempts too; ``observe``
    is handed ``_vcr.unpatched_network`` (vcrpy's saved network transports). ``exists``: whether the cassette file
    is there, when the caller has just looked (else it is looked up here). ``rules``: the session's match rules.
    """
    from pytest_consistency.capture.network import REPLAY_ONLY, blocked

    if path is not None and exists is None:
        exists = path.is_file()
    with contextlib.ExitStack() as stack:
        if path is not None and mode == "none" and not exists:
            # Nothing to replay: vcrpy (imported, patched, unpatched) would only refuse every request. The
            # plugin's transports refuse httpx and httpx2 requests themselves, the network block everything else.
            state = current()
            if state is not None:
                state.cassette_absent = True
        elif path is not None and mode != "off" and _vcr.available():
            stack.enter_context(use_cassette(path, mode, scrubber, rerecord, keep, bool(exists), rules))
        if mode == "none":
            stack.enter_context(blocked(REPLAY_ONLY))
        stack.enter_context(observe(_vcr.unpatched_network))
        yield
