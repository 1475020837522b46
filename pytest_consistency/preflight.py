"""One minimal request before the first test, so a broken route costs one call instead of n x tasks."""

from __future__ import annotations

from typing import Any

from .clients import build_client
from .route import Route

PROMPT = "reply OK"


def preflight(route: Route) -> str | None:
    """Return None when the route answers, else a message that says what to fix."""
    import openai

    client = build_client(route, ledger=None)
    client = client.with_options(max_retries=0)
    model = route.model or "gpt-4o-mini"
    where = f"{route.base_url} (from {route.base_url_source})"
    try:
        client.chat.completions.create(model=model, messages=[{"role": "user", "content": PROMPT}], max_tokens=8)
    except openai.AuthenticationError:
        return (
            f"preflight: {where} rejected the API key (401, key {route.key_fingerprint}); "
            f"set ${route.key_env} to a valid key for this base URL"
        )
    except openai.PermissionDeniedError:
        return f"preflight: {where} refused the key (403): the key lacks access to model {model!r} or this project"
    except openai.NotFoundError:
        return (
            f"preflight: {where} answered 404 for model {model!r}: check the base URL (the API URL, usually "
            "ending in /v1, not a website URL) and the model id (--consistency-model)"
        )
    except openai.RateLimitError:
        return f"preflight: {where} is rate limiting (429): lower concurrency (-n) or wait, then run again"
    except openai.APITimeoutError:
        return (
            f"preflight: no answer from {where} within {route.timeout:g}s; raise --consistency-timeout or "
            "check the server"
        )
    except openai.APIConnectionError as exc:
        return f"preflight: cannot connect to {where} ({_cause(exc)}); check the base URL and that the server runs"
    except openai.APIStatusError as exc:
        return f"preflight: {where} answered {exc.status_code} to a minimal request; check the route"
    finally:
        client.close()
    return None


def _cause(exc: Any) -> str:
    cause = exc.__cause__ or exc.__context__
    return type(cause).__name__ if cause else type(exc).__name__
