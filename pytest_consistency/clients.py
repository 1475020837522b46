"""OpenAI clients built from the pinned route, with the recording transport inside.

Supports openai 2.x (httpx) and 3.x (httpx2): the transport is built from whichever module the SDK's
``DefaultHttpxClient`` derives from, so vcrpy and the class-level observer see the same classes.
"""

from __future__ import annotations

import importlib
from typing import Any

from .budget import Ledger
from .route import Route
from .transport import recording_transport


def _sdk() -> Any:
    try:
        return importlib.import_module("openai")
    except ImportError:
        raise RuntimeError(
            "the pinned_client fixtures need the openai SDK: pip install 'pytest-consistency[openai]'"
        ) from None


def _http_module(openai: Any, is_async: bool) -> Any:
    base = openai.DefaultAsyncHttpxClient if is_async else openai.DefaultHttpxClient
    for cls in base.__mro__:
        name = cls.__module__.split(".")[0]
        if name in ("httpx", "httpx2"):
            return importlib.import_module(name)
    raise RuntimeError(f"cannot tell which HTTP library openai {openai.__version__} uses")


def defaults_of(route: Route) -> dict[str, Any]:
    return {"model": route.model, "temperature": route.temperature, "seed": route.seed}


def build_client(route: Route, ledger: Ledger | None, is_async: bool = False, api_key: str | None = None) -> Any:
    """``openai.OpenAI`` (or ``AsyncOpenAI``) on the route: its base URL, key, timeout and retries."""
    openai = _sdk()
    module = _http_module(openai, is_async)
    transport = recording_transport(module, ledger, defaults_of(route), is_async, replay_only=route.replay_only)
    http_class = openai.DefaultAsyncHttpxClient if is_async else openai.DefaultHttpxClient
    client_class = openai.AsyncOpenAI if is_async else openai.OpenAI
    return client_class(
        api_key=api_key or route.api_key,
        base_url=route.base_url,
        timeout=route.timeout,
        max_retries=route.max_retries,
        http_client=http_class(transport=transport, timeout=route.timeout),
    )
