"""Per-repetition vcrpy cassettes: record once, replay every repetition offline, never leak a key.

One cassette per task repetition (``<dir>/<module>/<task>/rep-<i>.yaml``): a shared cassette would make
repetitions 2..n replay repetition 1 and report a false 0 % gap, and under xdist workers would race on it.
Requests match on method, URI, body and the key fingerprint, so a replay whose request changed is a replay
mismatch, not the old answer. The key fingerprint and the latency measured while recording travel in the
cassette as response headers, so a replay with a dummy key reports the recorded route.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pytest_consistency.capture import wire
from pytest_consistency.capture.active import current
from pytest_consistency.capture.wire import (
    BODY_DIGEST_HEADER,
    RECORDED_KEY_HEADER,
    RECORDED_LATENCY_HEADER,
    RECORDED_RETRY_HEADER,
    ROUTE_KEY_HEADER,
    SENT_AT_HEADER,
    provider_of,
)
from pytest_consistency.cassette import rescrub as late_secrets
from pytest_consistency.cassette import vcr_inflight, vcr_reset
from pytest_consistency.cassette import yaml_reader as cassette_yaml
from pytest_consistency.cassette.matching import MatchRules, first_difference, normalise, parse_body
from pytest_consistency.cassette.paths import format_hint, safe_name, serializer_name, task_directory  # noqa: F401  (safe_name re-exported)
from pytest_consistency.secrets.keys import REPLAY_KEY, credential_of, fingerprint  # noqa: F401  (REPLAY_KEY: re-exported)
from pytest_consistency.secrets.literals import find_secret
from pytest_consistency.secrets.names import header_credential, name_is_secret
from pytest_consistency.secrets.structures import body_credentials, redact_body, redact_url, url_credentials

MODES = ("none", "once", "new_episodes", "all")


class CassetteError(RuntimeError):
    """A cassette cannot be read or written; the message names the file and the fix. Fails one repetition."""


class SecretInCassetteError(CassetteError):
    """The cassette about to be written still holds a secret; nothing was written."""


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


def _header(headers: Any, name: str) -> str | None:
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
        sent_at = _header(headers, SENT_AT_HEADER)
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
            with contextlib.suppress(ValueError):
                headers[RECORDED_LATENCY_HEADER] = f"{(time.perf_counter() - float(sent_at)) * 1000:.3f}"
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
    for name in (RECORDED_KEY_HEADER, RECORDED_LATENCY_HEADER, ROUTE_KEY_HEADER):
        value = _header(request.headers, name)
        if value is not None:
            headers[name] = [value]
    return request, response


#: What replays leave out of body matching (``--consistency-match-ignore``, the normalize_request hook); set once
#: per process by the plugin.
_RULES = MatchRules()


def set_match_rules(rules: MatchRules) -> None:
    global _RULES
    _RULES = rules


def _bodies_differ(live: Any, recorded: Any, compared: tuple[Any, Any] | None = None) -> AssertionError:
    """The mismatch, naming where the bodies first differ (both are redacted: a secret never shows)."""
    before, after = compared or (parse_body(recorded.body), parse_body(live.body))
    where = first_difference(before, after)
    return AssertionError(
        "request bodies differ (model, prompt or parameters changed)"
        + (f": {where}" if where else ": in a value redacted from the cassette")
    )


def match_body(r1: Any, r2: Any) -> None:
    """The digests of the bodies as sent; cassettes without one (recorded before digests) compare bodies. With
    match rules, the bodies as the rules leave them (``r1`` is the request sent now, ``r2`` the recorded one)."""
    rules = _RULES
    if rules.active:
        recorded = normalise(parse_body(r2.body), rules, str(r2.uri))
        live = normalise(parse_body(r1.body), rules, str(r1.uri))
        if recorded != live:
            raise _bodies_differ(r1, r2, (recorded, live))
        return
    d1, d2 = _header(r1.headers, BODY_DIGEST_HEADER), _header(r2.headers, BODY_DIGEST_HEADER)
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


def match_key(r1: Any, r2: Any) -> None:
    """Same key fingerprint, when both requests carried a key."""
    a, b = _header(r1.headers, RECORDED_KEY_HEADER), _header(r2.headers, RECORDED_KEY_HEADER)
    if a == b or not a or not b:
        return
    raise AssertionError(f"key fingerprint differs ({a} recorded vs {b})")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def field_problem(request: Any, response: Any) -> str | None:
    """The first field of one exchange that a replay could not use, as ``field is value, not what``; None when every
    field has the type vcrpy writes. ``request`` is vcrpy's ``Request`` as loaded, or the mapping of the file.

    vcrpy loads a hand-edited file without looking at its fields and fails only when a replay builds the response,
    inside the agent's call (``code: 'OK'`` is a ``ValueError`` there, a header that is not a list of strings a
    ``TypeError`` or garbled headers), where the error reads as the agent's own. Checked at load time instead, the
    file is a corrupt cassette (an infrastructure error, never tolerated). A few isinstance checks per exchange.
    """
    problem = _request_problem(request)
    if problem is not None:
        return problem
    if type(response) is not dict:
        return f"response is {_shown(response)}, not a mapping of status, headers and body"
    status = response.get("status")
    if type(status) is not dict:
        return f"response.status is {_shown(status)}, not a mapping of code and message"
    code = status.get("code")
    if type(code) is not int:
        return f"response.status.code is {_shown(code)}, not a number (an HTTP status such as 200)"
    if "message" not in status:
        return "response.status.message is missing (the reason phrase, such as OK; vcrpy reads it)"
    message = status["message"]
    if message is not None and type(message) is not str:
        return f"response.status.message is {_shown(message)}, not text (the reason phrase, such as OK)"
    headers = response.get("headers")
    if type(headers) is not dict:
        return f"response.headers is {_shown(headers)}, not a mapping of names to lists of values"
    for name, values in headers.items():
        if type(values) is list:
            for value in values:
                if type(value) is not str:
                    break
            else:
                continue
        return f"response.headers.{name} is {_shown(values)}, not a list of strings (such as ['text/plain'])"
    body = response.get("body")
    if type(body) is not dict:
        return f"response.body is {_shown(body)}, not a mapping with the body's string"
    string = body.get("string")  # an aiohttp recording may have none
    if string is not None and not isinstance(string, (bytes, str)):
        return f"response.body.string is {_shown(string)}, not text"
    return None


def _request_problem(request: Any) -> str | None:
    if type(request) is dict:  # as the file holds it (see ``_raw_problem``)
        for name in ("method", "uri", "headers"):
            if name not in request:
                return f"request.{name} is missing"
        method, uri, body = request["method"], request["uri"], request.get("body")
        if type(uri) is not str:
            return f"request.uri is {_shown(uri)}, not a URL"
        if type(request["headers"]) is not dict:
            return f"request.headers is {_shown(request['headers'])}, not a mapping of names to lists of values"
        text = body is None or isinstance(body, (bytes, str)) or hasattr(body, "read") or hasattr(body, "__next__")
    else:  # vcrpy's Request: text is bytes by now, a file or iterator body (old vcrpy files) a list
        method, body = getattr(request, "method", None), getattr(request, "_body", None)
        text = body is None or isinstance(body, (bytes, list))
    if type(method) is not str:
        return f"request.method is {_shown(method)}, not an HTTP method such as POST"
    if not text:
        return f"request.body is {_shown(body)}, not text"
    return None


def _raw_problem(text: str, serializer: Any) -> str | None:
    """Why vcrpy could not build the exchanges of a file it parsed, as a field (``interactions[2].response.body``),
    or None when it did not parse or the fields look right. Only asked once loading has failed."""
    try:
        data = serializer.deserialize(text)
    except Exception:
        return None
    interactions = data.get("interactions") if type(data) is dict else None
    if type(interactions) is not list:
        return None  # vcrpy's own message says it (an old cassette, no interactions)
    for index, interaction in enumerate(interactions):
        if type(interaction) is not dict:
            return f"interactions[{index}] is {_shown(interaction)}, not a mapping of request and response"
        for name in ("request", "response"):
            if name not in interaction:
                return f"interactions[{index}].{name} is missing"
        request = interaction["request"]
        if type(request) is not dict:
            return f"interactions[{index}].request is {_shown(request)}, not a mapping"
        problem = field_problem(request, interaction["response"])
        if problem is not None:
            return f"interactions[{index}].{problem}"
    return None


class Persister:
    """Loads cassettes with replayed retries made instant; writes them atomically, after a secret scan.

    Every way a file can be bad (unreadable, not YAML, a merge conflict, the wrong shape, an unknown tag, a field of
    the wrong type: ``field_problem``) becomes a ``CassetteError`` naming the file and the fix, raised in the
    repetition's setup: one bad file fails one repetition, never the session.
    """

    def __init__(self, scrubber: Scrubber, rerecord: str) -> None:
        self.scrubber = scrubber
        self.rerecord = rerecord
        #: Cassettes already parsed (and filtered) by the fast replay path, by file: vcrpy loading the same file
        #: later in the repetition takes them instead of parsing it again (see ``replay``).
        self.parsed: dict[str, Any] = {}

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        from vcr.persisters.filesystem import CassetteNotFoundError
        from vcr.serialize import deserialize
        from vcr.serializers import yamlserializer

        if str(cassette_path) in self.parsed:
            return self.parsed.pop(str(cassette_path))
        path = Path(cassette_path)
        try:
            text = path.read_bytes().decode("utf-8")
        except (FileNotFoundError, NotADirectoryError):
            raise CassetteNotFoundError() from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CassetteError(f"cannot read cassette {path}: {exc}; {self.rerecord}") from None
        if "\n<<<<<<< " in "\n" + text or "\n>>>>>>> " in text:
            raise CassetteError(
                f"cassette {path} contains git merge conflict markers (<<<<<<< / >>>>>>>); keep one side of the "
                f"conflict, {self.rerecord.removeprefix('to fix it, ')}"
            )
        if serializer is yamlserializer:
            serializer = cassette_yaml.Serializer  # the same objects, without PyYAML's constructor (see there)
        try:
            # What FilesystemPersister.load_cassette does with the text, without reading the file a second time:
            # universal newlines (it reads in text mode), an empty file is a missing cassette, then deserialize.
            if "\r" in text:
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            if not text.strip():
                raise CassetteNotFoundError()
            requests, responses, *rest = deserialize(text, serializer)
            for index, (request, response) in enumerate(zip(requests, responses, strict=True)):
                problem = field_problem(request, response)
                if problem is not None:
                    raise CassetteError(
                        f"cassette {path} is not a valid cassette: interactions[{index}].{problem}; {self.rerecord}"
                    )
            for response in responses:
                headers = response.get("headers", {})
                retry = [n for n in headers if n.lower() in ("retry-after", "retry-after-ms")]
                if retry:
                    sent = {n.lower(): str(_header(headers, n)) for n in retry}
                    for name in retry:
                        del headers[name]
                    headers["retry-after-ms"] = ["1"]  # the SDK sleeps 1 ms instead of the recorded backoff
                    headers[RECORDED_RETRY_HEADER] = [json.dumps(sent, sort_keys=True)]
        except (CassetteNotFoundError, CassetteError):
            raise
        except Exception as exc:
            field = _raw_problem(text, serializer)
            if field is not None:
                raise CassetteError(f"cassette {path} is not a valid cassette: {field}; {self.rerecord}") from None
            what = getattr(exc, "problem", None) or f"{type(exc).__name__}: {exc}"
            raise CassetteError(f"cassette {path} is not a valid cassette ({what}); {self.rerecord}") from None
        return (requests, responses, *rest)

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import deserialize, serialize

        path = Path(cassette_path)
        try:
            text = serialize(cassette_dict, serializer)
        except TypeError:
            if serializer_name(path) != "json":
                raise
            # vcrpy's JSON format holds text only: a body that is not UTF-8 (an image, a compressed payload) stays
            # bytes, which json.dumps refuses.
            raise CassetteError(
                f"cannot write cassette {path} as JSON: a request or response body in it is binary (not UTF-8 "
                "text), which vcrpy's JSON format cannot hold; nothing was written. Record this task with "
                "--consistency-cassette-format=yaml"
            ) from None
        # The text as written (every escape a YAML writer may use) and as read back (the strings themselves).
        found = find_secret(text, self.scrubber.secrets) or find_secret(
            deserialize(text, serializer), self.scrubber.secrets
        )
        if found:
            raise SecretInCassetteError(
                f"refusing to write {path}: it contains {found} sent in this repetition (a key, token or "
                "password); nothing was written. A header or body escaped redaction: please report it."
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        except OSError as exc:
            raise CassetteError(
                f"cannot write cassette {path}: {exc.strerror or exc}; make {path.parent} writable or point "
                "--consistency-cassettes at a writable directory"
            ) from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise CassetteError(f"cannot write cassette {path}: {exc.strerror or exc}") from None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        # Scanned for what this repetition knew: the session's end looks again for what it learns later.
        late_secrets.note_written(path, self.scrubber.secrets)


def make_vcr(mode: str, scrubber: Scrubber, rerecord: str, serializer: str = "yaml") -> Any:
    import vcr

    # Replay-only mode never sends, so the environment's key (none, a placeholder, a dummy, a real one) must not
    # decide what replays: keys are then compared across the recorded repetitions (drift), not with the
    # environment. Recording modes do compare it: another key is another route.
    matchers = ("method", "uri", "consistency_body") + (() if mode == "none" else ("consistency_key",))
    recorder = vcr.VCR(
        record_mode=mode,
        serializer=serializer,
        match_on=matchers,
        # No request filter here: vcrpy would deep-copy every request before it; use_cassette sets scrubber.filter.
        before_record_response=scrubber.response,
        before_save_interaction=before_save_interaction,
        decode_compressed_response=True,
        record_on_exception=False,
        drop_unused_requests=mode == "all",
    )
    recorder.register_matcher("consistency_body", match_body)
    recorder.register_matcher("consistency_key", match_key)
    recorder.register_persister(Persister(scrubber, rerecord))
    return recorder


#: vcrpy patches these too, but their traffic never leaves the process: it needs no cassette in any mode.
_IN_PROCESS = (
    ("httpx", "MockTransport", "handle_request", "_HttpxMockTransport_handle_request"),
    ("httpx", "MockTransport", "handle_async_request", "_HttpxMockTransport_handle_async_request"),
    ("httpx", "WSGITransport", "handle_request", "_HttpxWsgiTransport_handle_request"),
    ("httpx", "ASGITransport", "handle_async_request", "_HttpxAsgiTransport_handle_async_request"),
    ("httpx2", "MockTransport", "handle_request", "_Httpx2MockTransport_handle_request"),
    ("httpx2", "MockTransport", "handle_async_request", "_Httpx2MockTransport_handle_async_request"),
    ("httpx2", "WSGITransport", "handle_request", "_Httpx2WsgiTransport_handle_request"),
    ("httpx2", "ASGITransport", "handle_async_request", "_Httpx2AsgiTransport_handle_async_request"),
)
#: The unpatched network transports, for requests that an in-process mock (respx) answers below them.
_NETWORK = {
    ("httpx", False): "_HttpxHttpTransport_handle_request",
    ("httpx", True): "_HttpxAsyncHttpTransport_handle_async_request",
    ("httpx2", False): "_Httpx2HttpTransport_handle_request",
    ("httpx2", True): "_Httpx2AsyncHttpTransport_handle_async_request",
}


def unpatched_network(module_name: str, is_async: bool) -> Any:
    """vcrpy's saved original of ``HTTPTransport.handle_request`` (or the async one), or None."""
    vcr_patch = sys.modules.get("vcr.patch")
    return getattr(vcr_patch, _NETWORK.get((module_name, is_async), ""), None) if vcr_patch else None


