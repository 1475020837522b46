"""What a call to the Anthropic Messages API asked and decided, read from its request body and its response (JSON
or streamed). Apart from the provider (``anthropic``), which every session configures at start-up: this module and
the trajectory model load when a call is first read.
"""

from __future__ import annotations

from typing import Any

from pytest_consistency.model.trajectory import Decision, Message, ToolCall, content_text, message, normalise_arguments


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
