"""Where HTTP attempts are observed: a transport that wraps the SDK's real one, and the transport classes.

Two seams, one recording path (``send`` / ``send_async``):

- the pinned clients get a ``RecordingTransport`` around a real ``HTTPTransport``; vcrpy patches that inner
  transport's class, so cassettes still see (and replay) the traffic, and every SDK retry is its own attempt;
- while a marked repetition runs, ``observe_transports`` wraps ``HTTPTransport.handle_request`` and
  ``AsyncHTTPTransport.handle_async_request`` of httpx and httpx2, so a client the agent builds itself is seen
  too. Requests of the pinned clients carry an extension that tells the class-level observer to let them pass.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pytest_consistency.capture import wire
from pytest_consistency.capture.active import call_role, current
from pytest_consistency.model.records import CANNOT_CONNECT, CallRecord
from pytest_consistency.secrets.keys import REPLAY_KEY, credentials_in
from pytest_consistency.shared.ledger import Ledger

if TYPE_CHECKING:
    from pytest_consistency.shared.throttle import Held, Throttle

PINNED = "pytest_consistency.pinned"
#: Endpoints that sample a model, of every built-in provider: a response of one without usage is estimated.
SAMPLING_ENDPOINTS = ("/chat/completions", "/responses", "/completions", "/v1/messages")


def module_of(obj: Any) -> ModuleType:
    return importlib.import_module(type(obj).__module__.split(".")[0])


def with_defaults(request: Any, defaults: dict[str, Any], endpoints: tuple[str, ...] = SAMPLING_ENDPOINTS) -> Any:
    """Add the route's model and sampling settings to a JSON request of ``endpoints`` that does not set them."""
    if not defaults or request.method != "POST" or not str(request.url.path).endswith(endpoints):
        return request
    body = wire.json_body(wire.request_content(request))
    if body is None:
        return request
    # A parameter sent as null (``model=pinned_route.model`` with no model configured) is one the call did not set.
    missing = {key: value for key, value in defaults.items() if value is not None and body.get(key) is None}
    if "max_tokens" in missing:  # the route's limit, under the name this endpoint reads, unless one is set already
        limit = missing.pop("max_tokens")
        name = "max_output_tokens" if str(request.url.path).endswith("/responses") else "max_tokens"
        if not any(body.get(key) is not None for key in LIMITS):
            missing[name] = limit
    if "model" in body and body["model"] is None and "model" not in missing and "model" in defaults:
        raise ModelNotSet(
            f'{request.method} {request.url} would send "model": null: the route names no model (pinned_route.model '
            "is None). Set model: under route: in consistency.yaml (or --consistency-model), or pass model= to the call"
        )
    if not missing:
        return request
    content = json.dumps({**body, **missing}).encode()
    headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
    return type(request)(request.method, request.url, headers=headers, content=content, extensions=request.extensions)


#: The names a request body sets its output limit by (chat: ``max_tokens`` or the newer ``max_completion_tokens``;
#: the Responses API: ``max_output_tokens``).
LIMITS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


class ModelNotSet(ValueError):
    """A pinned client's request names no model (``"model": null``) and its route sets none: refused before sending."""


class LiveCallRefused(ConnectionError):
    """A pinned client tried to go live outside a marked repetition while cassettes are replay-only."""