class _Switch:
    """Stands in for "the cassette of the running repetition" in vcrpy's patches, which are built only once."""

    def __init__(self, target: Any) -> None:
        self.__dict__["target"] = target

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["target"], name)

    # Special methods are looked up on the type, past ``__getattr__``: forward the ones a cassette has.
    def __len__(self) -> int:
        return len(self.__dict__["target"])

    def __contains__(self, request: Any) -> bool:
        return request in self.__dict__["target"]

    def __str__(self) -> str:
        return str(self.__dict__["target"])


_ABSENT = object()
#: What vcrpy's patch builder imports and patches: when one of these is another module object than at build time
#: (pytester's in-process sessions import them afresh), the patches would miss the classes now in use.
_PATCHED_MODULES = (
    "vcr.patch",
    "http.client",
    "requests",
    "urllib3.connection",
    "urllib3.connectionpool",
    "botocore.awsrequest",
    "httplib2",
    "tornado.simple_httpclient",
    "tornado.curl_httpclient",
    "aiohttp.client",
    "httpx",
    "httpx2",
)


#: Attributes ``mock.patch`` puts back even after deleting them (see ``Swap.__exit__``).
_KEPT_ON_DELETE = ("__doc__", "__module__", "__defaults__", "__annotations__", "__kwdefaults__")


