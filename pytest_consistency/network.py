"""Block outgoing connections while a repetition replays, so a replay can never turn into a paid live call.

vcrpy answers httpx/httpx2 traffic from the cassette; this catches everything else (requests, aiohttp, raw
sockets) that would otherwise slip past it to the network.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Any


class NetworkBlocked(OSError):
    """A connection was attempted while replaying cassettes (``--consistency-record=none``)."""


@contextlib.contextmanager
def blocked(reason: str) -> Iterator[None]:
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def refuse(sock: socket.socket, address: Any) -> None:
        if sock.family == getattr(socket, "AF_UNIX", None):
            return original_connect(sock, address)
        raise NetworkBlocked(f"network access to {address!r} blocked: {reason}")

    def refuse_ex(sock: socket.socket, address: Any) -> int:
        if sock.family == getattr(socket, "AF_UNIX", None):
            return original_connect_ex(sock, address)
        raise NetworkBlocked(f"network access to {address!r} blocked: {reason}")

    socket.socket.connect = refuse  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = refuse_ex  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        socket.socket.connect = original_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = original_connect_ex  # type: ignore[method-assign]
