"""The pinned routes: per provider, one base URL, one key, one model, one timeout and retry policy per session.

Each is resolved once, from the options (CLI > YAML ``route:`` / ``routes:`` > ini > default) and the
environment, and every problem a user could fix before spending a call is collected with the fix in its message.
What differs between providers (variables, defaults, the shape of a base URL) comes from ``providers``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_consistency.secrets.keys import REPLAY_KEY, fingerprint

if TYPE_CHECKING:
    from pytest_consistency.model.result import RouteSettings

DEFAULT_BASE_URL = "https://api.openai.com/v1"

#: The variables each provider's SDK reads a key from when the agent builds a client without one; the first is the
#: one a stand-in key goes into (``ANTHROPIC_AUTH_TOKEN`` set is a credential too: nothing is added then).
SDK_KEY_ENVS = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
}

#: The options that configure each provider's route, by their settings' names; timeout, retries, temperature and
#: seed are shared.
ROUTE_OPTIONS = {
    "openai": ("base_url", "model", "api_key_env"),
    "anthropic": ("anthropic_base_url", "anthropic_model", "anthropic_key_env"),
}
#: The routes of the session by name, each with its provider and role: the agent's, one per provider, and the
#: judge's (``judge_client`` on OpenAI's API, ``anthropic_judge_client`` on Anthropic's), whose settings
#: (``--consistency-judge``, YAML ``judge:``) are over the agent route's of the same provider.
ROUTE_NAMES = {
    "openai": ("openai", "agent"),
    "anthropic": ("anthropic", "agent"),
    "judge": ("openai", "judge"),
    "anthropic_judge": ("anthropic", "judge"),
}


@dataclass(frozen=True)
class Route:
    """Where a provider's calls go, pinned for every repetition: base URL, key, model, timeout and retries."""

    base_url: str
    api_key: str | None = field(repr=False)
    model: str | None
    timeout: float
    max_retries: int
    temperature: float | None = None
    seed: int | None = None
    #: ``max_tokens`` for a request that sets no limit (``--consistency-max-tokens``).
    max_tokens: int | None = None
    key_env: str = "OPENAI_API_KEY"
    base_url_source: str = "default"
    problems: tuple[str, ...] = ()
    provider: str = "openai"
    #: Where the model came from (an option, the provider's model variable), for messages.
    model_source: str | None = None
    #: Whose calls travel it: the agent's (``agent``) or a judge's (``judge``: its calls are recorded as the judge's).
    role: str = "agent"

    @property
    def replay_only(self) -> bool:
        """No key was needed: cassettes are replayed and the placeholder key matches any recorded one."""
        return self.api_key == REPLAY_KEY

    @property
    def key_fingerprint(self) -> str | None:
        return None if self.replay_only else fingerprint(self.api_key)

    def error_message(self) -> str:
        which = "" if self.provider == "openai" else f" ({self.provider})"
        if self.role != "agent":
            which = f" of the {self.role}{which}"
        return f"pytest-consistency: the pinned route{which} cannot be used:\n" + "\n".join(
            f"  - {p}" for p in self.problems
        )

    def settings(self, retries_max: int | None) -> RouteSettings:
        """What the summary and the report keep of the route: never the key itself, only its fingerprint."""
        from pytest_consistency.model.result import RouteSettings

        return RouteSettings(
            self.base_url,
            self.model,
            self.key_fingerprint,
            self.key_env,
            self.replay_only,
            self.timeout,
            self.max_retries,
            self.temperature,
            self.seed,
            self.max_retries if retries_max is None else retries_max,
            self.provider,
            self.role,
        )


def stand_in_variables(routes: Iterable[Route], env: Mapping[str, str]) -> tuple[str, ...]:
    """The key variables a replayed repetition fills with the stand-in key (``keys.REPLAY_KEY``), for the clients
    the agent builds itself: each provider's SDK variable unless the SDK finds a credential already, and a route's
    own key variable (``api_key_env``), each only when it is unset or empty. A replay sends nothing, so an agent's
    ``openai.OpenAI()`` needs a key only to be built: without one the SDK raises before any request, and the
    repetition would fail on a figure the agent never produced."""
    return tuple(name for name, blockers in _stand_in_plan(tuple(routes)) if not any(map(env.get, blockers)))


@functools.lru_cache(maxsize=8)
def _stand_in_plan(routes: tuple[Route, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Per variable that may get the stand-in key, the variables any of which, when set, keep it out: worked out
    once per session's routes, so that a repetition only reads the environment (a few variables)."""
    known = {name for names in SDK_KEY_ENVS.values() for name in names}
    plan: dict[str, tuple[str, ...]] = {}
    for route in routes:
        if route.key_env not in known:
            plan.setdefault(route.key_env, (route.key_env,))
        sdk = SDK_KEY_ENVS.get(route.provider, ())
        if sdk:
            plan.setdefault(sdk[0], sdk)
    return tuple(plan.items())


@contextmanager
def stand_in_keys(names: Iterable[str]) -> Iterator[tuple[str, ...]]:
    """Put the stand-in key in each unset (or empty) variable of ``names`` for the duration; afterwards each one
    that still holds it is restored as it was (unset, or empty). Yields the variables filled.

    Only in Python's view of the environment (``os.environ``, which the SDKs read the key from), never in the
    process's own (no ``putenv``): a child process started without an environment of its own gets the process's,
    which never holds it (``capture.standin`` sees to the children handed an environment)."""
    previous = {name: value for name in names if not (value := os.environ.get(name))}
    for name in previous:
        _python_only(name, REPLAY_KEY)
    try:
        yield tuple(previous)
    finally:
        for name, value in previous.items():
            if os.environ.get(name) == REPLAY_KEY:
                _python_only(name, value)


def _python_only(name: str, value: str | None) -> None:
    """Set (or, with None, remove) ``name`` in ``os.environ`` without touching the process's C environment."""
    environ = os.environ
    data = getattr(environ, "_data", None)
    if not isinstance(data, dict):  # not CPython's mapping: the process's environment too (children: standin)
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
        return
    key = environ.encodekey(name)  # type: ignore[attr-defined]
    if value is None:
        data.pop(key, None)
    else:
        data[key] = environ.encodevalue(value)  # type: ignore[attr-defined]
