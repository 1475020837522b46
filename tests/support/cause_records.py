"""Call records of agents whose repetitions part for a known reason, built from real request bodies.

Each record goes through what capture does to a request (``capture.canonical.sent_of`` with the built-in
provider of its API), so the cause analysis sees the digests and texts a session would give it. Used by the unit
tests of ``analysis.cause`` and by the benchmark of its cost.
"""

from __future__ import annotations

import copy
from typing import Any

from pytest_consistency.capture.canonical import sent_of
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.trajectory import Decision, ToolCall
from pytest_consistency.route.providers import builtin

PATHS = {"chat": "/chat/completions", "responses": "/responses", "anthropic": "/v1/messages"}


def tool(name: str, arguments: str = "{}", call_id: str = "call_1") -> Decision:
    return Decision.of("", (ToolCall(name, arguments, call_id),), "tool_calls")


def text(answer: str) -> Decision:
    return Decision.of(answer, stop_reason="stop")


def call(
    body: dict[str, Any],
    decision: Decision | None,
    api: str = "chat",
    status: int = 200,
    error: str | None = None,
    normalize: Any = None,
    **route: Any,
) -> CallRecord:
    """One attempt: ``body`` as sent, canonicalised as capture does; ``decision`` None for a failed attempt."""
    provider = "anthropic" if api == "anthropic" else "openai"
    path = PATHS[api]
    record = CallRecord(
        method="POST",
        url=f"http://127.0.0.1:9/v1{path}" if api != "anthropic" else f"http://127.0.0.1:9{path}",
        base_url=route.pop("base_url", "http://127.0.0.1:9/v1"),
        key_fingerprint=route.pop("key", "sha256:aaaa"),
        model_requested=body.get("model"),
        model_served=route.pop("served", body.get("model")),
        status=status,
        error=error,
        decision=decision if status < 400 and error is None else None,
        provider=provider,
        gateway=route.pop("gateway", {}),
        **route,
    )
    found = builtin(provider)
    assert found is not None
    record.sent, record.texts = sent_of(found, record.url, copy.deepcopy(body), normalize, record.url)
    return record


def repetition(
    task: str,
    repeat: int,
    calls: list[CallRecord],
    passed: bool,
    answer: Any = None,
    n: int = 5,
    min_pass: float = 0.0,
) -> RepetitionResult:
    """A scored repetition of ``task`` (of ``n``, with ``min_pass``) with its calls; texts kept once per repetition,
    as capture keeps them."""
    kept: set[str] = set()
    for record in calls:
        record.texts = {k: v for k, v in record.texts.items() if k not in kept}
        kept.update(record.texts)
    return RepetitionResult(
        task_id=task,
        nodeid=f"test_agent.py::test_agent[{task}-rep{repeat}]",
        repeat=repeat,
        n=n,
        k=n,
        min_pass=min_pass,
        outcome="passed" if passed else "failed",
        answer_recorded=answer is not None,
        answer=answer,
        normalized=answer,
        calls=calls,
    )


def chat(system: str, user: str = "total for march?", **sampling: Any) -> dict[str, Any]:
    """A first chat request with a tool list."""
    return {
        "model": "gpt-test",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "tools": [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}],
        **sampling,
    }


def chat_after_tool(first: dict[str, Any], call_id: str, result: str, name: str = "search") -> dict[str, Any]:
    """The second chat request: ``first`` plus the model's tool call (id ``call_id``) and the tool's result."""
    body = copy.deepcopy(first)
    body["messages"] += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]
    return body


def two_steps(
    system: str = "You are a bookkeeper.",
    result: str = "42 invoices",
    answer: str = "total-42",
    call_id: str = "call_1",
    **sampling: Any,
) -> list[CallRecord]:
    """A tool call, its result, an answer: two chat steps."""
    first = chat(system, **sampling)
    return [
        call(first, tool("search", call_id=call_id)),
        call(chat_after_tool(first, call_id, result), text(answer)),
    ]


def three_steps(
    result: str = "42 invoices",
    final: Decision | None = None,
    system: str = "You are a bookkeeper.",
    **sampling: Any,
) -> list[CallRecord]:
    """A search, its ``result``, a sum, its result, then ``final`` (the answer ``total-42`` unless given): three chat
    steps. The tool result of step 2's request is ``result``; the one of step 3's is always the same."""
    first = chat(system, **sampling)
    second = chat_after_tool(first, "call_1", result)
    third = chat_after_tool(second, "call_2", "march total: 42", name="sum")
    return [
        call(first, tool("search", call_id="call_1")),
        call(second, tool("sum", call_id="call_2")),
        call(third, final or text("total-42")),
    ]


def timed(record: CallRecord, started: float, latency_ms: float) -> CallRecord:
    """``record`` sent at ``started`` (epoch seconds) and answered ``latency_ms`` later, as capture (or a cassette)
    records it."""
    record.started_at, record.latency_ms = started, latency_ms
    return record


