"""What a call to an OpenAI API asked and decided, read from its request body and its response (JSON or streamed):
the trajectory model's messages and decisions. Apart from the provider (``openai``), which every session
configures at start-up: this module and the trajectory model load when a call is first read.
"""

from __future__ import annotations

from typing import Any

from pytest_consistency.model.trajectory import Decision, Message, ToolCall, content_text, message, normalise_arguments


def new_from(items: list[Any], is_turn: Any) -> int:
    """The index after the last item ``is_turn`` (the model's own previous turn): where what is new starts."""
    for index in range(len(items) - 1, -1, -1):
        if is_turn(items[index]):
            return index + 1
    return 0


def _since_last(items: list[Any], is_turn: Any) -> list[Any]:
    """The items after the last one ``is_turn`` (the model's own previous turn): what is new at this step."""
    return items[new_from(items, is_turn) :]


def is_assistant(item: Any) -> bool:
    return isinstance(item, dict) and item.get("role") == "assistant"


def chat_asked(body: dict[str, Any]) -> tuple[Message, ...]:
    """Chat Completions: the messages after the last assistant message (tool results included); a legacy
    completion's prompt."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        prompt = body.get("prompt")
        return (message("user", prompt),) if isinstance(prompt, str) else ()
    new = _since_last(messages, is_assistant)
    return tuple(message(m.get("role"), m.get("content"), m.get("tool_call_id")) for m in new if isinstance(m, dict))


def is_model_item(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    return item.get("role") == "assistant" or item.get("type") in ("function_call", "reasoning")


def responses_asked(body: dict[str, Any]) -> tuple[Message, ...]:
    """Responses API: the input items after the model's last item (all of them when the request chains on
    ``previous_response_id``), function call outputs as tool messages; the instructions on a first step."""
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        return ()
    new = _since_last(items, is_model_item)
    asked = []
    instructions = body.get("instructions")
    if len(new) == len(items) and isinstance(instructions, str) and not body.get("previous_response_id"):
        asked.append(message("system", instructions))
    for item in new:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output":
            asked.append(message("tool", content_text(item.get("output")), item.get("call_id")))
        else:
            asked.append(message(item.get("role"), item.get("content")))
    return tuple(asked)


def _tool_call(name: Any, arguments: Any, call_id: Any) -> ToolCall:
    return ToolCall(str(name or ""), normalise_arguments(arguments), str(call_id) if call_id else None)


class _Reader:
    """What both OpenAI readers share: a whole decision from a JSON body or a final event (``final``), else one
    assembled from what streamed (``assembled``), else none when nothing of the API's shape was seen."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.seen = False
        self.final: Decision | None = None

    def assembled(self) -> Decision:
        raise NotImplementedError

    def result(self) -> Decision | None:
        if self.final is not None:
            return self.final
        return self.assembled() if self.seen else None


