"""The Anthropic route: ``anthropic.Anthropic`` / ``AsyncAnthropic`` on the Messages API (Anthropic or a gateway).

The anthropic SDK appends ``/v1/messages`` to its base URL itself, so an Anthropic base URL has no ``/v1``
(``ANTHROPIC_BASE_URL=https://api.anthropic.com``), the reverse of an OpenAI one. A token from
``ANTHROPIC_AUTH_TOKEN`` is sent as ``Authorization: Bearer`` (gateways), one from ``ANTHROPIC_API_KEY`` as the
SDK's ``api_key``. The Messages API takes no ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pytest_consistency.route.providers import Conversation, http_module_of, import_sdk
from pytest_consistency.route.providers.openai import PROMPT, cause

if TYPE_CHECKING:
    from pytest_consistency.model.trajectory import Message
    from pytest_consistency.route.providers.anthropic_decisions import MessagesReader
    from pytest_consistency.route.route import Route

#: The model a preflight asks for when the route names none.
PREFLIGHT_MODEL = "claude-3-5-haiku-latest"


@dataclass(frozen=True)
class AnthropicProvider:
    """The Anthropic API as a provider: its SDK, default base URL, key variables and endpoints."""

    name: str = "anthropic"
    sdk: str = "anthropic"
    default_base_url: str = "https://api.anthropic.com"
    key_envs: tuple[str, ...] = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY")
    base_url_env: str = "ANTHROPIC_BASE_URL"
    model_env: str | None = "ANTHROPIC_MODEL"
    sampling_endpoints: tuple[str, ...] = ("/v1/messages",)
    defaults: tuple[str, ...] = ("model", "temperature", "max_tokens")

    def asked(self, path: str, body: dict[str, Any]) -> tuple[Message, ...]:
        from pytest_consistency.route.providers.anthropic_decisions import messages_asked

        return messages_asked(body)

    def decision_reader(self, path: str) -> MessagesReader:
        from pytest_consistency.route.providers.anthropic_decisions import MessagesReader

        return MessagesReader()

    def conversation(self, path: str, body: dict[str, Any]) -> Conversation | None:
        messages = body.get("messages")
        if not isinstance(messages, list):
            return None
        assistant = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"]
        return Conversation("messages", messages, assistant[-1] + 1 if assistant else 0)

    def path_problem(self, path: str, shown: str, source: str) -> str | None:
        trimmed = path.rstrip("/")
        for suffix in ("/v1/messages", "/v1"):
            if trimmed.endswith(suffix):
                fixed = shown.rstrip("/")[: -len(suffix)]
                return (
                    f"Anthropic base URL {shown!r} (from {source}) ends in {suffix}, but the anthropic SDK appends "
                    f"/v1/messages itself (requests would go to {suffix}/v1/messages); use {fixed}"
                )
        return None

    def http_module(self, is_async: bool) -> ModuleType:
        anthropic = import_sdk("anthropic", "anthropic")
        return http_module_of(anthropic.DefaultAsyncHttpxClient if is_async else anthropic.DefaultHttpxClient)

    def client(self, route: Route, transport: Any, is_async: bool) -> Any:
        anthropic = import_sdk("anthropic", "anthropic")
        http_class = anthropic.DefaultAsyncHttpxClient if is_async else anthropic.DefaultHttpxClient
        client_class = anthropic.AsyncAnthropic if is_async else anthropic.Anthropic
        key = {"auth_token": route.api_key} if route.key_env == "ANTHROPIC_AUTH_TOKEN" else {"api_key": route.api_key}
        return client_class(
            **key,
            base_url=route.base_url,
            timeout=route.timeout,
            max_retries=route.max_retries,
            http_client=http_class(transport=transport, timeout=route.timeout),
        )

    def preflight(self, route: Route, client: Any) -> str | None:
        import anthropic

        model = route.model or PREFLIGHT_MODEL
        where = f"{route.base_url} (from {route.base_url_source})"
        try:
            client.messages.create(model=model, max_tokens=8, messages=[{"role": "user", "content": PROMPT}])
        except anthropic.AuthenticationError:
            return (
                f"preflight: {where} rejected the token (401, key {route.key_fingerprint}); "
                f"set ${route.key_env} to a valid token for this base URL"
            )
        except anthropic.PermissionDeniedError:
            return f"preflight: {where} refused the token (403): it lacks access to model {model!r}"
        except anthropic.NotFoundError:
            return (
                f"preflight: {where} answered 404 for model {model!r}: check the base URL (without /v1: the SDK "
                "adds /v1/messages) and the model id (--consistency-anthropic-model or ANTHROPIC_MODEL)"
            )
        except anthropic.RateLimitError:
            return f"preflight: {where} is rate limiting (429): lower --consistency-concurrency or wait, then run again"
        except anthropic.APITimeoutError:
            return f"preflight: no answer from {where} within {route.timeout:g}s; raise --consistency-timeout"
        except anthropic.APIConnectionError as exc:
            return f"preflight: cannot connect to {where} ({cause(exc)}); check the base URL and that the server runs"
        except anthropic.APIStatusError as exc:
            overloaded = " (overloaded_error: the API is overloaded; try again later)" if exc.status_code == 529 else ""
            return f"preflight: {where} answered {exc.status_code}{overloaded} to a minimal request; check the route"
        finally:
            client.close()
        return None


PROVIDER = AnthropicProvider()
