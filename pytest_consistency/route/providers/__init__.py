"""Providers: one module per model API, behind one small contract, so a route is a route whatever SDK it speaks.

A :class:`Provider` knows what differs between APIs: its default base URL and environment variables, the shape
its SDK expects of a base URL, the endpoints that sample a model, how to build its SDK's client on the recording
transport, and the minimal request of a preflight. What is the same for every API (recording attempts, cassettes,
drift, budget, throttling) stays out of it. The built-in family is :data:`BUILTIN`; the session picks one by name
through the firstresult hook ``pytest_consistency_provider`` (whose default, registered trylast, is
:func:`builtin`), so a conftest can add a provider of its own (prior art: pytest-xdist's
``pytest_xdist_make_scheduler``). Reading model and usage from response bodies is shared (``wire``): the JSON and
SSE shapes of both built-in APIs are read by one parser. What a step asked and decided (the trajectory) differs
per API, so each provider parses it (``asked``, ``decision_reader``); ``wire`` picks the built-in provider of a
call by the API the call spoke.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_consistency.model.trajectory import Decision, Message
    from pytest_consistency.route.route import Route

#: Built-in provider name -> module (each defines ``PROVIDER``); imported on first use.
BUILTIN = {"openai": "openai", "anthropic": "anthropic"}


class Provider(Protocol):
    """One model API: what a route of it needs besides a base URL, a key and a model."""

    #: The name routes, options and call records use (``openai``, ``anthropic``).
    name: str
    #: The SDK's import name, and the extra that installs it.
    sdk: str
    default_base_url: str
    #: Environment variables that may hold the key, in order of preference (the first set one is used).
    key_envs: tuple[str, ...]
    base_url_env: str
    #: The environment variable that names the model, if the SDK's users set one.
    model_env: str | None
    #: Request paths that sample the model: sampling defaults are added there, and usage is expected back.
    sampling_endpoints: tuple[str, ...]
    #: Settings applied to requests that do not set them (``model`` and those the API accepts).
    defaults: tuple[str, ...]

    def asked(self, path: str, body: dict[str, Any]) -> tuple[Message, ...]:
        """What a sampling request of ``path`` asked that is new since the model's previous turn: the messages after
        the last assistant message (tool results included), in order."""
        ...

    def decision_reader(self, path: str) -> DecisionReader:
        """A reader of the decision in a sampling response of ``path``, fed its JSON body or its SSE events."""
        ...

    def conversation(self, path: str, body: dict[str, Any]) -> Conversation | None:
        """Where a sampling request of ``path`` holds its conversation: the body's key, its turns, and the index of
        the first turn that is new since the model's previous turn (what the cause of an inconsistency compares);
        None when the body holds none."""
        ...

    def path_problem(self, path: str, shown: str, source: str) -> str | None:
        """What is wrong with the path of a base URL for this SDK (``shown`` is the URL, redacted), or None."""
        ...

    def http_module(self, is_async: bool) -> ModuleType:
        """The HTTP library (httpx or httpx2) the SDK's client derives from: the transport must be of its classes."""
        ...

    def client(self, route: Route, transport: Any, is_async: bool) -> Any:
        """The SDK's client on ``route``, sending through ``transport``."""
        ...

    def preflight(self, route: Route, client: Any) -> str | None:
        """Make one minimal request with ``client`` (the route's pinned client, without retries, built by the
        caller) and close it; None when the route answers, else a message that says what to fix."""
        ...


@dataclass(frozen=True)
class Conversation:
    """The turns of a sampling request: ``turns`` is ``body[key]`` as a list (a string prompt is one turn);
    ``turns[new:]`` are new since the model's previous turn."""

    key: str
    turns: list[Any]
    new: int


class DecisionReader(Protocol):
    """Reads what the model decided from one response as it streams past (see ``wire.ResponseTap``)."""

    def body(self, data: dict[str, Any]) -> None:
        """The whole JSON body of a response that was not streamed."""
        ...

    def event(self, data: dict[str, Any]) -> None:
        """One SSE event's JSON data, in order."""
        ...

    def result(self) -> Decision | None:
        """The decision, or None when the response held none (not a sampling response of this API)."""
        ...


class UnknownProvider(ValueError):
    """No provider of that name: neither built in nor returned by a ``pytest_consistency_provider`` hook."""


def builtin(name: str) -> Provider | None:
    """The built-in provider called ``name``, or None."""
    module = BUILTIN.get(name)
    if module is None:
        return None
    # Asked for every call and every client: the module from sys.modules once it is imported (import_module
    # resolves the relative name and takes the import lock each time, a few microseconds).
    loaded = sys.modules.get(f"{__name__}.{module}") or import_module(f".{module}", __name__)
    provider: Provider = loaded.PROVIDER
    return provider


def import_sdk(name: str, extra: str) -> Any:
    """Import an SDK, or say which extra installs it."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    try:
        return import_module(name)
    except ImportError:
        raise RuntimeError(f"this fixture needs the {name} SDK: pip install 'pytest-consistency[{extra}]'") from None


def http_module_of(client_class: type) -> ModuleType:
    """httpx or httpx2, whichever ``client_class`` (an SDK's ``DefaultHttpxClient``) derives from."""
    for cls in client_class.__mro__:
        name = cls.__module__.split(".")[0]
        if name in ("httpx", "httpx2"):
            return import_module(name)
    raise RuntimeError(f"cannot tell which HTTP library {client_class.__module__}.{client_class.__name__} uses")