class ChatReader(_Reader):
    """The decision of a Chat Completions (or legacy completions) response: choice 0's text, tool calls, refusal
    and finish reason, from the JSON body or assembled from the streamed deltas (tool calls by their index)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[int, list[Any]] = {}  # index -> [id, name, argument pieces]
        self.stop: str | None = None

    def body(self, data: dict[str, Any]) -> None:
        choice = _first_choice(data)
        self.seen = True
        if choice is None:
            return
        msg = choice.get("message")
        if not isinstance(msg, dict):  # a legacy completion
            text = choice.get("text")
            self.final = Decision.of(text if isinstance(text, str) else "", stop_reason=choice.get("finish_reason"))
            return
        calls = [c for c in msg.get("tool_calls") or () if isinstance(c, dict)]
        legacy = msg.get("function_call")
        if isinstance(legacy, dict):
            calls.append({"function": legacy})
        tool_calls = tuple(
            _tool_call((c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments"), c.get("id"))
            for c in calls
        )
        refusal = msg.get("refusal")
        self.final = Decision.of(
            content_text(msg.get("content")),
            tool_calls,
            choice.get("finish_reason"),
            refusal if isinstance(refusal, str) else None,
        )

    def event(self, data: dict[str, Any]) -> None:
        choices = data.get("choices")
        if not isinstance(choices, list):
            return
        self.seen = True
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason"):
                self.stop = str(choice["finish_reason"])
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                text = choice.get("text")  # a streamed legacy completion
                if isinstance(text, str):
                    self.text.append(text)
                continue
            if isinstance(delta.get("content"), str):
                self.text.append(delta["content"])
            if isinstance(delta.get("refusal"), str):
                self.refusal.append(delta["refusal"])
            for position, call in enumerate(delta.get("tool_calls") or ()):
                if isinstance(call, dict):
                    self._call_delta(call, position)

    def _call_delta(self, call: dict[str, Any], position: int) -> None:
        index = call.get("index", position)
        held = self.calls.setdefault(index if isinstance(index, int) else position, [None, "", []])
        if call.get("id"):
            held[0] = call["id"]
        function = call.get("function")
        if isinstance(function, dict):
            if isinstance(function.get("name"), str):
                held[1] += function["name"]
            if isinstance(function.get("arguments"), str):
                held[2].append(function["arguments"])

    def assembled(self) -> Decision:
        calls = tuple(
            _tool_call(name, "".join(args), call_id) for _, (call_id, name, args) in sorted(self.calls.items())
        )
        return Decision.of("".join(self.text), calls, self.stop, "".join(self.refusal) or None)


def _first_choice(data: dict[str, Any]) -> dict[str, Any] | None:
    choices = data.get("choices")
    if not isinstance(choices, list):
        return None
    for choice in choices:
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            return choice
    return None


class ResponsesReader(_Reader):
    """The decision of a Responses API response: its message text, function calls and refusal, and its status
    (or the reason it is incomplete); streamed, the final ``response.*`` event carries it all, and before one
    arrives the deltas and finished items are assembled."""

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[int, dict[str, Any]] = {}

    def body(self, data: dict[str, Any]) -> None:
        self.seen = True
        self.final = responses_decision(data)

    def event(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if not isinstance(kind, str) or not kind.startswith("response."):
            return
        self.seen = True
        response = data.get("response")
        if kind in ("response.completed", "response.incomplete", "response.failed") and isinstance(response, dict):
            self.final = responses_decision(response)
        elif kind == "response.output_text.delta" and isinstance(data.get("delta"), str):
            self.text.append(data["delta"])
        elif kind == "response.refusal.delta" and isinstance(data.get("delta"), str):
            self.refusal.append(data["delta"])
        elif kind in ("response.output_item.added", "response.output_item.done") and isinstance(data.get("item"), dict):
            item = dict(data["item"])
            if kind == "response.output_item.added" and item.get("type") == "function_call":
                item["arguments"] = item.get("arguments") or ""
            self.items[int(data.get("output_index") or 0)] = item
        elif kind == "response.function_call_arguments.delta" and isinstance(data.get("delta"), str):
            held = self.items.get(int(data.get("output_index") or 0))
            if held is not None and held.get("type") == "function_call":
                held["arguments"] = str(held.get("arguments") or "") + data["delta"]

    def assembled(self) -> Decision:
        calls = tuple(
            _tool_call(item.get("name"), item.get("arguments"), item.get("call_id"))
            for _, item in sorted(self.items.items())
            if item.get("type") == "function_call"
        )
        return Decision.of("".join(self.text), calls, None, "".join(self.refusal) or None)


def responses_decision(response: dict[str, Any]) -> Decision:
    """The decision in a Responses API response object (``output`` items)."""
    text, refusal, calls = [], [], []
    for item in response.get("output") or ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call":
            calls.append(_tool_call(item.get("name"), item.get("arguments"), item.get("call_id")))
        elif kind == "message":
            for part in item.get("content") or ():
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                    refusal.append(part["refusal"])
                elif isinstance(part.get("text"), str):
                    text.append(part["text"])
        elif isinstance(kind, str) and kind.endswith("_call"):  # a built-in tool (web_search_call, ...)
            calls.append(_tool_call(kind.removesuffix("_call"), item.get("action") or {}, item.get("id")))
    details = response.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    status = response.get("status")
    return Decision.of(
        " ".join(text), tuple(calls), reason or (status if isinstance(status, str) else None), " ".join(refusal) or None
    )
