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
from urllib.parse import urlsplit

from pytest_consistency.config.settings import Settings
from pytest_consistency.secrets.keys import REPLAY_KEY, fingerprint, is_placeholder, key_problem
from pytest_consistency.secrets.redact import redact_url

if TYPE_CHECKING:
    from pytest_consistency.model.result import RouteSettings
    from pytest_consistency.route.providers import Provider

DEFAULT_BASE_URL = "https://api.openai.com/v1"

#: The variables each provider's SDK reads a key from when the agent builds a client without one; the first is the
#: one a stand-in key goes into (``ANTHROPIC_AUTH_TOKEN`` set is a credential too: nothing is added then).
SDK_KEY_ENVS = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
}

#: The options that configure each provider's route; timeout, retries, temperature and seed are shared.
ROUTE_OPTIONS = {
    "openai": ("consistency_base_url", "consistency_model", "consistency_api_key_env"),
    "anthropic": ("consistency_anthropic_base_url", "consistency_anthropic_model", "consistency_anthropic_key_env"),
}


@dataclass(frozen=True)
class Route:
    base_url: str
    api_key: str | None = field(repr=False)
    model: str | None
    timeout: float
    max_retries: int
    temperature: float | None = None
    seed: int | None = None
    key_env: str = "OPENAI_API_KEY"
    base_url_source: str = "default"
    problems: tuple[str, ...] = ()
    provider: str = "openai"
    #: Where the model came from (an option, the provider's model variable), for messages.
    model_source: str | None = None

    @property
    def replay_only(self) -> bool:
        """No key was needed: cassettes are replayed and the placeholder key matches any recorded one."""
        return self.api_key == REPLAY_KEY

    @property
    def key_fingerprint(self) -> str | None:
        return None if self.replay_only else fingerprint(self.api_key)

    def error_message(self) -> str:
        which = "" if self.provider == "openai" else f" ({self.provider})"
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
        )


def base_url_problems(url: str, source: str, provider: Provider) -> list[str]:
    """What is wrong with a base URL for ``provider``; messages show it with any credential redacted."""
    default = provider.default_base_url
    problems = []
    shown = redact_url(url.strip())
    if url != url.strip() or any(ch.isspace() or ord(ch) < 32 for ch in url):
        problems.append(
            f"base URL {shown!r} (from {source}) contains whitespace or a line break (a trailing space becomes "
            "'%20' in every request path); remove it"
        )
        url = url.strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:
        return [*problems, f"base URL {shown!r} (from {source}) is malformed ({exc}); use e.g. {default}"]
    if parts.username is not None or parts.password is not None:
        clean = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        problems.append(
            f"base URL from {source} carries credentials (user:password@): the HTTP client would send them as "
            f"Basic auth instead of the pinned key, and they would reach logs. Put the key in the API key "
            f"variable and use {redact_url(clean)}"
        )
        url = clean
        parts = urlsplit(clean)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        problems.append(f"base URL {shown!r} (from {source}) is not an http(s) URL; use e.g. {default}")
        return problems
    if parts.query or parts.fragment:
        clean = parts._replace(query="", fragment="").geturl()
        shown_query = redact_url(f"http://h/?{parts.query}").partition("?")[2]
        shown_fragment = redact_url(f"http://h/#{parts.fragment}").partition("#")[2]
        problems.append(
            f"base URL from {source} has a query string or fragment ('?{shown_query}' / '#{shown_fragment}'), "
            f"as a URL pasted from a website does; use the API URL without it: {clean}"
        )
    problem = provider.path_problem(parts.path, redact_url(url), source)
    if problem:
        problems.append(problem)
    return problems


def resolve_route(settings: Settings, env: Mapping[str, str], provider: Provider) -> Route:
    """Build ``provider``'s route and list its problems; raising is left to the caller, who knows
    if it is needed.

    When cassettes are replayed only (``--consistency-record=none``) no call goes out, so the environment's key
    is not used at all, whatever it holds (none, a placeholder, a dummy, a real key as CI jobs often have): the
    clients carry a placeholder, replays report the recorded keys, and the outcome cannot depend on the key.
    """
    base_url_option, model_option, key_env_option = ROUTE_OPTIONS.get(provider.name, (None, None, None))
    problems: list[str] = []
    configured_env = settings[key_env_option] if key_env_option else None
    candidates = (str(configured_env),) if configured_env else provider.key_envs
    key_env = next((name for name in candidates if env.get(name)), candidates[0])
    api_key = env.get(key_env) or None
    either = " or ".join(f"${name}" for name in candidates)
    if settings["consistency_record"] == "none":
        api_key = REPLAY_KEY
    elif api_key is None:
        problems.append(f"no API key: {either} is not set; export {key_env}=<your key> (keys never go in code)")
    elif is_placeholder(api_key):
        problems.append(f"${key_env} holds a placeholder, not a key; export the real key")
        api_key = None
    elif key_problem(api_key):
        problems.append(
            f"${key_env} {key_problem(api_key)}; export it without them, e.g. "
            f'export {key_env}="$(printf %s "${key_env}" | tr -d \'[:space:]\')"'
        )
        api_key = None

    configured = settings[base_url_option] if base_url_option else None
    url_env = provider.base_url_env
    env_url = env.get(url_env) or None
    if configured:
        base_url, source = str(configured), settings.sources.get(str(base_url_option), "the configuration")
        if env_url and env_url.strip().rstrip("/") != base_url.strip().rstrip("/"):
            problems.append(
                f"{url_env}={redact_url(env_url)} differs from the configured base URL "
                f"{redact_url(base_url)} ({source}); "
                f"agent code that builds its own client would use the other one. Unset {url_env} or make "
                "them equal"
            )
    elif env_url:
        base_url, source = env_url, f"${url_env}"
    else:
        base_url, source = provider.default_base_url, "default"
    problems.extend(base_url_problems(base_url, source, provider))

    model = settings[model_option] if model_option else None
    model_source = settings.sources.get(model_option) if model and model_option else None
    if not model and provider.model_env and env.get(provider.model_env):
        model, model_source = env[provider.model_env].strip(), f"${provider.model_env}"

    return Route(
        base_url=redact_url(base_url.strip()).rstrip("/"),  # a URL with credentials is refused above anyway
        api_key=api_key,
        model=model,
        timeout=float(settings["consistency_timeout"]),
        max_retries=int(settings["consistency_max_retries"]),
        temperature=settings["consistency_temperature"],
        seed=settings["consistency_seed"],
        key_env=key_env,
        base_url_source=source,
        problems=tuple(problems),
        provider=provider.name,
        model_source=model_source,
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
    that still holds it is restored as it was (unset, or empty). Yields the variables filled."""
    previous = {name: value for name in names if not (value := os.environ.get(name))}
    for name in previous:
        os.environ[name] = REPLAY_KEY
    try:
        yield tuple(previous)
    finally:
        for name, value in previous.items():
            if os.environ.get(name) == REPLAY_KEY:
                if value is None:
                    del os.environ[name]
                else:
                    os.environ[name] = value
