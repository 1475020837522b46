"""Which failures are the setup's, not the agent's: recognised by class through the exception chain."""

from __future__ import annotations

import pytest

from pytest_consistency.analysis.answers import NormalizeError
from pytest_consistency.analysis.infrastructure import call_reason, exception_reason
from pytest_consistency.capture.network import NetworkBlocked
from pytest_consistency.cassette.messages import CassetteError, SecretInCassetteError
from pytest_consistency.model.records import CallRecord
from pytest_consistency.shared.ledger import TokenBudgetExceeded


def raised_from(inner: BaseException) -> BaseException:
    """What an SDK raises around our transport's error (openai: APIConnectionError from it)."""
    try:
        try:
            raise inner
        except BaseException as exc:
            raise ConnectionError("Connection error.") from exc
    except ConnectionError as outer:
        return outer


@pytest.mark.parametrize(
    "exc, reason",
    [
        (SecretInCassetteError("refusing to write rep-2.yaml"), "cassette write refused"),
        (CassetteError("cassette rep-1.yaml is not a valid cassette"), "cassette unreadable"),
        (TokenBudgetExceeded("budget"), "token budget"),
        (NetworkBlocked("blocked"), "replay tried to reach the network"),
        (NormalizeError("hook raised"), "normalize_answer raised"),
    ],
)
def test_each_setup_failure_is_recognised_directly_and_when_wrapped(exc: BaseException, reason: str) -> None:
    assert reason in str(exception_reason(exc))
    assert reason in str(exception_reason(raised_from(exc)))


def test_the_agents_own_failures_are_not_the_setups() -> None:
    assert exception_reason(AssertionError("wrong answer")) is None
    assert exception_reason(RuntimeError("agent crashed")) is None
    assert exception_reason(None) is None


def test_a_refused_or_unanswered_call_counts_even_when_the_agent_caught_it() -> None:
    call = CallRecord("POST", "/v1/chat/completions", "http://h/v1", None, "m", error="replay_mismatch")
    assert "replay mismatch" in str(call_reason([call]))
    assert call_reason([CallRecord("POST", "/x", "b", None, "m", error="timeout")]) is None


def test_a_repetition_none_of_whose_calls_reached_the_route_is_the_setups() -> None:
    from pytest_consistency.analysis.infrastructure import unreachable_line, unreachable_reason
    from pytest_consistency.model.records import CANNOT_CONNECT, CallRecord, RepetitionResult

    def call(error: str | None = None, status: int | None = None) -> CallRecord:
        detail = CANNOT_CONNECT if error == "connection" else None
        url, base = "http://h:1/v1/chat/completions", "http://h:1/v1"
        return CallRecord("POST", url, base, None, "m", error=error, status=status, detail=detail)

    assert (
        unreachable_reason([call("connection"), call("connection")])
        == "cannot reach http://h:1/v1 (2 connection errors)"
    )
    assert unreachable_reason([call(status=401)]) == "cannot reach http://h:1/v1 (1 answered 401)"
    assert unreachable_reason([call("connection"), call(status=200)]) is None  # one call got through: the agent's
    assert unreachable_reason([call("timeout")]) is None  # slow is not unreachable
    closed = CallRecord("POST", "http://h:1/v1/chat/completions", "http://h:1/v1", None, "m", error="connection")
    assert unreachable_reason([closed]) is None  # a client's own error (a closed event loop): the agent's
    assert unreachable_reason([]) is None
    reps = [
        RepetitionResult(
            "t",
            "t[rep1]",
            1,
            2,
            2,
            1.0,
            outcome="failed",
            infrastructure="cannot reach x",
            calls=[call("connection")] * 2,
        ),
        RepetitionResult(
            "u", "u[rep1]", 1, 2, 2, 1.0, outcome="failed", infrastructure="cannot reach x", calls=[call("connection")]
        ),
    ]
    assert unreachable_line(reps) == (
        "cannot reach http://h:1/v1 (3 connection errors) in 2 repetitions of 2 tasks; check the base URL "
        "(and the key) or run with --consistency-preflight"
    )
