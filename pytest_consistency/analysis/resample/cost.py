"""What live samples will spend, said before it is spent: estimated from the recording of steps STEP..end.

Why from the recording: a sample replays steps 1..STEP-1 for free and makes the calls the source repetition made
from step STEP on; their recorded token counts are the best estimate there is before the first live call (a
sample that takes another branch may make more or fewer). Pure functions of recorded exchanges.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CostEstimate:
    """Calls and tokens of one sample (the recording of steps STEP..end), and of the live samples of the session."""

    calls_per_sample: int
    tokens_per_sample: int
    live_samples: int

    @property
    def calls(self) -> int:
        return self.calls_per_sample * self.live_samples

    @property
    def tokens(self) -> int:
        return self.tokens_per_sample * self.live_samples

    def sentence(self) -> str:
        if self.live_samples == 0:
            return "every sample replays its committed cassette: no live call, no token spent"
        return (
            f"{self.live_samples} sample(s) go live: about {self.calls} call(s) and {self.tokens} token(s) "
            f"({self.calls_per_sample} call(s) and {self.tokens_per_sample} token(s) each, as recorded for these steps)"
        )


def _usage_total(usage: Any) -> int:
    if not isinstance(usage, dict):
        return 0
    total = usage.get("total_tokens")
    if isinstance(total, int) and not isinstance(total, bool):
        return total
    parts = ("prompt_tokens", "completion_tokens", "input_tokens", "output_tokens")
    return sum(v for k in parts if isinstance(v := usage.get(k), int) and not isinstance(v, bool))


def _documents(text: str) -> list[Any]:
    """The JSON documents of a response body: the body itself, or each ``data:`` event of a stream."""
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    found = []
    for line in text.splitlines():
        if line.startswith("data:"):
            try:
                found.append(json.loads(line[5:].strip()))
            except ValueError:
                continue
    return found


def recorded_tokens(interaction: dict[str, Any]) -> int:
    """Total tokens of one recorded exchange, from the usage its response reported (0 when it reported none).

    Chat Completions and Responses (``usage.total_tokens``), the Messages API (``input_tokens`` and
    ``output_tokens``, streamed in ``message_start`` and ``message_delta``), JSON or SSE."""
    body = (interaction.get("response") or {}).get("body") or {}
    text = body.get("string") if isinstance(body, dict) else body
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        return 0
    documents = _documents(text)
    if len(documents) == 1 and isinstance(documents[0], dict):
        return _usage_total(documents[0].get("usage"))
    best = 0
    anthropic = 0
    for doc in documents:
        if not isinstance(doc, dict):
            continue
        usage = doc.get("usage") or (doc.get("response") or {}).get("usage") or (doc.get("message") or {}).get("usage")
        if doc.get("type") in ("message_start", "message_delta"):
            anthropic += _usage_total(usage)
        else:
            best = max(best, _usage_total(usage))
    return anthropic or best


def estimate(source: list[dict[str, Any]], step: int, live_samples: int) -> CostEstimate:
    """The cost of ``live_samples`` samples of ``step``, from ``source``'s recorded exchanges ``step``..end."""
    tail = source[step - 1 :]
    return CostEstimate(len(tail), sum(recorded_tokens(i) for i in tail), live_samples)