class Swap:
    """One of vcrpy's ``mock.patch.object(target, attribute, new)`` patchers, entered and left as ``mock`` does it.

    Why: ``mock._patch`` pays per entry for machinery vcrpy's patches never use (specs, autospec, ``new_callable``,
    an exit stack, ``patch.multiple``); entering and leaving vcrpy's 30 prepared patches that way was a fifth of
    the cassette scope of a replayed repetition. The effect is ``mock``'s: the original is read from the target's
    own ``__dict__`` when it is there (and set back on exit) or looked up through its classes (and the patch is
    deleted on exit, so the inherited attribute shows again); a missing attribute raises ``AttributeError``.
    """

    __slots__ = ("attribute", "local", "new", "original", "patcher", "target")

    def __init__(self, patcher: Any) -> None:
        self.patcher = patcher
        self.attribute: str = patcher.attribute
        self.new = patcher.new
        self.target: Any = None
        self.original: Any = None
        self.local = False

    def __enter__(self) -> Any:
        target = self.patcher.getter()
        name = self.attribute
        try:
            original, local = target.__dict__[name], True
        except (AttributeError, KeyError):
            original, local = getattr(target, name, _ABSENT), False
        if original is _ABSENT:
            raise AttributeError(f"{target} does not have the attribute {name!r}")
        setattr(target, name, self.new)
        self.target, self.original, self.local = target, original, local
        return self.new

    def __exit__(self, *exc_info: object) -> None:
        target, name, original = self.target, self.attribute, self.original
        self.target = self.original = None
        if self.local:
            setattr(target, name, original)
        else:
            delattr(target, name)
            if not hasattr(target, name) or name in _KEPT_ON_DELETE:
                setattr(target, name, original)