class Attempt:
    """One attempt being recorded: created before sending, completed by the response or the error.

    A call refused by the token or cost budget is recorded too (``error: token_budget``, ``cost_budget``) before the
    refusal is raised.
    """

    def __init__(self, request: Any, pinned: bool, ledger: Ledger | None, role: str | None = None) -> None:
        self.ledger = ledger
        content = wire.request_content(request)
        self.state = state = current()
        normalize = state.normalize_request if state is not None else None
        self.record = wire.start_record(request, pinned, content, normalize)
        # A judge client's calls are the judge's wherever they are made; any other call has its context's role.
        self.record.role = role or call_role(state)
        self.started = time.perf_counter()
        self.record.started_at = time.time()
        self.tap_: wire.ResponseTap | None = None
        self.held: Held | None = None
        self.request_bytes = len(content)
        if state is not None:
            state.secrets.update(credentials_in(request.headers, str(request.url), content))
            state.add_call(self.record)
            state.open_attempts.append(self)
        if ledger is not None:
            try:
                ledger.check()
            except BaseException as exc:
                self.failed(exc)
                raise
        #: The attempt's ``x-consistency-sent-at`` while recording: the key of the timings its cassette entry keeps.
        self.sent_at: str | None = None
        if state is not None and state.recording:  # lets the cassette store the start and latency measured now
            self.sent_at = request.headers[wire.SENT_AT_HEADER] = wire.sent_at(self.started, self.record.started_at)
        if state is not None and self.record.role != "agent" and (state.recording or state.replaying):
            # Whose exchange it is, stored (a judge's can be told from the agent's) and, replaying, seen by the
            # cassette's guard (a rejudge sample plays a simulated user's turns by role and order); never sent live
            # but while recording, never matched on.
            request.headers[wire.ROLE_HEADER] = self.record.role

    def hold(self, held: Held, request: Any) -> None:
        """Keep a throttle slot until the attempt is done: its body read to the end or closed, or it failed."""
        self.held = held
        self.waited(held.waited.seconds, request)

    def waited(self, seconds: float, request: Any) -> None:
        """The attempt waited ``seconds`` for its throttle slot: report it, and measure latency from now."""
        if seconds:
            self.record.wait_ms = round(seconds * 1000, 3)
            self.started = time.perf_counter()
            self.record.started_at = time.time()
            if wire.SENT_AT_HEADER in request.headers:
                self.sent_at = request.headers[wire.SENT_AT_HEADER] = wire.sent_at(self.started, self.record.started_at)

    def failed(self, exc: BaseException) -> None:
        self.record.error = wire.exception_kind(exc)
        explain = self.state.explain if self.state is not None else None
        self.record.detail = explain(exc) if explain is not None else None
        if self.record.detail is None and wire.cannot_connect(exc):
            self.record.detail = CANNOT_CONNECT
        self.record.latency_ms = round((time.perf_counter() - self.started) * 1000, 3)
        self._forget()

    def tap(self, response: Any) -> wire.ResponseTap:
        wire.complete_headers(self.record, response)
        recorded = self.recorded()
        if recorded is not None:  # the start and latency its replays will read: the record groups as they will
            self.record.started_at, self.record.latency_ms = recorded
        self.tap_ = wire.ResponseTap(self.record, response.headers, self.started, self._done)
        if self.held is not None and self.tap_.sse:  # a stream's slot ends with its headers: see Throttle.acquire
            self.held.release()
        return self.tap_

    def recorded(self) -> tuple[float, float] | None:
        """The start and latency the cassette keeps of this attempt, when it was just recorded (not replayed)."""
        state = self.state
        if self.sent_at is None or state is None or self.record.replayed:
            return None
        return state.recorded_timings.pop(self.sent_at, None)

    def finish(self) -> None:
        """The repetition ended with this response unread or unclosed: charge what it cost, as an estimate."""
        if self.tap_ is not None and not self.tap_.done:
            self.tap_.close()

    def _done(self, record: CallRecord) -> None:
        sampling = record.method == "POST" and record.url.endswith(SAMPLING_ENDPOINTS)
        ok = record.status is not None and record.status < 400
        # Estimated in replay too, from the same request and response bytes: a replay reports the tokens its
        # recording did (only the ledger, which counts what is spent, skips replayed calls).
        if self.tap_ is not None and sampling and ok and not record.total_tokens:
            wire.estimate_tokens(record, self.request_bytes, self.tap_)
        if self.ledger is not None and not record.replayed:
            self.ledger.spend(record)
        self._forget()

    def _forget(self) -> None:
        if self.held is not None:
            self.held.release()
        state = current()
        if state is not None:
            with contextlib.suppress(ValueError):
                state.open_attempts.remove(self)


#: Keyed by the module object, not its name: a module imported again (pytester does that) has new classes.
_STREAM_CLASSES: dict[ModuleType, tuple[type, type]] = {}


