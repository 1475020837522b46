"""What a sampling call sent, canonicalised, so two repetitions' requests compare on what the agent asked.

Two requests of the same question differ byte for byte in ways nobody chose: JSON keys in another order, and ids
the SDK or the API generated for this run (tool-call ids, Responses item ids, ``previous_response_id``, the
encrypted reasoning a model hands back). The canonical request sorts keys, numbers each id in order of first
appearance (``<id1>``: a tool result still points at the call it answers), blanks opaque model output, and leaves
out what the user's cassette matching ignores (``--consistency-match-ignore``, the ``normalize_request`` hook: a
field declared not part of the question is not part of the cause either). What remains differs only where the
agent asked something else.

:func:`sent_of` returns the digests (:class:`~pytest_consistency.model.cause.Sent`) and the texts of the parts, cut,
keyed by digest; the call record keeps both. The whole request is never stored: a 20-step conversation resends
its history at every step, so only each step's new turns and standing fields are kept, and once per repetition.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from pytest_consistency.model.cause import MAX_PART_TEXT, Sent
from pytest_consistency.model.trajectory import Decision, ToolCall, clip, normalise_arguments
from pytest_consistency.route.providers import Provider

#: Keys whose string value is an id generated per run (a tool call's, an item's, the one a tool result answers).
ID_KEYS = frozenset({"id", "call_id", "tool_call_id", "tool_use_id"})
#: Keys whose value is opaque model output handed back (encrypted reasoning, a thinking block's signature).
OPAQUE_KEYS = frozenset({"encrypted_content", "signature"})
#: Keys inside a turn that hold the model's own arguments: compared as its decision, never rewritten here.
ARGUMENT_KEYS = frozenset({"arguments", "input"})
#: Top-level fields that name the previous response of a chained conversation (an id of this run).
CHAIN_KEYS = frozenset({"previous_response_id"})
#: The sampling parameters recorded as sent (a parameter absent from the body was not sent).
SAMPLING_KEYS = (
    "temperature",
    "top_p",
    "top_k",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "n",
    "reasoning_effort",
    "reasoning",
    "thinking",
)

Normalizer = Callable[[Any, str], Any]


def canonical_text(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace; values JSON cannot hold as their ``str``."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _key_text(key: str) -> str:
    """A key as :func:`canonical_text` writes it inside an object."""
    return json.dumps(key, ensure_ascii=False)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _numbered(value: Any, ids: dict[str, str]) -> Any:
    """``value`` (a turn, or a part of one) with its ids numbered and opaque fields blanked."""
    if isinstance(value, list):
        return [_numbered(item, ids) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in ID_KEYS and isinstance(item, str):
            out[key] = ids.setdefault(item, f"<id{len(ids) + 1}>")
        elif key in OPAQUE_KEYS and isinstance(item, str):
            out[key] = "<opaque>"
        elif key in ARGUMENT_KEYS:
            out[key] = item
        else:
            out[key] = _numbered(item, ids)
    return out


def _tool_names(turns: list[Any]) -> dict[str, str]:
    """Numbered call id -> tool name, from the model's turns (chat ``tool_calls``, Responses ``function_call``
    items, Anthropic ``tool_use`` blocks)."""
    names: dict[str, str] = {}
    for turn in turns:
        if not isinstance(turn, dict):
            continue
        calls = [c for c in turn.get("tool_calls") or () if isinstance(c, dict)]
        for call in calls:
            function = call.get("function")
            if isinstance(function, dict) and isinstance(call.get("id"), str):
                names[call["id"]] = str(function.get("name") or "")
        if turn.get("type") == "function_call" and isinstance(turn.get("call_id"), str):
            names[turn["call_id"]] = str(turn.get("name") or "")
        content = turn.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                names[block["id"]] = str(block.get("name") or "")
    return names


#: What stands for a model's turn sent back in the request as the agent's own (``Sent.own``).
MODEL_TURN = canonical_text("<model turn>")
#: Parts of a message's content that hold the model's text.
TEXT_PARTS = frozenset({"text", "output_text"})
#: Content blocks that are the model's tool calls (Anthropic's ``tool_use``, a server tool's).
TOOL_BLOCKS = frozenset({"tool_use", "server_tool_use"})


def is_model_turn(turn: Any) -> bool:
    """A turn the model wrote, sent back: an assistant message, or a Responses output item (a function or built-in
    tool call, a reasoning item)."""
    if not isinstance(turn, dict):
        return False
    kind = turn.get("type")
    if turn.get("role") == "assistant" or kind == "reasoning":
        return True
    return isinstance(kind, str) and kind.endswith("_call")


def model_turns(turns: list[Any], items: bool) -> list[tuple[int, int]]:
    """The ``[start, end)`` ranges of the model's turns among ``turns``: each assistant message, or with ``items``
    (the Responses API, whose output is a list of items) each run of consecutive output items."""
    found: list[tuple[int, int]] = []
    for index, turn in enumerate(turns):
        if not is_model_turn(turn):
            continue
        if items and found and found[-1][1] == index:
            found[-1] = (found[-1][0], index + 1)
        else:
            found.append((index, index + 1))
    return found


def words_of(turns: list[Any]) -> Decision:
    """The words of one of the model's turns sent back: the text, tool calls and refusal a decision is read from,
    joined as the response's reader joins them (what :meth:`Decision.words` digests)."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    refusals: list[str] = []
    for turn in turns:
        kind = turn.get("type")
        if kind == "function_call":
            calls.append(ToolCall(str(turn.get("name") or ""), normalise_arguments(turn.get("arguments"))))
        elif isinstance(kind, str) and kind.endswith("_call"):  # a built-in tool's call (web_search_call, ...)
            calls.append(ToolCall(kind.removesuffix("_call"), normalise_arguments(turn.get("action") or {})))
        content = turn.get("content")
        for part in [content] if isinstance(content, str) else content if isinstance(content, list) else ():
            if isinstance(part, str):
                texts.append(part)
            elif not isinstance(part, dict):
                continue
            elif part.get("type") in TEXT_PARTS and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                refusals.append(part["refusal"])
            elif part.get("type") in TOOL_BLOCKS:
                calls.append(ToolCall(str(part.get("name") or ""), normalise_arguments(part.get("input") or {})))
        functions = [c.get("function") for c in turn.get("tool_calls") or () if isinstance(c, dict)]
        functions.append(turn.get("function_call"))  # the legacy single call
        for function in functions:
            if isinstance(function, dict):
                calls.append(ToolCall(str(function.get("name") or ""), normalise_arguments(function.get("arguments"))))
        if isinstance(turn.get("refusal"), str):
            refusals.append(turn["refusal"])
    return Decision.of(" ".join(texts), tuple(calls), None, " ".join(refusals) or None)


