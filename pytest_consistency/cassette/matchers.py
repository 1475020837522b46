"""The matchers vcrpy compares a live request with a recorded one by, beside its own ``method`` and ``uri``.

``match_body`` compares the digests of the bodies as sent (``scrub.body_digest``), or, with match rules
(``--consistency-match-ignore``, the ``pytest_consistency_normalize_request`` hook), the bodies as the rules leave
them (``match_rules``). The rules reach the matcher by closure (``body_matcher``), when the scope builds the VCR, as
vcrpy's own ``config.py`` binds its settings; nothing is kept in a module global. ``match_key`` compares the key
fingerprints. A matcher raises ``AssertionError`` with the reason, which vcrpy keeps for its mismatch diagnosis
(``messages.mismatch_detail`` reads it, by the matcher's name). The fast replay path (``replay``) calls the same
functions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pytest_consistency.capture.wire import BODY_DIGEST_HEADER, RECORDED_KEY_HEADER
from pytest_consistency.cassette.match_rules import MatchRules, first_difference, normalise, parse_body
from pytest_consistency.cassette.scrub import header

Matcher = Callable[[Any, Any], None]


def _bodies_differ(live: Any, recorded: Any, compared: tuple[Any, Any] | None = None) -> AssertionError:
    """The mismatch, naming where the bodies first differ (both are redacted: a secret never shows)."""
    before, after = compared or (parse_body(recorded.body), parse_body(live.body))
    where = first_difference(before, after)
    return AssertionError(
        "request bodies differ (model, prompt or parameters changed)"
        + (f": {where}" if where else ": in a value redacted from the cassette")
    )


def match_body(r1: Any, r2: Any, rules: MatchRules) -> None:
    """The digests of the bodies as sent; cassettes without one (recorded before digests) compare bodies. With
    match rules, the bodies as the rules leave them (``r1`` is the request sent now, ``r2`` the recorded one)."""
    if rules.active:
        recorded = normalise(parse_body(r2.body), rules, str(r2.uri))
        live = normalise(parse_body(r1.body), rules, str(r1.uri))
        if recorded != live:
            raise _bodies_differ(r1, r2, (recorded, live))
        return
    d1, d2 = header(r1.headers, BODY_DIGEST_HEADER), header(r2.headers, BODY_DIGEST_HEADER)
    if d1 and d2:
        if d1 != d2:
            raise _bodies_differ(r1, r2)
        return
    if r1.body == r2.body:
        return
    try:
        same = json.loads(r1.body or b"null") == json.loads(r2.body or b"null")
    except ValueError:
        same = False
    if not same:
        raise _bodies_differ(r1, r2)


def body_matcher(rules: MatchRules) -> Matcher:
    """``match_body`` with this session's ``rules`` bound, as vcrpy's ``register_matcher`` takes it. vcrpy reports a
    failed matcher by its ``__name__``, so the closure keeps the name ``match_body``."""

    def matcher(r1: Any, r2: Any) -> None:
        match_body(r1, r2, rules)

    matcher.__name__ = matcher.__qualname__ = "match_body"
    return matcher


def match_key(r1: Any, r2: Any) -> None:
    """Same key fingerprint, when both requests carried a key (``r1`` is the request sent now, ``r2`` the recorded
    one, as vcrpy passes them)."""
    a, b = header(r1.headers, RECORDED_KEY_HEADER), header(r2.headers, RECORDED_KEY_HEADER)
    if a == b or not a or not b:
        return
    raise AssertionError(f"key fingerprint differs ({b} recorded, {a} now)")