def _stream_classes(module: ModuleType) -> tuple[type, type]:
    """Stream wrappers must subclass the module's own stream bases, which httpx checks with isinstance."""
    if module in _STREAM_CLASSES:
        return _STREAM_CLASSES[module]

    class TapStream(module.SyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, tap: wire.ResponseTap) -> None:
            self.inner, self.tap = inner, tap

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self.inner:
                _feed(self.tap, chunk)
                yield chunk
            self.tap.complete = True

        def close(self) -> None:
            try:
                self.inner.close()
            finally:
                self.tap.close()

    class AsyncTapStream(module.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, tap: wire.ResponseTap) -> None:
            self.inner, self.tap = inner, tap

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.inner:
                _feed(self.tap, chunk)
                yield chunk
            self.tap.complete = True

        async def aclose(self) -> None:
            try:
                await self.inner.aclose()
            finally:
                self.tap.close()

    _STREAM_CLASSES[module] = (TapStream, AsyncTapStream)
    return TapStream, AsyncTapStream


def _feed(tap: wire.ResponseTap, chunk: bytes) -> None:
    try:
        tap.feed(chunk)
    except Exception:  # a parsing problem must never break the caller's stream
        tap.readable = False


def _begin(
    request: Any,
    pinned: bool,
    ledger: Ledger | None,
    defaults: dict[str, Any] | None,
    endpoints: tuple[str, ...] = SAMPLING_ENDPOINTS,
    role: str | None = None,
) -> tuple[Any, Attempt]:
    if pinned:
        request = with_defaults(request, defaults or {}, endpoints)
        request.extensions = {**request.extensions, PINNED: True}
    return request, Attempt(request, pinned, ledger, role)


def refuse_outside_repetition() -> None:
    state = current()
    if state is None or not state.marked:
        raise LiveCallRefused(
            "pinned_client sent a request outside a @pytest.mark.repeat_consistency repetition while cassettes are "
            "replay-only (--consistency-record=none): only marked repetitions have cassettes, so it would be a live "
            "call, and none is made. Mark the test, or run it with --consistency-record=off to call the API."
        )


def replayable(handler: Callable[[Any], Any], pinned: bool = False) -> Callable[[Any], Any]:
    """``handler``, or, when the running repetition replays and has no cassette, one that refuses the request; a
    pinned client's request, when the repetition replays a cassette, is answered from it first (``replay``)."""
    state = current()
    if state is None:
        return handler
    if pinned and state.replay is not None:
        return state.replay.handler(handler)  # type: ignore[no-any-return]
    if not state.cassette_absent:
        if state.stand_in and not pinned:
            return lambda request: handler(without_stand_in(request))
        return handler
    cassette = state.cassette

    def refuse(request: Any) -> Any:
        raise wire.NotRecorded(
            f"no cassette {cassette} to replay {request.method} {request.url} from (--consistency-record=none); "
            "no live call was made"
        )

    return refuse


def replayable_async(handler: Callable[[Any], Awaitable[Any]], pinned: bool = False) -> Callable[[Any], Awaitable[Any]]:
    state = current()
    if pinned and state is not None and state.replay is not None:
        replay = state.replay

        async def replay_async(request: Any) -> Any:
            response = replay.response_for(request)
            return await handler(request) if response is None else response

        return replay_async
    if state is not None and not state.cassette_absent:
        if state.stand_in and not pinned:

            async def stand_in_async(request: Any) -> Any:
                return await handler(without_stand_in(request))

            return stand_in_async
        return handler
    refuse = replayable(handler)
    if refuse is handler:
        return handler

    async def refuse_async(request: Any) -> Any:
        return refuse(request)

    return refuse_async


#: Request headers an SDK puts its key in.
KEY_HEADERS = ("authorization", "x-api-key", "api-key")


def without_stand_in(request: Any) -> Any:
    """``request`` without the replay's stand-in key (``route.stand_in_keys``), before vcrpy sees it: the stand-in is
    no key, so it must not be fingerprinted and compared as one (``once`` matches key fingerprints). The call record
    was made before (``wire`` gives the stand-in no fingerprint). The request is never sent: it replays."""
    headers = request.headers
    for name in KEY_HEADERS:
        value = headers.get(name)
        if value is not None and value.removeprefix("Bearer ").strip() == REPLAY_KEY:
            del headers[name]
    return request


