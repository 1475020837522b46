"""The replay's stand-in key never leaves the replay.

A repetition that replays without a key gives the clients the agent builds itself a stand-in key
(``route.stand_in_keys``): the SDK refuses to be built without one, and a replay sends nothing. It is no key, so a
request carrying it must never go out, and no process but this one may hold it. Three things see to that, for the
rest of the session once a stand-in key has been handed out (``guard``; ``unguard`` at the session's end):

- **at the network**: the connection pools of httpcore and httpcore2 (under every httpx and httpx2 client: the
  OpenAI and Anthropic SDKs, the agent's own, vcrpy's real sends) and ``http.client`` (requests, urllib3, urllib)
  refuse a request that carries the stand-in key in a header or its URL, before anything is sent. They sit below
  every cassette: what reaches them is going out live (a recording, a test that is no repetition, a fixture's
  teardown, a thread), never a replay, which is answered above them;
- **in a recording**: the cassette's request filter refuses such a request before vcrpy sends or stores it (the
  clients vcrpy patches beyond the two above, aiohttp among them), so no cassette holds a response to one;
- **for children**: the stand-in key is only in Python's ``os.environ``, never in the process's C environment, so a
  child that inherits the environment (``subprocess`` without ``env``, ``os.system``, ``multiprocessing``) does not
  get it; an audit hook leaves every variable holding it out of an environment handed to ``subprocess``
  (``{**os.environ}``, ``os.environ.copy()``), and refuses to start a child handed it any other way (``env=os.environ``
  itself, ``os.posix_spawn``, ``os.exec*``, an argument, a shell command).

Each refusal raises :class:`StandInKeyRefused` (an infrastructure error: ``analysis.infrastructure``) and is noted
(``active.refusals``), so that the repetition, or the plain test, during which it happened fails as the setup's
failure even when the agent caught the SDK's error.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

from pytest_consistency.capture import active, imports
from pytest_consistency.secrets.keys import REPLAY_KEY
from pytest_consistency.secrets.structures import redact_url

#: What every refusal's first line starts with (``analysis.infrastructure`` names the reason after it).
REFUSED = "the replay's stand-in key would have left the replay"
#: Why, and what to do, after a refused request.
ADVICE = (
    "The stand-in key is what a client the agent builds gets while a repetition replays without a key: it is no key, "
    "and only the replay may answer a request carrying it. A client built during such a replay and used later (a "
    "session-scoped fixture, another test, a thread) would send it live: build the client inside each repetition (a "
    "function-scoped fixture), and export the real key when recording."
)
#: The pools under httpx and httpx2, by module: (class, method, is_async).
_POOLS = (("ConnectionPool", "handle_request", False), ("AsyncConnectionPool", "handle_async_request", True))
_CHILD_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"})

_lock = threading.Lock()
_on = False
_hook_added = False
_saved: list[tuple[type, str, Any]] = []
_unsubscribe: list[Callable[[], None]] = []


class StandInKeyRefused(ConnectionError):
    """A request or a child process would have taken the replay's stand-in key out of the replay."""


def guard() -> None:
    """Refuse the stand-in key at the network and to children from now until ``unguard`` (idempotent)."""
    global _on, _hook_added
    with _lock:
        if _on:
            return
        _on = True
        for name in ("httpcore", "httpcore2"):
            _when_there(name, _guard_pools)
        _when_there("http.client", _guard_http_client)
        if not _hook_added:
            _hook_added = True
            sys.addaudithook(_audit)


def unguard() -> None:
    """Put the network back as it was (the audit hook, which cannot be removed, turns inert)."""
    global _on
    with _lock:
        _on = False
        while _unsubscribe:
            _unsubscribe.pop()()
        while _saved:
            cls, attr, original = _saved.pop()
            if getattr(cls.__dict__.get(attr), "_consistency_stand_in", False):
                setattr(cls, attr, original)


def _when_there(name: str, wrap: Callable[[ModuleType], None]) -> None:
    module = sys.modules.get(name)
    if module is not None:
        wrap(module)
    else:
        _unsubscribe.append(imports.when_imported(name, wrap))


def carrier(headers: Iterable[tuple[Any, Any]], url: str = "") -> str | None:
    """The header (or ``URL``) that carries the stand-in key, if any."""
    for name, value in headers:
        if REPLAY_KEY in _text(value):
            return _text(name).lower()
    return "URL" if REPLAY_KEY in url else None


def refuse_request(method: str, url: str, where: str, client: str | None) -> None:
    """Note and raise the refusal of a request that carries the stand-in key in ``where``."""
    agent = f"client {client}" if client else "a client"
    message = (
        f"{REFUSED}: {method} {redact_url(url).replace(REPLAY_KEY, '<stand-in key>')} ({agent}) carried it in its "
        f"{where}, outside a replay; nothing was sent. {ADVICE}"
    )
    _refuse(message)


def _refuse(message: str) -> None:
    active.refusals.append(message)
    raise StandInKeyRefused(message)


def _text(value: Any) -> str:
    return value.decode("latin-1") if isinstance(value, (bytes, bytearray)) else str(value)


