"""The route doctor's checks across routes: the mix-ups of a session that pins OpenAI and Anthropic routes at once.

Each route checks itself when it is resolved (``route``: missing or placeholder key, stray whitespace, a base URL
with credentials, tracking parameters or a path its SDK does not expect). What only shows with both in view is
here, before any call: a key exported under the other provider's variable (an ``sk-ant-`` key sent to OpenAI, an
OpenAI key sent to Anthropic), and, when the configuration says both go through one gateway
(``--consistency-same-gateway``), base URLs that point at different ones. Pure functions of the resolved routes.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from pytest_consistency.route.route import Route

ANTHROPIC_KEY_PREFIX = "sk-ant-"
#: Prefixes of OpenAI's own keys (project, service account, user); gateways' virtual keys also start with ``sk-``,
#: so only a key sent to Anthropic's own API is judged by its prefix.
OPENAI_KEY_PREFIXES = ("sk-proj-", "sk-svcacct-", "sk-admin-")
ANTHROPIC_HOST = "api.anthropic.com"


def host_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}"


def cross_route_problems(routes: Mapping[str, Route], same_gateway: bool) -> dict[str, list[str]]:
    """Problems by provider name; a route that does not appear has none."""
    found: dict[str, list[str]] = {}
    openai, anthropic = routes.get("openai"), routes.get("anthropic")
    if openai is not None and not openai.replay_only and openai.api_key:
        if openai.api_key.startswith(ANTHROPIC_KEY_PREFIX) and urlsplit(openai.base_url).hostname != ANTHROPIC_HOST:
            found.setdefault("openai", []).append(
                f"${openai.key_env} holds an Anthropic key (sk-ant-...), but the OpenAI route goes to "
                f"{openai.base_url}; export it as ANTHROPIC_API_KEY for the Anthropic route, and put the OpenAI "
                f"(or gateway) key in ${openai.key_env}"
            )
    if anthropic is not None and not anthropic.replay_only and anthropic.api_key:
        key = anthropic.api_key
        if urlsplit(anthropic.base_url).hostname == ANTHROPIC_HOST and (
            key.startswith(OPENAI_KEY_PREFIXES) or (key.startswith("sk-") and not key.startswith(ANTHROPIC_KEY_PREFIX))
        ):
            found.setdefault("anthropic", []).append(
                f"${anthropic.key_env} holds an OpenAI-style key (sk-..., not sk-ant-...), but the Anthropic route "
                f"goes to {anthropic.base_url}, which only accepts Anthropic keys; export the OpenAI key as "
                f"OPENAI_API_KEY and the Anthropic one as ${anthropic.key_env}"
            )
    if same_gateway and openai is not None and anthropic is not None:
        a, b = host_of(openai.base_url), host_of(anthropic.base_url)
        if a != b:
            text = (
                f"--consistency-same-gateway: the OpenAI route goes to {a} ({openai.base_url_source}) but the "
                f"Anthropic route to {b} ({anthropic.base_url_source}); point OPENAI_BASE_URL (with /v1) and "
                "ANTHROPIC_BASE_URL (without /v1) at the same gateway"
            )
            found.setdefault("openai", []).append(text)
            found.setdefault("anthropic", []).append(text)
    return found
