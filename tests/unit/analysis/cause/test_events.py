"""analysis.cause.events: a repetition as steps (route of its attempts, what it sent, its decision) and trailing
attempts; how two steps' routes differ."""

from __future__ import annotations

from cause_records import call, chat, text, tool, two_steps

from pytest_consistency.analysis.cause.events import attempt_route, route_kinds, run_of, step_route


def routes(calls: list) -> tuple:
    return step_route([attempt_route(c) for c in calls])


def test_a_step_gathers_its_failed_attempts_and_the_calls_after_the_last_step_trail() -> None:
    first = chat("You are a bookkeeper.")
    failed = call(first, None, status=429, error="rate limited")
    calls = [failed, *two_steps(), call(first, None, status=500, error="server error")]
    run = run_of(1, calls, ["a", "b"], False, None)
    assert len(run.steps) == 2
    assert len(run.steps[0].route) == 2 and len(run.steps[1].route) == 1
    assert len(run.trailing) == 1
    assert run.steps[0].sent == calls[1].sent and run.steps[0].decision == "a"
    assert run.texts  # the texts of what it sent, by digest


def test_a_retried_429_differs_in_retries_and_errors_not_in_the_model_served() -> None:
    first = chat("You are a bookkeeper.")
    once = [call(first, tool("search"))]
    # as capture records a 429: no model served (the response named none)
    retried = [call(first, None, status=429, error="rate limited", served=None), call(first, tool("search"))]
    assert route_kinds(routes(once), routes(retried)) == ["retries", "errors"]


def test_another_model_served_is_named() -> None:
    first = chat("You are a bookkeeper.")
    assert route_kinds(routes([call(first, text("a"))]), routes([call(first, text("a"), served="gpt-other")])) == [
        "model_served"
    ]


def test_a_non_sampling_call_counted_once_whatever_its_repeats() -> None:
    first = chat("You are a bookkeeper.")
    embedding = call({"model": "embed", "input": "x"}, None)
    embedding.sent = None
    once = [embedding, call(first, text("a"))]
    twice = [embedding, embedding, call(first, text("a"))]
    assert routes(once[:1]) == routes(twice[:2])
