"""vcrpy's ``force_reset``, narrowed to what needs it and made safe for other threads.

Why: vcrpy connects and sends every request it does not answer from the cassette (one that
``--consistency-ignore-url`` drops, like a tracer's post through ``requests`` from LangSmith's background thread)
inside ``force_reset``, which puts the unpatched classes and transports back for the whole process, every thread,
for as long as the request takes to connect and send. A pinned call the main thread made in that window went to the
unpatched httpx2 transport, live, past the cassette: the record session passed and the repetition's cassette was
never written (replay then failed with "no cassette"). And a window that outlasted its repetition put that
repetition's patches back after it had ended, for good. Upstream: vcrpy issues #212 ("force_reset makes vcr non
thread-safe") and #295 ("Second thread not recorded"), both closed as stale; the lock proposed in vcrpy PR #300 was
not merged (it would not keep other threads off the reset classes either). vcrpy issue #1051 (open) is the same
window left open by the garbage collector.

So, while a repetition's cassette is applied, ``force_reset`` only puts back what a real connection looks up by name
while vcrpy builds or sends it: ``http.client``'s connection classes (``HTTPSConnection.__init__`` calls
``super(HTTPSConnection, self)``), and the other libraries' classes vcrpy resets (httplib2, botocore, tornado), as
vcrpy does. The httpx and httpx2 transports (the pinned clients' and the observer's path) and urllib3's connection
classes (``requests``) stay patched: nothing an http.client-level connection runs reaches them. Windows of several
threads share one reset (the first puts back, the last restores), and a window during which a cassette was entered
or left restores nothing: the cassette's own patchers have set what must be there now.

This module never imports vcrpy: ``_vcr`` (the one module that does) hands it vcrpy's ``reset_patchers`` and puts
``force_reset`` in vcrpy's place.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import Any

#: Libraries whose patches a reset leaves in place (see the module docstring).
_KEPT_PATCHED = ("httpx", "httpx2", "httpx_curl_cffi", "urllib3")

#: Held while a reset begins or ends and while a cassette's patches are entered or left (``changing``).
lock = threading.Lock()
_depth = 0
_generation = 0  # bumped each time a cassette's patches are entered or left
_started_at = 0
_entered: list[Any] = []


def _resets(patcher: Any) -> bool:
    target = patcher.getter()
    name = target.__name__ if isinstance(target, ModuleType) else getattr(target, "__module__", "")
    return str(name).split(".")[0] not in _KEPT_PATCHED


@contextlib.contextmanager
def changing() -> Iterator[None]:
    """Around entering or leaving a cassette's patches: no reset begins or ends meanwhile."""
    global _generation
    with lock:
        _generation += 1
        yield


@contextlib.contextmanager
def force_reset(reset_patchers: Callable[[], Iterable[Any]]) -> Iterator[None]:
    """Stands in for ``vcr.patch.force_reset`` while a cassette is applied (``reset_patchers`` is vcrpy's, bound by
    ``_vcr``)."""
    global _depth, _started_at
    with lock:
        if _depth == 0:
            _started_at = _generation
            for patcher in reset_patchers():
                if _resets(patcher):
                    patcher.__enter__()
                    _entered.append(patcher)
        _depth += 1
    try:
        yield
    finally:
        with lock:
            _depth -= 1
            if _depth == 0:
                patchers = reversed(_entered) if _started_at == _generation else ()
                for patcher in patchers:
                    patcher.__exit__(None, None, None)
                _entered.clear()
