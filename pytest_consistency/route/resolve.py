"""A provider's route resolved from the settings and the environment, with every problem it has.

Apart from ``route`` (the ``Route`` itself), so that the providers, which take a route, sit between the two.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pytest_consistency.config.settings import Settings
from pytest_consistency.route.route import ROUTE_OPTIONS, Route
from pytest_consistency.secrets.keys import REPLAY_KEY, is_placeholder, key_problem
from pytest_consistency.secrets.structures import redact_url

if TYPE_CHECKING:
    from pytest_consistency.route.providers import Provider


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


def resolve_route(settings: Settings, env: Mapping[str, str], provider: Provider, role: str = "agent") -> Route:
    """Build ``provider``'s route and list its problems; raising is left to the caller, who knows
    if it is needed. A judge's route (``role`` ``judge``) reads the judge's settings (``--consistency-judge``, YAML
    ``judge:``) first and the agent's route options for what they leave unset, with the same checks; its calls are
    the judge's.

    When cassettes are replayed only (``--consistency-record=none``) no call goes out, so the environment's key
    is not used at all, whatever it holds (none, a placeholder, a dummy, a real key as CI jobs often have): the
    clients carry a placeholder, replays report the recorded keys, and the outcome cannot depend on the key.
    """
    base_url_option, model_option, key_env_option = ROUTE_OPTIONS.get(provider.name, (None, None, None))
    judge = dict(settings.judge) if role != "agent" else {}

    def chosen(name: str, option: str | None) -> tuple[Any, str | None]:
        """A route setting and where it came from: the judge's when it sets it, else the agent route's option."""
        if name in judge:
            return judge[name], f"{settings.sources.get('judge', 'the configuration')} ({name})"
        return (settings.value(option), settings.sources.get(option)) if option else (None, None)

    problems: list[str] = []
    configured_env = chosen("api_key_env", key_env_option)[0]
    candidates = (str(configured_env),) if configured_env else provider.key_envs
    key_env = next((name for name in candidates if env.get(name)), candidates[0])
    api_key = env.get(key_env) or None
    either = " or ".join(f"${name}" for name in candidates)
    if settings.record == "none":
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

    configured, configured_source = chosen("base_url", base_url_option)
    url_env = provider.base_url_env
    env_url = env.get(url_env) or None
    if configured:
        base_url, source = str(configured), configured_source or "the configuration"
        # The agent's own clients read the variable; a judge on another endpoint is what its setting is for.
        if env_url and "base_url" not in judge and env_url.strip().rstrip("/") != base_url.strip().rstrip("/"):
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

    model, model_source = chosen("model", model_option)
    model_source = model_source if model else None
    if not model and provider.model_env and env.get(provider.model_env):
        model, model_source = env[provider.model_env].strip(), f"${provider.model_env}"

    return Route(
        base_url=redact_url(base_url.strip()).rstrip("/"),  # a URL with credentials is refused above anyway
        api_key=api_key,
        model=model,
        timeout=float(settings.timeout),
        max_retries=int(settings.max_retries),
        temperature=judge.get("temperature", settings.temperature),
        seed=settings.seed,
        max_tokens=settings.max_tokens,
        key_env=key_env,
        base_url_source=source,
        problems=tuple(problems),
        provider=provider.name,
        model_source=model_source,
        role=role,
    )