class Patches:
    """vcrpy's patchers, built once around a ``_Switch`` and entered for each repetition's cassette.

    Why: vcrpy builds its patchers anew for every cassette: an import attempt for every HTTP library it knows
    (a failed import is not cached, so absent ones search ``sys.path`` each time), a subclass per connection
    class and a closure per transport. That was ~1.5 ms of every repetition, most of the plugin's cost even when
    a repetition makes no request. Entering prepared patchers costs a tenth of it.

    The patches of in-process transports (``MockTransport``, ``WSGITransport``, ``ASGITransport``) are left out:
    their traffic never leaves the process and needs no cassette in any mode. A set is rebuilt when it has gone
    stale: a patched module was imported afresh, or a patched attribute is no longer what it was at build time
    (another library patched it in between, whose patch vcrpy's closures must wrap).
    """

    def __init__(self, cassette: Any) -> None:
        from vcr.patch import CassettePatcherBuilder

        self.switch = _Switch(cassette)
        self.modules = self._modules()
        in_process = self._in_process()
        #: In vcrpy's order: ``mock.patch.object`` patchers, and context managers that close the connections a
        #: cassette left in urllib3's pools (``ConnectionRemover``).
        self.managers = [
            vcr_inflight.keep_in_flight(m)  # see vcr_inflight: vcrpy's closes a connection another thread is using
            for m in CassettePatcherBuilder(self.switch).build()
            if not hasattr(m, "getter") or (m.getter(), m.attribute) not in in_process
        ]
        self.managers.append(vcr_reset.patcher())  # see vcr_reset: vcrpy's own is unsafe for other threads
        self.patchers = [m for m in self.managers if hasattr(m, "getter")]
        #: What each patch replaces, as found at build time: vcrpy's patches are ``mock.patch.object`` on fixed
        #: objects (a module imported afresh is caught by ``modules``), so the targets are read once here.
        self.checks = [(p.getter(), p.attribute, getattr(p.getter(), p.attribute, _ABSENT)) for p in self.patchers]
        #: What ``applied`` enters: each ``mock.patch.object`` as a ``Swap`` (same effect, a fraction of the work).
        self.entered = [Swap(m) if hasattr(m, "getter") else m for m in self.managers]

    @staticmethod
    def _modules() -> tuple[Any, ...]:
        return tuple(sys.modules.get(name) for name in _PATCHED_MODULES)

    @staticmethod
    def _in_process() -> set[tuple[Any, str]]:
        found = set()
        for module_name, class_name, method, _ in _IN_PROCESS:
            cls = getattr(sys.modules.get(module_name), class_name, None)
            if cls is not None:
                found.add((cls, method))
        return found

    def fresh(self) -> bool:
        modules = sys.modules
        for name, module in zip(_PATCHED_MODULES, self.modules, strict=True):
            if modules.get(name) is not module:
                return False
        for target, attribute, original in self.checks:
            if getattr(target, attribute, _ABSENT) is not original:
                return False
        return True

    @contextlib.contextmanager
    def applied(self, cassette: Any) -> Iterator[None]:
        """The patches in place around the ``with`` body, answering from ``cassette``.

        Entered and left by hand rather than through an ``ExitStack``, which costs about ten calls per manager
        (a third of this scope's cost): each entered manager is left, last first, even when entering a later one
        or leaving another fails, and the first such error is raised after all were left."""
        self.switch.__dict__["target"] = cassette
        entered: list[Any] = []
        try:
            try:
                with vcr_reset.changing():
                    for manager in self.entered:
                        manager.__enter__()
                        entered.append(manager)
                yield
            finally:
                with vcr_reset.changing():
                    _leave(entered)
        finally:
            for manager in self.managers:
                # A remover keeps the connections of the cassette it served; the next cassette starts with none.
                connections = getattr(manager, "_connection_pool_to_connections", None)
                if connections is not None:
                    connections.clear()