def _user_agent(headers: Iterable[tuple[Any, Any]]) -> str | None:
    return next((_text(value) for name, value in headers if _text(name).lower() == "user-agent"), None)


# -- the network -------------------------------------------------------------------------------------------------


def _check_httpcore(request: Any) -> None:
    if not _on:
        return
    headers = request.headers
    url = _text(bytes(request.url))
    where = carrier(headers, url)
    if where is not None:
        refuse_request(_text(request.method), url, f"{where} header" if where != "URL" else where, _user_agent(headers))


def _guard_pools(module: ModuleType) -> None:
    for class_name, attr, is_async in _POOLS:
        cls = getattr(module, class_name, None)
        original = None if cls is None else cls.__dict__.get(attr)
        if cls is None or original is None or getattr(original, "_consistency_stand_in", False):
            continue
        guarded = _async_pool(original) if is_async else _sync_pool(original)
        guarded._consistency_stand_in = True  # type: ignore[attr-defined]
        _saved.append((cls, attr, original))
        setattr(cls, attr, guarded)


def _sync_pool(original: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    @functools.wraps(original)
    def handle_request(self: Any, request: Any) -> Any:
        _check_httpcore(request)
        return original(self, request)

    return handle_request


def _async_pool(original: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    @functools.wraps(original)
    async def handle_async_request(self: Any, request: Any) -> Any:
        _check_httpcore(request)
        return await original(self, request)

    return handle_async_request


def _guard_http_client(client: ModuleType) -> None:
    cls = client.HTTPConnection
    original = cls.__dict__.get("putheader")
    if original is None or getattr(original, "_consistency_stand_in", False):
        return

    @functools.wraps(original)
    def putheader(self: Any, header: Any, *values: Any) -> Any:
        if _on and any(REPLAY_KEY in _text(value) for value in values):
            scheme = "https" if isinstance(self, getattr(client, "HTTPSConnection", ())) else "http"
            method = getattr(self, "_method", None) or "request"
            refuse_request(method, f"{scheme}://{self.host}:{self.port}", f"{_text(header).lower()} header", None)
        return original(self, header, *values)

    putheader._consistency_stand_in = True  # type: ignore[attr-defined]
    _saved.append((cls, "putheader", original))
    cls.putheader = putheader


# -- recordings ---------------------------------------------------------------------------------------------------


def refusing(request_filter: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A cassette's request filter that first refuses a request carrying the stand-in key unless the repetition
    replays (vcrpy filters a request before it sends it, and before it stores it)."""

    def refuse_or_filter(request: Any) -> Any:
        if _on:
            state = active.current()
            if state is None or not state.replaying:
                headers = list(getattr(request, "headers", {}).items())
                where = carrier(headers, str(getattr(request, "uri", "")))
                if where is not None:
                    label = f"{where} header" if where != "URL" else where
                    refuse_request(str(request.method), str(request.uri), label, _user_agent(headers))
        return request_filter(request)

    return refuse_or_filter


# -- children -----------------------------------------------------------------------------------------------------


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event not in _CHILD_EVENTS or not _on:  # called for every audited event of the process: stay cheap
        return
    if event == "os.system":
        command, env = args[0], None
        argv: Any = [command]
    elif event == "subprocess.Popen":
        _executable, argv, _cwd, env = args
        if isinstance(env, dict):
            for name in [name for name, value in env.items() if _text(value) == REPLAY_KEY]:
                del env[name]  # a copy of the environment: the child gets it without the stand-in key
        # (without env, a child gets the C environment, which never holds it; when subprocess hands os.environ
        # to os.posix_spawn instead, that is audited below)
    elif event == "os.spawn":
        _mode, _path, argv, env = args
    else:  # os.exec, os.posix_spawn
        _path, argv, env = args
    _check_child(_executable_of(event, args), argv, env)


def _executable_of(event: str, args: tuple[Any, ...]) -> str:
    if event == "os.system":
        return "a shell command"
    index = 1 if event == "os.spawn" else 0
    return repr(os.fsdecode(args[index])) if isinstance(args[index], (str, bytes, os.PathLike)) else "a child"


def _check_child(executable: str, argv: Any, env: Mapping[Any, Any] | None) -> None:
    held = [] if env is None else [_text(name) for name, value in env.items() if REPLAY_KEY in _text(value)]
    if held:
        how = f"in its environment (${', $'.join(sorted(held))})"
        if env is os.environ:
            how += ", handed os.environ itself"
    elif argv is not None and any(REPLAY_KEY in _text(part) for part in _parts(argv)):
        how = "on its command line"
    else:
        return
    _refuse(
        f"{REFUSED}: a child process ({executable}) would get it {how}; it was not started. A child is not under the "
        "replay: what it sends goes out live. A variable holding the stand-in key is left out of a copy of the "
        "environment (env=dict(os.environ), or no env at all); never hand the child os.environ itself or the key."
    )


def _parts(argv: Any) -> list[Any]:
    if isinstance(argv, (str, bytes, os.PathLike)):
        return [os.fsdecode(argv)]
    try:
        return [os.fsdecode(part) if isinstance(part, (str, bytes, os.PathLike)) else part for part in argv]
    except TypeError:
        return []
