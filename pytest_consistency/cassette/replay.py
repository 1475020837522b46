"""Serve a pinned client's replayed calls straight from the parsed cassette, without vcrpy's per-request machinery.

Why: a replayed SDK call through vcrpy paid, per repetition, for building vcrpy's ``Cassette`` (a ``Request`` object
with a case-insensitive header dict per interaction, a deep copy and the filter chain for each), then per request
for a ``Request`` of the live call, three passes of the request filter, matching against every interaction and
rebuilding the response: most of what a replay cost beyond the SDK itself. The pinned clients' transports are the
plugin's own, so they can ask the cassette directly: the file is parsed once (the same loader and the same checks as
vcrpy's, through ``persist.Persister``), the live request is scrubbed by the same ``scrub.Scrubber`` and compared with
the same matchers (method, URI, body digest or match rules, and the key fingerprint when recording: ``matchers``),
and the recorded response is rebuilt by vcrpy's own function. The response then goes back through the recording
transport, so the ``ResponseTap`` reads its body as it reads a live one.

What stays vcrpy's: the cassette files (vcrpy's YAML format, unchanged), the agent's own clients and every other
HTTP library vcrpy patches, and every request this path cannot answer. vcrpy's ``Cassette`` is then loaded on first
use (``DeferredCassette``) and shares this path's play counts, so an interaction is never replayed twice whichever
side served it, and vcrpy raises the replay mismatch with its own diagnosis. A cassette with an exchange this plugin
did not record (no key fingerprint header) is left to vcrpy altogether.
"""

from __future__ import annotations

import collections
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_consistency.capture.wire import RECORDED_KEY_HEADER, RECORDED_URL_HEADER, request_content
from pytest_consistency.cassette import _vcr
from pytest_consistency.cassette.match_rules import MatchRules, without_host
from pytest_consistency.cassette.matchers import match_body, match_key
from pytest_consistency.cassette.paths import serializer_name
from pytest_consistency.cassette.persist import Persister
from pytest_consistency.cassette.scrub import Scrubber


class Request:
    """The few attributes of vcrpy's ``Request`` that the scrubber and the matchers read."""

    __slots__ = ("body", "headers", "method", "uri")

    def __init__(self, method: str, uri: str, body: Any, headers: dict[str, Any]) -> None:
        self.method = method
        self.uri = uri
        self.body = body.encode("utf-8") if isinstance(body, str) else body  # as vcrpy's Request.body
        self.headers = headers

    def __copy__(self) -> Request:
        return Request(self.method, self.uri, self.body, self.headers)


class Replay:
    """One repetition's cassette as the pinned clients replay it (see the module docstring)."""

    def __init__(
        self,
        path: Path,
        scrubber: Scrubber,
        persister: Persister,
        match_key_fingerprint: bool,
        rules: MatchRules | None = None,
    ) -> None:
        self.path = path
        self.scrubber = scrubber
        self.persister = persister
        self.match_key_fingerprint = match_key_fingerprint
        #: What body matching leaves out (the session's match rules, as the VCR's matcher has them).
        self.rules = rules or MatchRules()
        #: Times each interaction was played, by index: shared with vcrpy's cassette once it is loaded.
        self.played: collections.Counter[int] = collections.Counter()
        self._interactions: list[tuple[Any, dict[str, Any]]] | None = None
        #: Files parsed by this path (a guard counts them: one per repetition at most).
        self.parses = 0

    def interactions(self) -> list[tuple[Any, dict[str, Any]]]:
        """The recorded exchanges, parsed on first use; empty when vcrpy must answer everything."""
        if self._interactions is None:
            self._interactions = self._load()
        return self._interactions

    def _load(self) -> list[tuple[Any, dict[str, Any]]]:
        self.parses += 1
        try:
            # Every check of a bad file (CassetteError naming it) is the persister's, raised here, in setup.
            loaded = self.persister.load_cassette(self.path, _vcr.serializer(serializer_name(self.path)))
        except _vcr.cassette_not_found():
            return []
        requests, responses = loaded[0], loaded[1]
        if any(RECORDED_KEY_HEADER not in request.headers for request in requests):
            return []  # recorded by something else: vcrpy's filters may change it, so vcrpy answers everything
        # What vcrpy's Cassette does with each loaded response (decode it, then the plugin's response filter); both
        # leave a filtered response as it is, so vcrpy may load these very objects later (see Persister.parsed).
        filtered = [self.scrubber.response(_decoded(response, _vcr.decode_response)) for response in responses]
        self.persister.parsed[str(self.path)] = (requests, filtered, *loaded[2:])
        return list(zip(requests, filtered, strict=True))

    def adopt(self, cassette: Any) -> Any:
        """vcrpy's cassette, loaded after all: it counts plays in this path's counter (same indices)."""
        cassette.play_counts = self.played
        return cassette

    def response_for(self, request: Any) -> Any | None:
        """The recorded response to ``request`` (an httpx or httpx2 request), or None to leave it to vcrpy."""
        interactions = self.interactions()
        if not interactions:
            return None
        headers = dict(request.headers.items())  # one pass: dict() of httpx Headers scans them once per name
        live = self.scrubber.filter(Request(str(request.method), str(request.url), request_content(request), headers))
        if live is None:
            return None
        any_host = self.rules.any_host
        wanted = without_host(live.uri) if any_host else live.uri
        for index, (recorded, response) in enumerate(interactions):
            if self.played[index] or recorded.method != live.method:
                continue
            if (without_host(recorded.uri) if any_host else recorded.uri) != wanted:
                continue
            try:
                match_body(live, recorded, self.rules)
                if self.match_key_fingerprint:
                    match_key(live, recorded)
            except AssertionError:
                continue
            self.played[index] += 1
            if any_host and recorded.uri != live.uri:  # the call's record keeps the URL it was recorded at
                response = {**response, "headers": {**response.get("headers", {}), RECORDED_URL_HEADER: [recorded.uri]}}
            return _vcr.build_response(response, sys.modules[type(request).__module__.split(".")[0]])
        return None

    def handler(self, send: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """``send`` (vcrpy's patched transport), answering from the cassette first."""

        def handle(request: Any) -> Any:
            response = self.response_for(request)
            return send(request) if response is None else response

        return handle


def _decoded(response: dict[str, Any], decode: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """vcrpy's ``decode_response``, which deep-copies every response first, only for a compressed one."""
    if any(name.lower() == "content-encoding" for name in response.get("headers", {})):
        return decode(response)
    return response


class DeferredCassette:
    """vcrpy's ``Cassette`` of the repetition, loaded the first time vcrpy's patches (or anyone) use it."""

    def __init__(self, load: Callable[[], Any]) -> None:
        self.__dict__["_load"] = load
        self.__dict__["loaded"] = None

    def get(self) -> Any:
        if self.__dict__["loaded"] is None:
            self.__dict__["loaded"] = self.__dict__["_load"]()
        return self.__dict__["loaded"]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)

    def __len__(self) -> int:
        return len(self.get())

    def __contains__(self, request: Any) -> bool:
        return request in self.get()

    def __str__(self) -> str:
        return str(self.get())