def ignored(request: Any, patterns: tuple[re.Pattern[str], ...]) -> bool:
    return bool(patterns) and any(p.search(str(request.url)) for p in patterns)


def _tapped(response: Any, attempt: Attempt, is_async: bool) -> Any:
    response.stream = _stream_classes(module_of(response))[is_async](response.stream, attempt.tap(response))
    return response


def live_throttle(throttle: Throttle | None, request: Any) -> Throttle | None:
    """The throttle, unless the request will be answered from a cassette: replays are never throttled.

    A repetition that only replays is known from its mode; in ``new_episodes`` the cassette is asked about this
    request (``state.answers``, set by the cassette's scope).
    """
    if throttle is None or not throttle.active:
        return None
    state = current()
    if state is None:
        return throttle
    if state.replaying or (state.answers is not None and state.answers(request)):
        return None
    return throttle


def send(
    request: Any,
    inner: Callable[[Any], Any],
    pinned: bool,
    ledger: Ledger | None = None,
    defaults: dict[str, Any] | None = None,
    endpoints: tuple[str, ...] = SAMPLING_ENDPOINTS,
    throttle: Throttle | None = None,
    role: str | None = None,
) -> Any:
    """Record one attempt around ``inner``; with a live ``throttle`` the attempt holds one of its slots from
    before it is sent until its response body has been read to the end or closed (a stream's, until its headers
    arrive), or the attempt fails; the wait is recorded apart from the latency. ``role``: a judge client's."""
    request, attempt = _begin(request, pinned, ledger, defaults, endpoints, role)
    try:
        throttle = live_throttle(throttle, request)
        if throttle is None:
            response = inner(request)
        else:
            attempt.hold(throttle.acquire(), request)
            response = inner(request)
    except BaseException as exc:
        attempt.failed(exc)
        raise
    return _tapped(response, attempt, is_async=False)


async def send_async(
    request: Any,
    inner: Callable[[Any], Awaitable[Any]],
    pinned: bool,
    ledger: Ledger | None = None,
    defaults: dict[str, Any] | None = None,
    endpoints: tuple[str, ...] = SAMPLING_ENDPOINTS,
    throttle: Throttle | None = None,
    role: str | None = None,
) -> Any:
    request, attempt = _begin(request, pinned, ledger, defaults, endpoints, role)
    try:
        throttle = live_throttle(throttle, request)
        if throttle is None:
            response = await inner(request)
        else:
            attempt.hold(await throttle.aacquire(), request)
            response = await inner(request)
    except BaseException as exc:
        attempt.failed(exc)
        raise
    return _tapped(response, attempt, is_async=True)


@functools.cache
def shared_ssl_context(module: ModuleType) -> Any:
    """The default verifying TLS context of ``module`` (httpx or httpx2), built once: what ``verify=True`` builds."""
    return module.create_ssl_context()


def recording_transport(
    module: ModuleType,
    ledger: Ledger | None,
    defaults: dict[str, Any],
    is_async: bool,
    replay_only: bool = False,
    endpoints: tuple[str, ...] = SAMPLING_ENDPOINTS,
    throttle: Throttle | None = None,
    role: str | None = None,
    **transport_kwargs: Any,
) -> Any:
    """A transport of ``module`` (httpx or httpx2) that records every attempt and sends it on a real one.

    With ``replay_only`` it refuses to send outside a marked repetition: there is no cassette to answer, so the
    request would go live with a placeholder key (or a real one exported in CI). ``role``: the role of every call
    it makes (a judge client's ``judge``), else each call's context's.
    """
    # One TLS context per HTTP module for the whole process: building one loads the CA bundle (~40 ms), which a
    # new transport per repetition paid every time, even for a loopback http:// route or a replay.
    transport_kwargs.setdefault("verify", shared_ssl_context(module))
    inner = (module.AsyncHTTPTransport if is_async else module.HTTPTransport)(**transport_kwargs)
    return _transport_class(module, is_async)(inner, replay_only, ledger, defaults, endpoints, throttle, role)