def _leave(managers: list[Any]) -> None:
    """Leave ``managers`` last first; every one is left even when another raises, and the first error is raised."""
    error: BaseException | None = None
    for manager in reversed(managers):
        try:
            manager.__exit__(None, None, None)
        except BaseException as exc:
            if error is None:
                error = exc
    if error is not None:
        raise error


_patches: Patches | None = None


def patches_for(cassette: Any) -> Patches:
    """The process's prepared patches, rebuilt when stale (see ``Patches``)."""
    global _patches
    if _patches is None or not _patches.fresh():
        _patches = Patches(cassette)
    return _patches


#: Options of vcrpy's merged configuration that belong to its context manager, not to the cassette.
_NOT_CASSETTE = ("path_transformer", "func_path_generator", "record_on_exception")


#: Modes in which every pinned call is answered from an existing cassette (see ``replay``).
FAST_REPLAY_MODES = ("none", "once")


@contextlib.contextmanager
def use_cassette(
    path: Path, mode: str, scrubber: Scrubber, rerecord: str, keep: Any, exists: bool | None = None
) -> Iterator[Any]:
    """Enter the cassette; on the way out save it only if ``keep()`` says the repetition is worth keeping.

    What vcrpy's ``use_cassette`` does, on prepared patches: load, patch, run, save (never after an exception),
    unpatch. The patches are removed even when the save fails, or every later request in the process would
    still go through this cassette.

    When the repetition only replays an existing file, the pinned clients are answered by ``replay.Replay`` from
    the file parsed here (a bad file still fails the setup), and vcrpy's ``Cassette`` is loaded only if some other
    client (or a request the fast path cannot answer) reaches vcrpy's patches.
    """
    from vcr.cassette import Cassette

    persister = Persister(scrubber, rerecord)
    recorder = make_vcr(mode, scrubber, rerecord, serializer_name(path))
    recorder.register_persister(persister)

    def load() -> Any:
        config = recorder.get_merged_config(path=str(path))
        for name in _NOT_CASSETTE:
            config.pop(name, None)
        config["before_record_request"] = scrubber.filter
        return Cassette.load(**config)

    state = current()
    cassette: Any
    fast = None
    if mode in FAST_REPLAY_MODES and (path.is_file() if exists is None else exists):
        from pytest_consistency.cassette.replay import DeferredCassette, Replay

        fast = Replay(path, scrubber, persister, match_key_fingerprint=mode != "none")
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
        with patches_for(cassette).applied(cassette):
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
    from vcr.request import Request

    headers = dict(request.headers.items())
    recorded = Request(request.method, str(request.url), wire.request_content(request), headers)
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


