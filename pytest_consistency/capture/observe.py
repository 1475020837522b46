"""The transport observer's entry point: wraps httpx and httpx2 when they are imported, and loads nothing else.

Why a module of its own: a marked repetition enters the observer whether or not its test uses HTTP, but what it
wraps the transports with (``transport``: attempts, response taps, the wire format in ``wire``) is needed only once
an HTTP library is imported. A session whose tests never import one (or only after the observer subscribed, see
``imports``) does not compile or run those modules.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pytest_consistency.capture import imports

if TYPE_CHECKING:
    from pytest_consistency.shared.ledger import Ledger
    from pytest_consistency.shared.throttle import Throttle

#: The HTTP libraries whose transports the observer wraps (the openai and anthropic SDKs speak httpx2).
HTTP_MODULES = ("httpx", "httpx2")


@contextlib.contextmanager
def observe_transports(
    ledger: Ledger | None,
    ignore: tuple[re.Pattern[str], ...] = (),
    throttles: Mapping[str, Throttle] | None = None,
    marked_only: bool = False,
    unpatched: Callable[[str, bool], Any] | None = None,
) -> Iterator[None]:
    """Record traffic of clients built anywhere (the agent's own), for the duration of the block.

    Requests matching ``ignore`` (background telemetry) are neither recorded nor replayed: they reach the
    unpatched transport, which the network block refuses in replay-only mode. While respx mocks httpcore, httpx
    traffic never leaves the process, so it skips the cassette too. httpx and httpx2 are wrapped when already
    imported, and otherwise the moment the agent imports one inside the block (``imports``): the plugin never
    imports them itself.

    With ``marked_only`` the block may span the whole session (``--consistency-record=off``, where a repetition
    has nothing else to enter): a request is then recorded only while a marked repetition runs, and passes
    untouched otherwise, as it would outside a per-repetition block. ``unpatched(module name, is_async)`` gives
    the transport method under vcrpy's patch, which ignored requests are sent through (the cassette's scope
    passes it; elsewhere the class's own method is not patched).
    """
    saved: list[tuple[type, str, Any]] = []
    unsubscribe = []

    def wrap(module: ModuleType) -> None:
        from pytest_consistency.capture.transport import (
            _observe,  # the recording machinery, once there is a library to observe
        )

        saved.extend(_observe(module, ledger, ignore, throttles or {}, marked_only, unpatched))

    for name in HTTP_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            wrap(module)
        else:
            unsubscribe.append(imports.when_imported(name, wrap))
    try:
        yield
    finally:
        for stop in unsubscribe:
            stop()
        for cls, attr, original in reversed(saved):
            setattr(cls, attr, original)
