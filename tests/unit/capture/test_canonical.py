"""capture.canonical: two requests of the same question canonicalise alike, and any real difference survives."""

from __future__ import annotations

import copy
import json
from typing import Any

from cause_records import chat, chat_after_tool

from pytest_consistency.capture.canonical import sent_of
from pytest_consistency.cassette.match_rules import compile_rules, normalise
from pytest_consistency.model.cause import MAX_PART_TEXT
from pytest_consistency.route.providers import builtin

OPENAI = builtin("openai")
ANTHROPIC = builtin("anthropic")
CHAT, RESPONSES, MESSAGES = "http://h/v1/chat/completions", "http://h/v1/responses", "http://h/v1/messages"


def sent(body: dict[str, Any], url: str = CHAT, normalize: Any = None) -> Any:
    provider = ANTHROPIC if url == MESSAGES else OPENAI
    assert provider is not None
    return sent_of(provider, url, copy.deepcopy(body), normalize, url)


def test_key_order_and_generated_ids_do_not_change_the_digest() -> None:
    first = chat("s")
    a = chat_after_tool(first, "call_abc", "42")
    b = json.loads(json.dumps(chat_after_tool(first, "call_xyz", "42")))
    b = dict(reversed(list(b.items())))
    assert sent(a)[0] == sent(b)[0]


def test_the_id_numbering_keeps_which_result_answers_which_call() -> None:
    body = chat("s")
    body["messages"] += [
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "A", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "B", "type": "function", "function": {"name": "g", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "A", "content": "fa"},
        {"role": "tool", "tool_call_id": "B", "content": "gb"},
    ]
    swapped = copy.deepcopy(body)
    swapped["messages"][3]["tool_call_id"], swapped["messages"][4]["tool_call_id"] = "B", "A"
    assert sent(body)[0].digest != sent(swapped)[0].digest  # f's result given to g is another request
    labels = [label for label, _ in sent(body)[0].new]
    assert labels == ["the tool result of f", "the tool result of g"]


def test_a_real_difference_survives_and_is_located() -> None:
    a, texts_a = sent(chat("Now: 09:13"))
    b, _ = sent(chat("Now: 09:26"))
    assert a.digest != b.digest and a.standing == b.standing and a.history == b.history == ""
    assert [label for label, _ in a.new] == ["the system message", "the user turn"]
    assert a.new[0][1] != b.new[0][1] and a.new[1] == b.new[1]
    assert texts_a[a.new[0][1]] == "Now: 09:13"


def test_what_the_cassette_matching_ignores_is_left_out() -> None:
    rules = compile_rules(("metadata.request_id", r"re:\d\d:\d\d"))
    a = dict(chat("Now: 09:13"), metadata={"request_id": "r1"})
    b = dict(chat("Now: 09:26"), metadata={"request_id": "r2"})
    assert sent(a)[0].digest != sent(b)[0].digest
    matched = lambda body, url: normalise(body, rules, url)  # noqa: E731
    assert sent(a, normalize=matched)[0].digest == sent(b, normalize=matched)[0].digest


def test_sampling_parameters_are_recorded_as_sent() -> None:
    assert sent(chat("s", temperature=0.7, seed=3, top_p=1))[0].sampling == (
        ("temperature", "0.7"),
        ("top_p", "1"),
        ("seed", "3"),
    )
    assert sent(chat("s"))[0].sampling == ()


def test_responses_chains_and_opaque_reasoning_are_normalised() -> None:
    def body(previous: str, call_id: str, item: str, secret: str) -> dict[str, Any]:
        return {
            "model": "m",
            "previous_response_id": previous,
            "input": [
                {"type": "reasoning", "id": item, "encrypted_content": secret},
                {"type": "function_call", "id": "fc_" + item, "call_id": call_id, "name": "search", "arguments": "{}"},
                {"type": "function_call_output", "call_id": call_id, "output": "42"},
            ],
        }

    a, _ = sent(body("resp_1", "c1", "rs_1", "xyz"), RESPONSES)
    b, _ = sent(body("resp_9", "c9", "rs_9", "abc"), RESPONSES)
    assert a.digest == b.digest
    assert [label for label, _ in a.new] == ["the tool result of search"]


def test_anthropic_tool_use_and_results_are_normalised() -> None:
    def body(call_id: str, result: str) -> dict[str, Any]:
        return {
            "model": "m",
            "system": "You are a bookkeeper.",
            "max_tokens": 8,
            "messages": [
                {"role": "user", "content": "total?"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": call_id, "name": "search", "input": {"id": 3}}],
                },
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}]},
            ],
        }

    a, texts = sent(body("toolu_1", "42"), MESSAGES)
    assert a == sent(body("toolu_2", "42"), MESSAGES)[0]
    c, _ = sent(body("toolu_1", "41"), MESSAGES)
    assert c.new != a.new and c.history == a.history and c.standing == a.standing
    assert a.new[0][0] == "the tool result of search"
    assert texts[dict(a.standing)["system"]] == "You are a bookkeeper."


def test_a_legacy_prompt_is_one_turn_and_long_texts_are_cut_but_digested_whole() -> None:
    long = "x" * (MAX_PART_TEXT + 50)
    a, texts = sent({"model": "m", "prompt": long + "1"}, "http://h/v1/completions")
    b, _ = sent({"model": "m", "prompt": long + "2"}, "http://h/v1/completions")
    assert a.new[0][0] == "the prompt" and a.new[0][1] != b.new[0][1]
    assert len(texts[a.new[0][1]]) <= MAX_PART_TEXT
