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

from pytest_consistency.model.trajectory import Decision, Message, ToolCall, content_text, message, normalise_arguments
from pytest_consistency.route.providers import Conversation, http_module_of, import_sdk
from pytest_consistency.route.providers.openai import PROMPT, cause

if TYPE_CHECKING:
    from pytest_consistency.route.route import Route

#: The model a preflight asks for when the route names none.
PREFLIGHT_MODEL = "claude-3-5-haiku-latest"


@dataclass(frozen=True)
class AnthropicProvider:
    name: str = "anthropic"
    sdk: str = "anthropic"
    default_base_url: str = "https://api.anthropic.com"
    key_envs: tuple[str, ...] = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY")
    base_url_env: str = "ANTHROPIC_BASE_URL"
    model_env: str | None = "ANTHROPIC_MODEL"
    sampling_endpoints: tuple[str, ...] = ("/v1/messages",)
    defaults: tuple[str, ...] = ("model", "temperature")

    def asked(self, path: str, body: dict[str, Any]) -> tuple[Message, ...]:
        return messages_asked(body)

    def decision_reader(self, path: str) -> MessagesReader:
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


def messages_asked(body: dict[str, Any]) -> tuple[Message, ...]:
    """The messages after the last assistant message, each tool_result block a tool message of its own; the
    system prompt on a first step."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ()
    last = max((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"), default=-1)
    asked = []
    if last < 0 and body.get("system"):
        asked.append(message("system", body["system"]))
    for item in messages[last + 1 :]:
        if not isinstance(item, dict):
            continue
        content = item.get("content")
        blocks = content if isinstance(content, list) else [content]
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        others = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        asked.extend(message("tool", content_text(b.get("content")), b.get("tool_use_id")) for b in results)
        if others:
            asked.append(message(item.get("role"), others))
    return tuple(asked)


def _tool_use(block: dict[str, Any], arguments: Any) -> ToolCall:
    call_id = block.get("id")
    return ToolCall(str(block.get("name") or ""), normalise_arguments(arguments), str(call_id) if call_id else None)


class MessagesReader:
    """The decision of a Messages API response: text blocks, tool_use blocks (streamed ``input_json_delta``
    pieces assembled per block index) and the stop reason (``refusal`` is the API's refusal)."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.pieces: dict[int, list[str]] = {}
        self.stop: str | None = None
        self.seen = False
        self.final: Decision | None = None

    def body(self, data: dict[str, Any]) -> None:
        if data.get("type") != "message" and "content" not in data:
            return
        self.seen = True
        blocks = [b for b in data.get("content") or () if isinstance(b, dict)]
        stop = data.get("stop_reason")
        self.final = _decision(blocks, {}, stop if isinstance(stop, str) else None)

    def event(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        index = data.get("index")
        if kind == "message_start":
            self.seen = True
        elif kind == "content_block_start" and isinstance(index, int) and isinstance(data.get("content_block"), dict):
            self.seen = True
            self.blocks[index] = dict(data["content_block"])
        elif kind == "content_block_delta" and isinstance(index, int) and isinstance(data.get("delta"), dict):
            delta = data["delta"]
            block = self.blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                block["text"] = str(block.get("text") or "") + delta["text"]
            elif delta.get("type") == "input_json_delta" and isinstance(delta.get("partial_json"), str):
                self.pieces.setdefault(index, []).append(delta["partial_json"])
        elif kind == "message_delta" and isinstance(data.get("delta"), dict):
            stop = data["delta"].get("stop_reason")
            if isinstance(stop, str):
                self.stop = stop

    def result(self) -> Decision | None:
        if self.final is not None:
            return self.final
        if not self.seen:
            return None
        ordered = [self.blocks[i] for i in sorted(self.blocks)]
        pieces = {id(self.blocks[i]): "".join(p) for i, p in self.pieces.items() if i in self.blocks}
        return _decision(ordered, pieces, self.stop)


def _decision(blocks: list[dict[str, Any]], streamed: dict[int, str], stop: str | None) -> Decision:
    text, calls = [], []
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            text.append(block["text"])
        elif kind in ("tool_use", "server_tool_use"):
            arguments = streamed[id(block)] if id(block) in streamed else block.get("input") or {}
            calls.append(_tool_use(block, arguments))
    joined = " ".join(text)
    refusal = (joined or "refused") if stop == "refusal" else None
    return Decision.of("" if refusal else joined, tuple(calls), stop, refusal)


PROVIDER = AnthropicProvider()