def record_command(nodeid: str, existed: bool) -> str:
    """The command that records this repetition: ``once`` never replaces an existing cassette, ``all`` does."""
    mode = "all" if existed else "once"
    return f"pytest '{nodeid}' --consistency-record={mode}"


def rerecord_advice(nodeid: str) -> str:
    return f"to fix it, delete the file or re-record it: {record_command(nodeid, existed=True)}"


def vcr_available() -> bool:
    try:
        import vcr  # noqa: F401
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def repetition_scope(
    path: Path | None,
    mode: str,
    scrubber: Scrubber,
    rerecord: str,
    keep: Any,
    observe: Any,
    exists: bool | None = None,
) -> Iterator[None]:
    """Everything around one marked repetition, innermost last: cassette, network block, transport observer.

    The observer goes inside the cassette so that it wraps vcrpy's patch and sees replayed attempts too. ``exists``:
    whether the cassette file is there, when the caller has just looked (else it is looked up here).
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
        elif path is not None and mode != "off" and vcr_available():
            stack.enter_context(use_cassette(path, mode, scrubber, rerecord, keep, bool(exists)))
        if mode == "none":
            stack.enter_context(blocked(REPLAY_ONLY))
        stack.enter_context(observe())
        yield


def mismatch_detail(exc: BaseException) -> str | None:
    """What vcrpy found closest to an unmatched request, in the plugin's words (None for other errors). A URI that
    differs is shown beside the recorded one (redacted: a key in a query string never shows), and a base URL that
    differs is named as such, with the recording's (``mismatch_message`` then gives that fix, not a re-recording)."""
    reason = getattr(exc, "reason", None)
    if reason is None or not hasattr(exc, "similar_requests"):
        return None
    if reason == "cassette_not_found":
        return "no cassette"
    if reason == "already_played":
        return "every matching recorded request was already replayed (this repetition made more calls than recorded)"
    names = {"match_body": "body", "match_key": "key fingerprint", "uri": "URI", "method": "method"}
    failed = sorted({names.get(str(name), str(name)) for _, _, fails in exc.similar_requests for name, _ in fails})
    if not failed:
        return "nothing similar was recorded"
    where = next(
        (
            str(message).split(": ", 1)[1]
            for _, _, fails in exc.similar_requests
            for name, message in fails
            if name == "match_body" and ": " in str(message)
        ),
        None,
    )
    uri = ""
    recorded = next(
        (request for request, _, fails in exc.similar_requests if any(name == "uri" for name, _ in fails)), None
    )
    sent = getattr(getattr(exc, "failed_request", None), "uri", None)
    if recorded is not None and sent is not None:
        from pytest_consistency.capture.wire import split_url

        uri = f"; recorded {redact_url(str(recorded.uri))}, sent {redact_url(str(sent))}"
        recorded_base, sent_base = split_url(str(recorded.uri))[1], split_url(str(sent))[1]
        if recorded_base != sent_base:
            uri += f": {BASE_URL_DIFFERS} ({redact_url(recorded_base)})"
    return (
        f"closest recorded request differs in: {', '.join(failed)}"
        + uri
        + (f"; body first differs at {where}" if where else "")
    )


