"""The OpenAI route: ``openai.OpenAI`` / ``AsyncOpenAI`` on any OpenAI-compatible API (OpenAI, gateways, local).

Supports openai 2.x (httpx) and 3.x (httpx2): the transport is built from whichever module the SDK's
``DefaultHttpxClient`` derives from, so vcrpy and the class-level observer see the same classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pytest_consistency.route.providers import Conversation, http_module_of, import_sdk

if TYPE_CHECKING:
    from pytest_consistency.model.trajectory import Message
    from pytest_consistency.route.providers.openai_decisions import ChatReader, ResponsesReader
    from pytest_consistency.route.route import Route

PROMPT = "reply OK"


@dataclass(frozen=True)
class OpenAIProvider:
    """The OpenAI API as a provider: its SDK, default base URL, key variables and endpoints."""

    name: str = "openai"
    sdk: str = "openai"
    default_base_url: str = "https://api.openai.com/v1"
    key_envs: tuple[str, ...] = ("OPENAI_API_KEY",)
    base_url_env: str = "OPENAI_BASE_URL"
    model_env: str | None = None
    sampling_endpoints: tuple[str, ...] = ("/chat/completions", "/responses", "/completions")
    defaults: tuple[str, ...] = ("model", "temperature", "seed", "max_tokens")

    def asked(self, path: str, body: dict[str, Any]) -> tuple[Message, ...]:
        from pytest_consistency.route.providers.openai_decisions import chat_asked, responses_asked

        return responses_asked(body) if path.endswith("/responses") else chat_asked(body)

    def decision_reader(self, path: str) -> ResponsesReader | ChatReader:
        from pytest_consistency.route.providers.openai_decisions import ChatReader, ResponsesReader

        return ResponsesReader() if path.endswith("/responses") else ChatReader()

    def conversation(self, path: str, body: dict[str, Any]) -> Conversation | None:
        from pytest_consistency.route.providers.openai_decisions import is_assistant, is_model_item, new_from

        if path.endswith("/responses"):
            items = body.get("input")
            turns = [items] if isinstance(items, str) else items
            return Conversation("input", turns, new_from(turns, is_model_item)) if isinstance(turns, list) else None
        messages = body.get("messages")
        if isinstance(messages, list):
            return Conversation("messages", messages, new_from(messages, is_assistant))
        prompt = body.get("prompt")
        return Conversation("prompt", [prompt], 0) if prompt is not None else None

    def path_problem(self, path: str, shown: str, source: str) -> str | None:
        if path.rstrip("/"):
            return None
        return (
            f"base URL {shown!r} (from {source}) has no API path; OpenAI-compatible APIs usually live "
            f"under /v1, e.g. {shown.rstrip('/')}/v1"
        )

    def http_module(self, is_async: bool) -> ModuleType:
        openai = import_sdk("openai", "openai")
        return http_module_of(openai.DefaultAsyncHttpxClient if is_async else openai.DefaultHttpxClient)

    def client(self, route: Route, transport: Any, is_async: bool) -> Any:
        openai = import_sdk("openai", "openai")
        http_class = openai.DefaultAsyncHttpxClient if is_async else openai.DefaultHttpxClient
        client_class = openai.AsyncOpenAI if is_async else openai.OpenAI
        return client_class(
            api_key=route.api_key,
            base_url=route.base_url,
            timeout=route.timeout,
            max_retries=route.max_retries,
            http_client=http_class(transport=transport, timeout=route.timeout),
        )

    def preflight(self, route: Route, client: Any) -> str | None:
        import openai

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
            return f"preflight: cannot connect to {where} ({cause(exc)}); check the base URL and that the server runs"
        except openai.APIStatusError as exc:
            return f"preflight: {where} answered {exc.status_code} to a minimal request; check the route"
        finally:
            client.close()
        return None


def cause(exc: Any) -> str:
    found = exc.__cause__ or exc.__context__
    return type(found).__name__ if found else type(exc).__name__


PROVIDER = OpenAIProvider()
