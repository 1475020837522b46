"""vcrpy's cassette exit, made safe for a request another thread has in flight.

Why: when a cassette is left, vcrpy's ``ConnectionRemover`` closes every connection it handed out for that cassette,
including those still checked out of urllib3's pool. A connection is checked out while a request is on it, and a
repetition's cassette is left while a background thread (LangSmith's tracer, posting through ``requests`` to an
ignored URL) may still be sending its body on one: the socket was closed under that send, so the post failed with
a broken pipe, or waited out its whole timeout polling a closed socket, and the trace was lost. The user's run, not
the agent, broke it: without the plugin the post completes.

So a connection still checked out when its cassette is left is marked, as vcrpy does, so that it never goes back
into the pool, but it is not closed under its holder: it is closed when its response releases it. Idle connections
in the pool are closed at once, as vcrpy does.

Upstream: no issue reported. vcrpy closes the cassette's connections on exit since PR #758 (for issue #710, unclosed
socket warnings), which did not consider a connection another thread still holds. This module never imports vcrpy:
``_vcr`` hands it vcrpy's ``ConnectionRemover`` and ``VCRHTTPResponse``.
"""

from __future__ import annotations

import functools
import queue
from typing import Any

#: Set on a connection its cassette left while it was checked out; vcrpy's ``release_conn`` reads the same name.
_EXITED = "_vcr_cassette_exited"


def keep_in_flight(manager: Any, remover: Any, response: Any) -> Any:
    """``manager`` (one of vcrpy's patch managers) with this module's exit when it is a ``ConnectionRemover``
    (``remover``, vcrpy's class; ``response``, vcrpy's ``VCRHTTPResponse``)."""
    if type(manager) is not remover:
        return manager
    _close_on_release(response)
    manager.__class__ = _remover(manager.__class__)
    return manager


@functools.cache
def _remover(base: Any) -> type:
    class Remover(base):  # type: ignore[misc]
        def __exit__(self, *exc_info: object) -> None:
            for pool, connections in self._connection_pool_to_connections.items():
                put_back: list[Any] = []
                while pool.pool and pool.pool.qsize() and connections:
                    connection = pool.pool.get()
                    if isinstance(connection, self._connection_class):
                        connections.discard(connection)
                        connection.close()  # idle in the pool: nobody holds it
                        if isinstance(pool.pool, queue.Queue):
                            put_back.append(None)  # keeps its slot
                    else:
                        put_back.append(connection)
                for connection in put_back:
                    pool._put_conn(connection)
                for connection in connections:  # checked out: its holder may be sending on it right now
                    setattr(connection, _EXITED, True)

    return Remover


@functools.cache
def _close_on_release(VCRHTTPResponse: Any) -> None:
    """Once per class: a response releasing a connection its cassette left closes it (vcrpy drops it unclosed)."""
    original = getattr(VCRHTTPResponse, "release_conn", None)
    if original is None:  # an older vcrpy: it puts every connection back and closes none at release
        return

    @functools.wraps(original)
    def release_conn(self: Any) -> None:
        connection = getattr(self, "_connection", None)
        original(self)
        if connection is not None and getattr(connection, _EXITED, False):
            connection.close()

    VCRHTTPResponse.release_conn = release_conn
