"""What a cassette stores of a request and a response: credentials out, the route's facts in.

vcrpy's request filter (``Scrubber.filter``) and response filter (``Scrubber.response``), and the hook that copies
the recorded route facts onto the response (``before_save_interaction``). A request is stored without its key (only
the key's fingerprint, ``x-consistency-key-fingerprint``), without credentials in its URL or body, with the digest
of its body as sent (``matchers.match_body`` compares it) and with the latency measured while recording. The secrets
a scrub found are scanned for again before each write (``persist.Persister.save_cassette``) and in every output of
the session. Nothing here imports vcrpy: the filters see vcrpy's objects only through their attributes.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import re
import time
from collections.abc import Iterable
from typing import Any

from pytest_consistency.capture.active import current
from pytest_consistency.capture.wire import (
    BODY_DIGEST_HEADER,
    RECORDED_KEY_HEADER,
    RECORDED_LATENCY_HEADER,
    RECORDED_STARTED_HEADER,
    RECORDED_URL_HEADER,
    ROUTE_KEY_HEADER,
    SENT_AT_HEADER,
    provider_of,
)
from pytest_consistency.secrets.keys import credential_of, fingerprint
from pytest_consistency.secrets.names import header_credential, name_is_secret
from pytest_consistency.secrets.structures import body_credentials, redact_body, redact_url, url_credentials


def body_digest(body: Any) -> str:
    """sha256 of the body as sent; JSON is canonicalised first, so key order and spacing do not matter."""
    return _digest(body.encode() if isinstance(body, str) else bytes(body or b""))


@functools.lru_cache(maxsize=256)
def _digest(data: bytes) -> str:
    """Cached: vcrpy passes each request through the filter several times (deep copies share the bytes)."""
    try:
        data = json.dumps(json.loads(data), sort_keys=True, separators=(",", ":")).encode()
    except ValueError:
        pass
    return "sha256:" + hashlib.sha256(data).hexdigest()[:32]


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def header(headers: Any, name: str) -> str | None:
    value = headers.get(name)
    if isinstance(value, list):
        value = value[0] if value else None
    return None if value is None else str(value)


#: The scrubbed form of requests, by everything that decides it: the request itself, the secrets its repetition had
#: seen before it (they are redacted from it too) and the routes' key fingerprints; with the secrets the scrub found,
#: which the next repetition to send the same request learns from here. vcrpy filters one live request three times
#: (can it play? play it; or record it), a fast replay once; each full scrub fingerprints the key, walks the headers
#: and the JSON body for secrets and digests the body, and every repetition of a task sends the same first request.
_SCRUBBED: dict[tuple[Any, ...], tuple[str, Any, dict[str, Any], frozenset[str]]] = {}


class Scrubber:
    """vcrpy's request and response filters, and the secrets they saw (scanned for again before each write).

    vcrpy runs the request filter on live requests and *again* on requests loaded from a cassette; a loaded
    request carries ``x-consistency-key-fingerprint`` already and is left as recorded, so its fingerprint and body
    digest survive ``new_episodes`` re-saves.
    """

    def __init__(
        self, key: str | None, ignore: tuple[re.Pattern[str], ...] = (), route_keys: dict[str, str] | None = None
    ) -> None:
        self.secrets: set[str] = {key} if key else set()
        self.ignore = ignore
        #: The pinned routes' key fingerprints by provider, stored with each exchange (see ``ROUTE_KEY_HEADER``).
        self.route_keys = route_keys or {}
        #: Everything besides the request that decides its scrubbed form (see ``_SCRUBBED``).
        self._context = tuple(sorted(self.route_keys.items()))

    def filter(self, request: Any) -> Any:
        """The cassette's request filter: what vcrpy's own chain does here (a deep copy, then ``request``), without
        copying what needs none. vcrpy filters every request loaded from the cassette and each live one three
        times, deep-copying each first: most of a replayed call's cost. A loaded request is returned as it is (it is
        already scrubbed and nothing changes it); a live one is scrubbed on a shallow copy with its own headers."""
        if RECORDED_KEY_HEADER in request.headers:
            return request
        clone = copy.copy(request)
        clone.headers = dict(request.headers)
        return self.request(clone)

    def request(self, request: Any) -> Any:
        headers = request.headers
        if RECORDED_KEY_HEADER in headers:  # loaded from a cassette: already scrubbed, keep what was recorded
            return request
        if any(pattern.search(request.uri) for pattern in self.ignore):
            return None  # neither recorded nor replayed (see --consistency-ignore-url)
        sent_at = header(headers, SENT_AT_HEADER)
        pairs = [(name, headers[name]) for name in headers if name.lower() != SENT_AT_HEADER]
        key = (
            self._context,
            frozenset(self.secrets),
            request.method,
            request.uri,
            request.body,
            tuple((n, _hashable(v)) for n, v in pairs),
        )
        scrubbed = _SCRUBBED.get(key)
        if scrubbed is None:
            scrubbed = (*self._scrub(request.uri, request.body, pairs), frozenset(self.secrets))
            if len(_SCRUBBED) >= 64:  # a long agent loop, or many tasks: the memo must not grow forever
                _SCRUBBED.clear()
            _SCRUBBED[key] = scrubbed
        else:
            self._found(scrubbed[3])
        uri, body, kept, _ = scrubbed
        for name in list(headers):
            del headers[name]
        headers.update({name: list(value) if isinstance(value, list) else value for name, value in kept.items()})
        if sent_at is not None:  # measured now, at each filtering: recording filters after the response arrived
            perf, _, wall = str(sent_at).partition(" ")
            with contextlib.suppress(ValueError):
                latency = f"{(time.perf_counter() - float(perf)) * 1000:.3f}"
                headers[RECORDED_LATENCY_HEADER] = latency
                state = current()
                if wall and state is not None:  # the last filtering is the one the cassette keeps: see Attempt.tap
                    state.recorded_timings[str(sent_at)] = (float(wall), float(latency))
            if wall:
                headers[RECORDED_STARTED_HEADER] = wall
        request.uri = uri
        request.body = body
        return request

    def _scrub(self, uri: str, body: Any, pairs: list[tuple[str, Any]]) -> tuple[str, Any, dict[str, Any]]:
        """The request as stored: credentials out of headers, URL and body; key fingerprint and body digest in."""
        self.secrets.update(url_credentials(uri))
        fp = fingerprint(credential_of(dict(pairs), uri))
        kept: dict[str, Any] = {}
        for name, value in pairs:
            first = value[0] if isinstance(value, list) and value else value
            secret = header_credential(name, "" if first is None else str(first))
            if secret:
                self.secrets.add(secret)
            else:
                kept[name] = list(value) if isinstance(value, list) else value
        kept[RECORDED_KEY_HEADER] = fp or ""
        route_key = self.route_keys.get(provider_of({name.lower(): v for name, v in pairs}, uri))
        if route_key:
            kept[ROUTE_KEY_HEADER] = route_key
        kept[BODY_DIGEST_HEADER] = body_digest(body)
        self._found(body_credentials(body))
        return redact_url(uri, self.secrets), redact_body(body, self.secrets, fields=True), kept

    def _found(self, secrets: Iterable[str]) -> None:
        """Secrets this repetition sent: scanned for before each write, here and in every output of the session."""
        self.secrets.update(secrets)
        state = current()
        if state is not None:
            state.secrets.update(self.secrets)

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        headers = response.get("headers", {})
        for name in list(headers):
            values = headers[name] if isinstance(headers[name], list) else [headers[name]]
            if name_is_secret(name) or any(header_credential(name, str(v)) for v in values):
                del headers[name]
        body = response.get("body", {})
        if "string" in body:
            body["string"] = redact_body(body["string"], self.secrets)
        return response


def before_save_interaction(request: Any, response: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Copy the recorded route facts onto the response, where a replaying transport can read them."""
    headers = response.setdefault("headers", {})
    for name in (RECORDED_KEY_HEADER, RECORDED_LATENCY_HEADER, RECORDED_STARTED_HEADER, ROUTE_KEY_HEADER):
        value = header(request.headers, name)
        if value is not None:
            headers[name] = [value]
    headers[RECORDED_URL_HEADER] = [request.uri]  # (redacted) what a replay at another host keeps in the record
    return request, response
