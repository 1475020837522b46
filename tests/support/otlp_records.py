"""Call and repetition records for the span tests (tests/unit/report/otlp/test_*.py): a successful chat completion
attempt and a repetition holding calls, each field overridable."""

from __future__ import annotations

from typing import Any

from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.trajectory import Decision

CHAT = "https://api.example.test/v1/chat/completions"


def call(**fields: Any) -> CallRecord:
    """A successful chat completion attempt; ``fields`` override."""
    base: dict[str, Any] = {
        "method": "POST",
        "url": CHAT,
        "base_url": CHAT.removesuffix("/chat/completions"),
        "key_fingerprint": "sha256:abcd1234",
        "model_requested": "gpt-test",
        "model_served": "gpt-test-2025",
        "status": 200,
        "prompt_tokens": 11,
        "completion_tokens": 5,
        "total_tokens": 16,
        "latency_ms": 250.0,
        "decision": Decision.of("red", stop_reason="stop"),
    }
    base.update(fields)
    return CallRecord(**base)


def rep(
    task: str,
    repeat: int,
    calls: list[CallRecord] | None = None,
    outcome: str = "passed",
    n: int = 3,
    **fields: Any,
) -> RepetitionResult:
    """Repetition ``repeat`` of ``task`` (node id ``test_agent.py::test_agent[task-repN]``)."""
    return RepetitionResult(
        task_id=task,
        nodeid=f"test_agent.py::test_agent[{task}-rep{repeat}]",
        repeat=repeat,
        n=n,
        k=n,
        min_pass=1.0,
        outcome=outcome,
        calls=calls or [],
        **fields,
    )
