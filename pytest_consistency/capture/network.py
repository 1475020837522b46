"""Block outgoing connections while a repetition replays, so a replay can never turn into a paid live call.

vcrpy answers httpx/httpx2 traffic from the cassette; this catches everything else (requests, aiohttp, raw
sockets, ``_socket``, UDP, asyncio, uvloop) that would otherwise slip past it to the network.

How: one process-wide audit hook (``sys.addaudithook``), added on the first block and never removed, refuses the
``socket.connect``, ``socket.sendto`` and ``socket.sendmsg`` events that CPython's C socket module raises before
the system call, for every socket but AF_UNIX. That covers ``socket.socket`` and ``_socket.socket`` alike, every
thread, and the asyncio loops built on Python sockets. Outside a block the hook returns at once. uvloop connects
through libuv instead, so for the length of a block the connecting methods of ``uvloop.Loop`` are wrapped too.

Not covered: connections opened before the block (their ``send``/``recv`` raise no audit event), native code
that opens its own sockets (libcurl, grpcio, Rust clients), DNS lookups, and other processes.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from pytest_consistency.capture import imports

_AF_UNIX = getattr(socket, "AF_UNIX", None)
# The audit events whose second argument is the peer address; sendmsg's is None on a connected socket.
_EVENTS = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg"})
_PROBE = "pytest_consistency.capture.network.probe"
_UVLOOP_METHODS = ("create_connection", "create_datagram_endpoint", "sock_connect")
_ABSENT = object()

#: Why a replay-only repetition blocks the network (``--consistency-record=none``), in every refusal's message.
REPLAY_ONLY = "cassettes are replayed only (--consistency-record=none)"

_lock = threading.Lock()  # guards everything below but the hook's lock-free reads of _reasons
_reasons: list[str] = []  # one per active block, latest last; empty: nothing is blocked
_hook_added = False
_hook_live = False  # set by the hook itself, on the probe event
_uvloop_unsubscribe: Callable[[], None] | None = None
_uvloop_saved: list[tuple[type, str, Any]] = []


class NetworkBlocked(OSError):
    """A connection was attempted while replaying cassettes (``--consistency-record=none``)."""


@contextlib.contextmanager
def blocked(reason: str) -> Iterator[None]:
    """Refuse every outgoing network connection of the process (all threads) until the block exits; nestable."""
    _enter(reason)
    try:
        yield
    finally:
        _leave(reason)


def _enter(reason: str) -> None:
    with _lock:
        if not _reasons:
            _wrap_uvloop()
        _reasons.append(reason)
        if not _hook_live:
            _add_hook()
        if not _hook_live:
            _reasons.pop()
            if not _reasons:
                _unwrap_uvloop()
            raise RuntimeError("cannot block the network: another audit hook refused sys.addaudithook")


def _leave(reason: str) -> None:
    with _lock:
        _reasons.remove(reason)
        if not _reasons:
            _unwrap_uvloop()


def _refuse(address: Any) -> None:
    try:
        reason = _reasons[-1]
    except IndexError:  # the last block ended in another thread meanwhile
        return
    raise NetworkBlocked(f"network access to {address!r} blocked: {reason}")


def _is_unix(sock: Any) -> bool:
    return sock is not None and getattr(sock, "family", None) == _AF_UNIX


def _audit(event: str, args: tuple[Any, ...], _active: list[str] = _reasons) -> None:
    global _hook_live
    if not _active:  # called for every audited event of the process: stay this cheap when not blocking
        return
    if event in _EVENTS:
        sock, address = args
        if address is not None and not _is_unix(sock):
            _refuse(address)
    elif event == _PROBE:
        _hook_live = True


def _add_hook() -> None:
    """Add the hook once, then prove it runs: addaudithook is silently ignored when an earlier hook refuses it."""
    global _hook_added
    if not _hook_added:
        _hook_added = True
        sys.addaudithook(_audit)
    sys.audit(_PROBE)


def _wrap_uvloop() -> None:
    """Wrap uvloop's loop if it is imported, else the moment it is imported inside the block (never import it)."""
    global _uvloop_unsubscribe
    uvloop = sys.modules.get("uvloop")
    if uvloop is None:
        _uvloop_unsubscribe = imports.when_imported("uvloop", _wrap_imported_uvloop)
        return
    _wrap_loop(uvloop)


def _wrap_imported_uvloop(uvloop: Any) -> None:
    with _lock:
        if _reasons and not _uvloop_saved:
            _wrap_loop(uvloop)


def _wrap_loop(uvloop: Any) -> None:
    loop_cls = uvloop.Loop  # a Python subclass of the Cython loop, so its attributes can be set
    for name in _UVLOOP_METHODS:
        _uvloop_saved.append((loop_cls, name, loop_cls.__dict__.get(name, _ABSENT)))
        setattr(loop_cls, name, _GUARDS[name](getattr(loop_cls, name)))


def _unwrap_uvloop() -> None:
    global _uvloop_unsubscribe
    if _uvloop_unsubscribe is not None:
        _uvloop_unsubscribe()
        _uvloop_unsubscribe = None
    while _uvloop_saved:
        loop_cls, name, saved = _uvloop_saved.pop()
        if saved is _ABSENT:
            delattr(loop_cls, name)
        else:
            setattr(loop_cls, name, saved)


def _guard_create_connection(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def create_connection(
        self: Any, protocol_factory: Any, host: Any = None, port: Any = None, *args: Any, **kwargs: Any
    ) -> Any:
        sock = kwargs.get("sock")
        if _reasons and not _is_unix(sock):
            _refuse((host, port) if sock is None else sock)
        return await original(self, protocol_factory, host, port, *args, **kwargs)

    return create_connection


def _guard_create_datagram_endpoint(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def create_datagram_endpoint(
        self: Any, protocol_factory: Any, local_addr: Any = None, remote_addr: Any = None, *args: Any, **kwargs: Any
    ) -> Any:
        # Even a local-only UDP endpoint is refused: its transport's sendto goes out through libuv, unaudited.
        sock = kwargs.get("sock")
        if _reasons and not (_is_unix(sock) or (sock is None and kwargs.get("family") == _AF_UNIX)):
            _refuse(remote_addr or local_addr or sock)
        return await original(self, protocol_factory, local_addr, remote_addr, *args, **kwargs)

    return create_datagram_endpoint


def _guard_sock_connect(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def sock_connect(self: Any, sock: Any, address: Any) -> Any:
        if _reasons and not _is_unix(sock):
            _refuse(address)
        return await original(self, sock, address)

    return sock_connect


_GUARDS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "create_connection": _guard_create_connection,
    "create_datagram_endpoint": _guard_create_datagram_endpoint,
    "sock_connect": _guard_sock_connect,
}