@functools.cache
def _transport_class(module: ModuleType, is_async: bool) -> type:
    """The recording transport class of ``module`` (httpx or httpx2), sync or async, built once: a class built for
    every client was about 10 us of every repetition."""

    class _Recording:
        def __init__(
            self,
            inner: Any,
            replay_only: bool,
            ledger: Ledger | None,
            defaults: dict[str, Any],
            endpoints: tuple[str, ...],
            throttle: Throttle | None,
            role: str | None = None,
        ) -> None:
            self.inner, self.replay_only, self.ledger = inner, replay_only, ledger
            self.defaults, self.endpoints, self.throttle, self.role = defaults, endpoints, throttle, role

    if is_async:

        class AsyncRecordingTransport(_Recording, module.AsyncBaseTransport):  # type: ignore[name-defined,misc]
            async def handle_async_request(self, request: Any) -> Any:
                if self.replay_only:
                    refuse_outside_repetition()
                handler = replayable_async(self.inner.handle_async_request, pinned=True)
                return await send_async(
                    request, handler, True, self.ledger, self.defaults, self.endpoints, self.throttle, self.role
                )

            async def aclose(self) -> None:
                await self.inner.aclose()

        return AsyncRecordingTransport

    class RecordingTransport(_Recording, module.BaseTransport):  # type: ignore[name-defined,misc]
        def handle_request(self, request: Any) -> Any:
            if self.replay_only:
                refuse_outside_repetition()
            handler = replayable(self.inner.handle_request, pinned=True)
            return send(request, handler, True, self.ledger, self.defaults, self.endpoints, self.throttle, self.role)

        def close(self) -> None:
            self.inner.close()

    return RecordingTransport


def _observe(
    module: ModuleType,
    ledger: Ledger | None,
    ignore: tuple[re.Pattern[str], ...],
    throttles: Mapping[str, Throttle],
    marked_only: bool = False,
    unpatched: Callable[[str, bool], Any] | None = None,
) -> list[Any]:
    """Wrap ``module``'s network transports; returns what to put back. The agent's own clients share the pinned
    route's throttle of their provider: they are live requests to the same API."""

    def throttle_of(request: Any) -> Throttle | None:
        return throttles.get(wire.provider_of(request.headers, str(request.url))) if throttles else None

    name = module.__name__
    sync_cls, async_cls = module.HTTPTransport, module.AsyncHTTPTransport
    original = sync_cls.handle_request
    original_async = async_cls.handle_async_request
    network = (unpatched(name, False) if unpatched else None) or original
    network_async = (unpatched(name, True) if unpatched else None) or original_async

    def outside(request: Any) -> bool:
        if request.extensions.get(PINNED):
            return True
        if not marked_only:
            return False
        state = current()
        return state is None or not state.marked

    def handle_request(self: Any, request: Any) -> Any:
        if outside(request):
            return original(self, request)
        if ignored(request, ignore):
            return network(self, request)
        if respx_active(name):  # answered in-process by respx's mock: no cassette involved
            return send(request, lambda r: network(self, r), False, ledger)
        throttle = throttle_of(request)
        return send(request, replayable(lambda r: original(self, r)), False, ledger, throttle=throttle)

    async def handle_async_request(self: Any, request: Any) -> Any:
        if outside(request):
            return await original_async(self, request)
        if ignored(request, ignore):
            return await network_async(self, request)
        if respx_active(name):
            return await send_async(request, lambda r: network_async(self, r), False, ledger)
        throttle = throttle_of(request)
        handler = replayable_async(lambda r: original_async(self, r))
        return await send_async(request, handler, False, ledger, throttle=throttle)

    sync_cls.handle_request = handle_request
    async_cls.handle_async_request = handle_async_request
    return [(sync_cls, "handle_request", original), (async_cls, "handle_async_request", original_async)]


def respx_active(module_name: str) -> bool:
    """respx mocks httpcore below ``HTTPTransport``: while a router is started, httpx traffic stays in-process."""
    respx_mocks = sys.modules.get("respx.mocks")
    if respx_mocks is None or module_name != "httpx":
        return False
    mocker = respx_mocks.Mocker.registry.get("httpcore")
    return bool(mocker is not None and mocker.routers and getattr(mocker, "_patches", None))