#: How ``mismatch_detail`` says that a request went to another base URL than the recording's, which it names next,
#: in parentheses; ``mismatch_message`` gives the fix for it.
BASE_URL_DIFFERS = "the base URL differs from the recording's"


def mismatch_message(
    nodeid: str, repeat: int, path: str, existed: bool, calls: list[Any], other_format: str | None = None
) -> str:
    missing = [c for c in calls if c.error == "replay_mismatch"]
    first = missing[0]
    found = ""
    if other_format is not None:
        found = f" ({format_hint(other_format, 'json' if path.endswith('.json') else 'yaml')})"
    what = (
        f"no cassette at {path}{found}"
        if not existed
        else f"no recorded request in {path} matches it (method, URI, body and key fingerprint are compared: "
        "another model, prompt, parameter or key changes the request)"
    )
    detail = f" [{first.detail}]" if first.detail and existed else ""
    client = "" if first.pinned else " (sent by a client the agent built itself)"
    advice = (
        f"To re-record this repetition: {record_command(nodeid, existed)} (or --consistency-record=new_episodes "
        "to keep what matches and add what is new)"
        if existed
        else f"To record it: {record_command(nodeid, existed)}"
    )
    moved = re.search(re.escape(BASE_URL_DIFFERS) + r" \((\S+)\)", first.detail or "") if existed else None
    if moved is not None:
        # The replay job lacks the base URL of the recording job (a gateway's, in OPENAI_BASE_URL): re-recording
        # would call the model again to fix a setting.
        base = moved[1]
        from pytest_consistency.route.providers import builtin

        provider = builtin(first.provider)
        variable = provider.base_url_env if provider is not None else "OPENAI_BASE_URL"
        section, option = (
            ("routes: anthropic:", "--consistency-anthropic-base-url")
            if first.provider == "anthropic"
            else ("route:", "--consistency-base-url")
        )
        where = (
            f"export {variable}={base} in the replay job, as in the recording job (the client the agent builds "
            f"reads it; base_url: under {section} in consistency.yaml, or {option}, sets the pinned clients' only)"
            if not first.pinned
            else f"set base_url: {base} under {section} in consistency.yaml (or {option}), or export "
            f"{variable}={base}, as when recording"
        )
        advice = (
            f"The fix is the base URL, not a new recording: {where}. Re-record ({record_command(nodeid, existed)}) "
            "only if the new base URL is meant"
        )
    return (
        f"replay mismatch in repetition {repeat}: {first.method} {first.url} (model {first.model_requested})"
        f"{client} was not recorded: {what}{detail}.\n"
        f"No live call was made. {advice}; this counts as route drift (errors: replay_mismatch)."
    )