def turn_label(turn: Any, names: dict[str, str]) -> str:
    """How a new turn is named: ``the user turn``, ``the tool result of search``, ``the system message``."""
    if not isinstance(turn, dict):
        return "the prompt"
    answered = turn.get("tool_call_id") or turn.get("call_id")
    content = turn.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                answered = block.get("tool_use_id")
                break
    if answered is not None or turn.get("role") == "tool" or turn.get("type") == "function_call_output":
        name = names.get(str(answered)) if answered is not None else None
        return f"the tool result of {name}" if name else "a tool result"
    role = turn.get("role") or turn.get("type") or "input"
    return f"the {role} message" if role in ("system", "developer") else f"the {role} turn"


def _text(value: Any) -> str:
    return clip(value if isinstance(value, str) else canonical_text(value), MAX_PART_TEXT)


def sent_of(
    provider: Provider, path: str, body: dict[str, Any], normalize: Normalizer | None = None, url: str = ""
) -> tuple[Sent, dict[str, str]]:
    """The canonical digests of a sampling request, and the texts of its standing fields and new turns (by digest).

    ``normalize`` is the cassette matching's (``--consistency-match-ignore`` and the ``normalize_request`` hook);
    what it leaves out is left out here.
    """
    if normalize is not None:
        changed = normalize(body, url)
        if isinstance(changed, dict):
            body = changed
    conversation = provider.conversation(path, body)
    ids: dict[str, str] = {}
    turns: list[Any] = []
    new_at = 0
    names: dict[str, str] = {}
    if conversation is not None:
        turns = _numbered(conversation.turns, ids)
        new_at = conversation.new
        names = _tool_names(turns)
    texts: dict[str, str] = {}
    standing = []
    whole: dict[str, Any] = {}
    # Each turn and field is written as canonical JSON once; the texts of the history and of the whole request are
    # joined from them (JSON's own separators, keys sorted: the same text as dumping them whole, at half the cost).
    turn_texts = [canonical_text(turn) for turn in turns]
    fields: list[str] = []
    for key in sorted(body):
        if conversation is not None and key == conversation.key:
            whole[key] = turns
            fields.append(f"{_key_text(key)}:[{','.join(turn_texts)}]")
            continue
        value = "<response id>" if key in CHAIN_KEYS and isinstance(body[key], str) else body[key]
        whole[key] = value
        text = canonical_text(value)
        fields.append(f"{_key_text(key)}:{text}")
        part = digest(text)
        standing.append((key, part))
        if part not in texts:
            texts[part] = clip(value if isinstance(value, str) else text, MAX_PART_TEXT)
    new = []
    for turn, text in zip(turns[new_at:], turn_texts[new_at:], strict=True):
        part = digest(text)
        new.append((turn_label(turn, names), part))
        texts.setdefault(part, _text(turn.get("content", turn) if isinstance(turn, dict) else turn))
    sampling = tuple((key, canonical_text(body[key])) for key in SAMPLING_KEYS if key in body)
    keyed = all(isinstance(key, str) for key in whole)  # else JSON's own key conversion applies: dump it whole
    own = ""
    model: tuple[tuple[str, str], ...] = ()
    ranges = model_turns(turns, path.endswith("/responses")) if conversation is not None else []
    if ranges and keyed:
        # The model's turns apart (``model``: their words, and each turn whole) and the rest as the agent sent it
        # (``own``): the cause compares the words with what the repetition's model wrote, and when they are, holds
        # the turns as the model's decisions. No turn is written again: the placeholder stands in its text.
        own_texts = list(turn_texts)
        pairs = []
        for start, end in reversed(ranges):
            words = words_of(turns[start:end]).words()
            pairs.append((words, digest("[" + ",".join(turn_texts[start:end]) + "]")))
            own_texts[start:end] = [MODEL_TURN]
        own_fields = [
            f"{_key_text(key)}:[{','.join(own_texts)}]" if conversation is not None and key == conversation.key else f
            for key, f in zip(sorted(body), fields, strict=True)
        ]
        own, model = digest("{" + ",".join(own_fields) + "}"), tuple(reversed(pairs))
    sent = Sent(
        digest=digest("{" + ",".join(fields) + "}" if keyed else canonical_text(whole)),
        standing=tuple(standing),
        history=digest("[" + ",".join(turn_texts[:new_at]) + "]") if new_at else "",
        new=tuple(new),
        sampling=sampling,
        own=own,
        model=model,
    )
    return sent, texts
