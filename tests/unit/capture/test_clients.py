"""The sampling defaults the pinned clients send, per API (capture.clients)."""

from __future__ import annotations

from pytest_consistency.capture.clients import defaults_of
from pytest_consistency.route.route import Route


def test_sampling_defaults_follow_what_each_api_accepts() -> None:
    route = Route("http://h/v1", None, "m", 60, 1, temperature=0.0, seed=7, max_tokens=64)
    assert defaults_of(route) == {"model": "m", "temperature": 0.0, "seed": 7, "max_tokens": 64}
    anthropic = Route("http://h", None, "m", 60, 1, temperature=0.0, seed=7, provider="anthropic")
    # the Messages API takes no seed; an unset limit is no default (the transport adds only what is set)
    assert defaults_of(anthropic) == {"model": "m", "temperature": 0.0, "max_tokens": None}
