"""Run code when a module is imported, without importing it first.

Why: for the length of a repetition the plugin wraps the transports of httpx and httpx2 (to observe clients
the agent builds itself) and uvloop's loop (to block connections in replay). Importing those modules just to
wrap them cost 0.1 to 0.3 s per process in a suite that never uses them, a third of pytest's own time for 1,000
quick tests. Wrapping only what is already imported would miss an agent that imports httpx inside its first
repetition: its requests would go unobserved and read as "no calls". So the plugin wraps what is imported,
and subscribes here for the rest; a subscription lasts as long as the wrap it stands for.

How: one finder at the front of ``sys.meta_path`` answers for watched names only. It asks the finders behind it
for the real spec and wraps the loader, which runs the subscribers right after the module has executed (and
puts the real loader back on the module and its spec first). For every other name it returns at once.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

Subscriber = Callable[[ModuleType], None]

_lock = threading.Lock()
_subscribers: dict[str, list[Subscriber]] = {}


class _Loader(importlib.abc.Loader):
    def __init__(self, loader: Any, name: str) -> None:
        self._loader = loader
        self._name = name

    def create_module(self, spec: Any) -> ModuleType | None:
        module: ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self._loader
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = self._loader
        self._loader.exec_module(module)
        with _lock:
            subscribers = list(_subscribers.get(self._name, ()))
        for subscriber in subscribers:
            subscriber(module)

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ...: the real loader's
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if fullname not in _subscribers:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, fullname)
        return spec


_FINDER = _Finder()


def when_imported(name: str, subscriber: Subscriber) -> Callable[[], None]:
    """Call ``subscriber(module)`` each time top-level module ``name`` is imported from now on (not if it is
    already in ``sys.modules``: check that first). Returns the function that ends the subscription."""
    with _lock:
        _subscribers.setdefault(name, []).append(subscriber)
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)

    def unsubscribe() -> None:
        with _lock:
            found = _subscribers.get(name, [])
            if subscriber in found:
                found.remove(subscriber)
            if not found:
                _subscribers.pop(name, None)
            if not _subscribers and _FINDER in sys.meta_path:
                sys.meta_path.remove(_FINDER)

    return unsubscribe
