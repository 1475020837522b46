"""The cost estimate against known recordings (token counts as the APIs report them)."""

from __future__ import annotations

import json
from typing import Any

from pytest_consistency.analysis.resample.cost import CostEstimate, estimate, recorded_tokens


def exchange(body: str) -> dict[str, Any]:
    return {"request": {"method": "POST", "uri": "u"}, "response": {"body": {"string": body}}}


CHAT = exchange(json.dumps({"choices": [], "usage": {"prompt_tokens": 70, "completion_tokens": 3, "total_tokens": 73}}))
RESPONSES = exchange(json.dumps({"output": [], "usage": {"input_tokens": 9, "output_tokens": 4, "total_tokens": 13}}))
MESSAGES = exchange(json.dumps({"content": [], "usage": {"input_tokens": 20, "output_tokens": 5}}))
STREAM = exchange(
    'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n'
    'data: {"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":2,"total_tokens":13}}\n\ndata: [DONE]\n\n'
)
ANTHROPIC_STREAM = exchange(
    'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":30,"output_tokens":1}}}\n\n'
    'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"x"}}\n\n'
    'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":6}}\n\n'
)


def test_recorded_tokens_of_each_api() -> None:
    assert recorded_tokens(CHAT) == 73
    assert recorded_tokens(RESPONSES) == 13
    assert recorded_tokens(MESSAGES) == 25
    assert recorded_tokens(STREAM) == 13
    assert recorded_tokens(ANTHROPIC_STREAM) == 31 + 6
    assert recorded_tokens(exchange("not json")) == 0
    assert recorded_tokens({"request": {}, "response": {"status": {"code": 500}}}) == 0


def test_estimate_counts_steps_from_step_to_the_end_times_the_live_samples() -> None:
    source = [CHAT, RESPONSES, MESSAGES, STREAM]  # 73, 13, 25, 13 tokens
    cost = estimate(source, step=2, live_samples=4)
    assert cost == CostEstimate(calls_per_sample=3, tokens_per_sample=51, live_samples=4)
    assert (cost.calls, cost.tokens) == (12, 204)
    assert "4 sample(s) go live: about 12 call(s) and 204 token(s)" in cost.sentence()
    assert estimate(source, step=1, live_samples=1).tokens == 124
    assert estimate(source, step=4, live_samples=0).sentence().startswith("every sample replays")
