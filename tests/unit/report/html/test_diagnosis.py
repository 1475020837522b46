"""The HTML report's diagnosis (report.html.diagnosis): where two repetitions' calls first differ."""

from __future__ import annotations

import copy

from pytest_consistency.model.records import CallRecord
from pytest_consistency.report.html.diagnosis import first_difference

BASE = "http://127.0.0.1:8765/v1"


def call(path: str = "/chat/completions", tokens: int = 10, status: int = 200, model: str = "m-1") -> CallRecord:
    return CallRecord(
        method="POST",
        url=BASE + path,
        base_url=BASE,
        key_fingerprint="sha256:abcd1234",
        model_requested="m-1",
        model_served=model,
        status=status,
        latency_ms=12.5,
        prompt_tokens=tokens,
        completion_tokens=2,
        total_tokens=tokens + 2,
    )


def test_first_difference() -> None:
    a = [call("/completions"), call()]
    assert first_difference(a, copy.deepcopy(a)) is None
    assert first_difference(a, a[:1]) == 1
    assert first_difference(a, [call("/completions"), call(tokens=11)]) == 1
    assert first_difference(a, [call("/embeddings")]) == 0
    assert first_difference([], []) is None