def question(city: str, api: str = "chat") -> dict[str, Any]:
    """One of the questions a forecaster agent sends together (threads, ``asyncio.gather``), in ``api``'s shape."""
    system, user = "You are a forecaster.", f"weather in {city}?"
    if api == "responses":
        return {"model": "m", "instructions": system, "input": [{"role": "user", "content": user}]}
    if api == "anthropic":
        return {"model": "m", "system": system, "max_tokens": 8, "messages": [{"role": "user", "content": user}]}
    return {"model": "m", "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}


def summary_request(forecasts: dict[str, str], api: str = "chat") -> dict[str, Any]:
    """The request that follows the questions: their answers, in the agent's own (sorted) order."""
    body = question("all", api)
    line = "; ".join(f"{city}: {forecasts[city]}" for city in sorted(forecasts))
    key = "input" if api == "responses" else "messages"
    body[key][-1]["content"] = f"summarise: {line}"
    return body


def forecaster(
    order: list[str],
    forecasts: dict[str, str],
    final: str = "ok",
    api: str = "chat",
    start: float = 1000.0,
    latencies: list[float] | None = None,
    offsets: list[float] | None = None,
) -> list[CallRecord]:
    """The questions of ``order`` sent together (each ``offsets[i]`` seconds after ``start``, answered
    ``latencies[i]`` ms later: by default 1 ms apart and 200 ms long, so they overlap), recorded in the order they
    were sent, then the summary (sent after every answer came back) decided ``final``."""
    offsets = offsets if offsets is not None else [0.001 * i for i in range(len(order))]
    latencies = latencies if latencies is not None else [200.0] * len(order)
    calls = [
        timed(call(question(city, api), text(forecasts[city]), api=api), start + offset, latency)
        for city, offset, latency in zip(order, offsets, latencies, strict=True)
    ]
    ended = max(start + offset + latency / 1000 for offset, latency in zip(offsets, latencies, strict=True))
    calls.sort(key=lambda record: record.started_at or 0.0)
    calls.append(timed(call(summary_request(forecasts, api), text(final), api=api), ended + 0.01, 100.0))
    return calls


def worded(words: str, name: str = "search", call_id: str = "call_1") -> Decision:
    """A tool call the model introduced with a sentence of its own (``Let me look that up.``)."""
    return Decision.of(words, (ToolCall(name, "{}", call_id),), "tool_calls")


def first_request(api: str = "chat", system: str = "You are a bookkeeper.") -> dict[str, Any]:
    """A first request with the ``search`` tool, in ``api``'s shape."""
    if api == "responses":
        tools: list[dict[str, Any]] = [{"type": "function", "name": "search", "parameters": {"type": "object"}}]
        return {
            "model": "m",
            "instructions": system,
            "input": [{"role": "user", "content": "total for march?"}],
            "tools": tools,
        }
    if api == "anthropic":
        tools = [{"name": "search", "input_schema": {"type": "object"}}]
        return {
            "model": "m",
            "system": system,
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "total for march?"}],
            "tools": tools,
        }
    return chat(system)


def resent(
    first: dict[str, Any], words: str, result: str = "42 invoices", api: str = "chat", call_id: str = "call_1"
) -> dict[str, Any]:
    """The next request: ``first`` plus the model's turn sent back as the model wrote it (its ``words`` and its
    ``search`` call), then the tool's result, in ``api``'s shape."""
    body = copy.deepcopy(first)
    if api == "responses":
        body["input"] += [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": words}]},
            {"type": "function_call", "call_id": call_id, "name": "search", "arguments": "{}"},
            {"type": "function_call_output", "call_id": call_id, "output": result},
        ]
    elif api == "anthropic":
        body["messages"] += [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": words},
                    {"type": "tool_use", "id": call_id, "name": "search", "input": {}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}]},
        ]
    else:
        body["messages"] += [
            {
                "role": "assistant",
                "content": words,
                "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "search", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": call_id, "content": result},
        ]
    return body


def chatty(
    words: str,
    answer: str = "total-42",
    api: str = "chat",
    result: str = "42 invoices",
    sent_back: str | None = None,
    call_id: str = "call_1",
) -> list[CallRecord]:
    """Two steps: the model calls ``search`` with a sentence of its own (``words``), the agent sends its turn back
    (``sent_back``: what it sent back of the sentence, when not the sentence itself) with the tool's result, the
    model answers ``answer``."""
    first = first_request(api)
    later = resent(first, words if sent_back is None else sent_back, result, api, call_id)
    return [call(first, worded(words, call_id=call_id), api=api), call(later, text(answer), api=api)]


def embedding(model: str = "embed", **route: Any) -> CallRecord:
    """An embeddings call (not a sampling call: nothing is decided, nothing canonicalised), as capture records it."""
    return CallRecord(
        method="POST",
        url="http://127.0.0.1:9/v1/embeddings",
        base_url=route.pop("base_url", "http://127.0.0.1:9/v1"),
        key_fingerprint=route.pop("key", "sha256:aaaa"),
        model_requested=model,
        model_served=model,
        status=200,
        provider="openai",
        **route,
    )
