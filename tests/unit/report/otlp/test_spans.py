"""The span records of a session (report/otlp/spans.py, pure): ids derived from the run and each span's place, the
parent chain task -> repetition -> call, the attributes of each level, and the times a waterfall is drawn from.

Summaries come from hand-made call and repetition records through ``build_summary`` (and the cause summaries of
issue 28); the properties at the end hold over many generated sessions.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from cause_records import repetition as cause_repetition
from cause_records import two_steps
from cause_summaries import cause_summary
from hypothesis import given, settings
from hypothesis import strategies as st
from otlp_records import call, rep

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.cause import Sent
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import RunFacts, SessionSummary
from pytest_consistency.model.trajectory import Decision, Message, ToolCall
from pytest_consistency.report.otlp.spans import SpanRecord, run_id_of, session_spans, trace_id_of

T0 = 1_750_000_000.0  # a fixed epoch second, so every time below is exact
NOW = 1_760_000_000.0  # the clock given to session_spans: only spans with no time at all use it


def summary_of(reps: list[RepetitionResult], run_id: str | None = "run-1", shard: str | None = None) -> SessionSummary:
    return build_summary(reps, run=RunFacts(run_id=run_id, shard=shard))


def spans_of(summary: SessionSummary, **kwargs: Any) -> list[SpanRecord]:
    return session_spans(summary, now=NOW, **kwargs)


def by_name(spans: list[SpanRecord], name: str) -> list[SpanRecord]:
    return [s for s in spans if s.name == name]


def task_span(spans: list[SpanRecord], task: str) -> SpanRecord:
    (found,) = [s for s in spans if s.parent_id is None and s.attributes["consistency.task.id"] == task]
    return found


def children(spans: list[SpanRecord], parent: SpanRecord) -> list[SpanRecord]:
    return [s for s in spans if s.trace_id == parent.trace_id and s.parent_id == parent.span_id]


def ns(seconds: float) -> int:
    return round(seconds * 1e9)


# --- ids and parents --------------------------------------------------------------------------------------------


def three_tasks() -> list[RepetitionResult]:
    reps = []
    for task in ("alpha", "beta", "gamma"):
        for r in (1, 2, 3):
            reps.append(rep(task, r, [call(started_at=T0 + r), call(started_at=T0 + r + 0.5)]))
    return reps


def test_a_task_is_one_trace_whose_id_is_derived_from_the_run_and_the_task() -> None:
    spans = spans_of(summary_of(three_tasks()))
    for task in ("alpha", "beta", "gamma"):
        head = task_span(spans, task)
        assert head.trace_id == trace_id_of("run-1", task)
        assert head.name == f"task {task}"
        assert {s.trace_id for s in spans if s.attributes.get("consistency.task.id") == task} == {head.trace_id}
    assert len({s.trace_id for s in spans}) == 3
    assert 0 < trace_id_of("run-1", "alpha") < 2**128
    assert trace_id_of("run-1", "alpha") != trace_id_of("run-2", "alpha") != trace_id_of("run-1", "beta")


def test_ids_are_the_same_every_time_and_change_with_the_run() -> None:
    first = spans_of(summary_of(three_tasks()))
    again = spans_of(summary_of(three_tasks()))
    assert [(s.trace_id, s.span_id, s.parent_id) for s in first] == [
        (s.trace_id, s.span_id, s.parent_id) for s in again
    ]
    other = spans_of(summary_of(three_tasks(), run_id="run-2"))
    assert not {s.span_id for s in first} & {s.span_id for s in other}
    assert not {s.trace_id for s in first} & {s.trace_id for s in other}
    assert all(0 < s.span_id < 2**64 for s in first)


def test_the_shards_of_a_run_share_a_tasks_trace_and_its_repetition_and_call_ids() -> None:
    """Each shard exports its own task span (its id names the shard), under the one trace of the task; a repetition's
    and a call's ids depend on their place only, so the unsharded session gives them the same ids."""
    reps = three_tasks()
    whole = spans_of(summary_of(reps))
    one = spans_of(summary_of([r for r in reps if r.repeat < 3], shard="1/2"))
    two = spans_of(summary_of([r for r in three_tasks() if r.repeat == 3], shard="2/2"))
    for task in ("alpha", "beta", "gamma"):
        heads = [task_span(spans, task) for spans in (whole, one, two)]
        assert len({h.trace_id for h in heads}) == 1
        assert len({h.span_id for h in heads}) == 3
        assert heads[1].attributes["consistency.shard"] == "1/2" and "consistency.shard" not in heads[0].attributes
    below = {(s.trace_id, s.span_id, s.name) for s in whole if s.parent_id is not None}
    assert below == {(s.trace_id, s.span_id, s.name) for s in one + two if s.parent_id is not None}


def test_the_parent_chain_is_task_repetition_call() -> None:
    spans = spans_of(summary_of(three_tasks()))
    assert len(spans) == 3 * (1 + 3 * (1 + 2))
    for task in ("alpha", "beta", "gamma"):
        head = task_span(spans, task)
        reps = children(spans, head)
        assert [s.name for s in reps] == ["repetition 1", "repetition 2", "repetition 3"]
        assert all(s.kind == "internal" for s in [head, *reps])
        for r in reps:
            calls = children(spans, r)
            assert [c.name for c in calls] == ["chat gpt-test", "chat gpt-test"]
            assert all(c.kind == "client" and not children(spans, c) for c in calls)
    assert len({s.span_id for s in spans}) == len(spans)


def test_a_report_without_a_run_id_gets_one_derived_from_its_tasks() -> None:
    summary = summary_of(three_tasks(), run_id=None)
    run_id = run_id_of(summary)
    assert run_id.startswith("report-")
    assert run_id == run_id_of(summary_of(list(reversed(three_tasks())), run_id=None))
    spans = spans_of(summary)
    assert task_span(spans, "alpha").trace_id == trace_id_of(run_id, "alpha")
    assert task_span(spans, "alpha").attributes["consistency.run.id"] == run_id


# --- attributes -------------------------------------------------------------------------------------------------


def test_task_spans_carry_the_verdict_the_gap_share_and_the_cause_of_an_inconsistent_task_only() -> None:
    summary = cause_summary()
    spans = spans_of(summary)
    scored = len(summary.scored_tasks)
    shares = 0.0
    for task in summary.tasks:
        attributes = task_span(spans, task.task_id).attributes
        assert attributes["consistency.task.id"] == task.task_id
        assert attributes["consistency.task.n"] == task.n == 5
        assert attributes["consistency.task.k"] == task.k
        assert attributes["consistency.task.verdict"] == task.verdict
        assert attributes["consistency.task.passes"] == task.passes
        assert attributes["consistency.task.scored"] == task.scored
        assert attributes["consistency.task.gap_pp"] == task.gap_pp
        assert attributes["consistency.task.gap_share_pp"] == pytest.approx(task.gap_pp / scored)
        assert attributes["consistency.task.pass_hat_k"] == task.pass_hat_k
        assert attributes["consistency.run.id"] == run_id_of(summary)
        shares += float(attributes["consistency.task.gap_share_pp"])  # type: ignore[arg-type]
        if task.cause is None:
            assert not any(name.startswith("consistency.task.cause") for name in attributes)
        else:
            assert attributes["consistency.task.cause"] == task.cause
            assert task.why is not None
            assert attributes["consistency.task.cause.where"] == task.why.where
            assert attributes["consistency.task.cause.repetitions"] == list(task.why.repeats)
            assert attributes.get("consistency.task.cause.kinds", []) == list(task.why.kinds)
            assert attributes.get("consistency.task.cause.step") == task.why.step
            # the finding's sentence quotes what differed (a prompt, an answer): content, only when asked
            assert "consistency.task.cause.line" not in attributes
            quoted = task_span(spans_of(summary, content=True), task.task_id).attributes
            assert quoted["consistency.task.cause.line"] == task.why.line
    assert shares == pytest.approx(summary.consistency_gap_pp)  # the shares add up to the suite's gap
    found = {
        t.attributes["consistency.task.id"]: t.attributes.get("consistency.task.cause")
        for t in spans
        if not t.parent_id
    }
    assert found == {
        "answers": "outside the model",
        "clock": "input",
        "sampled": "sampling",
        "search": "environment",
        "steady": None,
    }
    assert task_span(spans, "clock").attributes["consistency.task.cause.step"] == 1
    assert task_span(spans, "search").attributes["consistency.task.cause.step"] == 2


def test_a_failed_task_and_a_failed_repetition_have_an_error_status() -> None:
    reps = [
        rep("t", 1, [call(started_at=T0)]),
        rep("t", 2, [call(started_at=T0 + 5)], outcome="failed", message="AssertionError: blue != red"),
        rep("t", 3, [call(started_at=T0 + 9)]),
    ]
    spans = spans_of(summary_of(reps))
    head = task_span(spans, "t")
    assert head.attributes["consistency.task.verdict"] == "fail"
    assert head.error == "task verdict: fail"
    r1, r2, r3 = children(spans, head)
    assert (r1.error, r2.error, r3.error) == (None, "failed", None)  # the assertion's message can quote an answer
    assert r2.attributes["consistency.repetition.outcome"] == "failed"
    r2 = children(spans_of(summary_of(reps), content=True), head)[1]
    assert r2.error == "AssertionError: blue != red"  # content on: the message


def test_repetition_spans_carry_their_outcome_answer_digest_cassette_and_replay() -> None:
    reps = [
        rep(
            "t",
            r,
            [call(started_at=T0 + r, replayed=r != 3)],
            answer_recorded=True,
            answer=f"a{r % 2}",
            normalized=f"a{r % 2}",
            cassette=f"cassettes/t/rep{r}.yaml",
            duration=0.5,
        )
        for r in (1, 2, 3)
    ]
    reps.append(rep("u", 1, [], n=1, outcome="error", infrastructure="the network is blocked in replay", duration=0.1))
    spans = spans_of(summary_of(reps))
    r1, r2, r3 = children(spans, task_span(spans, "t"))
    assert r1.attributes["consistency.repetition"] == 1
    assert r1.attributes["consistency.repetition.outcome"] == "passed"
    assert r1.attributes["consistency.repetition.calls"] == 1
    assert r1.attributes["consistency.repetition.duration_s"] == 0.5
    assert r1.attributes["consistency.repetition.cassette"] == "cassettes/t/rep1.yaml"
    assert [r.attributes["consistency.repetition.replayed"] for r in (r1, r2, r3)] == [True, True, False]
    digests = [r.attributes["consistency.repetition.answer_digest"] for r in (r1, r2, r3)]
    assert digests[0] == digests[2] != digests[1] and len(digests[0]) == 16  # type: ignore[arg-type]
    (u1,) = children(spans, task_span(spans, "u"))
    assert u1.attributes["consistency.repetition.infrastructure"] == "the network is blocked in replay"
    assert u1.attributes["consistency.repetition.replayed"] is False and u1.error is not None
    assert "consistency.repetition.answer_digest" not in u1.attributes


def test_a_repetition_that_never_ran_has_no_span() -> None:
    reps = [rep("t", 1, [call(started_at=T0)]), rep("t", 2, outcome="not run")]
    spans = spans_of(summary_of(reps))
    assert [s.name for s in children(spans, task_span(spans, "t"))] == ["repetition 1"]


def test_a_model_call_is_a_client_span_with_the_genai_attributes() -> None:
    record = call(
        url="https://api.example.test:8443/v1/chat/completions",
        started_at=T0,
        decision=Decision.of("", (ToolCall("search", '{"q": "march"}', "call_7"),), "tool_calls"),
        cache_read_tokens=4,
        cache_creation_tokens=2,
        system_fingerprint="fp_1",
        route_key="openai:https://api.example.test/v1",
        wait_ms=12.5,
        gateway={"x-litellm-model-id": "abc"},
    )
    spans = spans_of(summary_of([rep("t", 1, [record], n=1)]))
    (span,) = [s for s in spans if s.kind == "client"]
    assert span.name == "chat gpt-test"
    assert span.error is None
    assert span.attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.response.model": "gpt-test-2025",
        "gen_ai.response.finish_reasons": ["tool_calls"],
        "gen_ai.usage.input_tokens": 11,
        "gen_ai.usage.output_tokens": 5,
        "gen_ai.usage.cache_read.input_tokens": 4,
        "gen_ai.usage.cache_creation.input_tokens": 2,
        "openai.response.system_fingerprint": "fp_1",
        "server.address": "api.example.test",
        "server.port": 8443,
        "http.request.method": "POST",
        "http.response.status_code": 200,
        "consistency.call.base_url": "https://api.example.test/v1",
        "consistency.call.retry_index": 0,
        "consistency.call.replayed": False,
        "consistency.call.pinned": True,
        "consistency.call.timing": "measured",
        "consistency.step": 1,
        "consistency.call.key_fingerprint": "sha256:abcd1234",
        "consistency.call.route_key": "openai:https://api.example.test/v1",
        "consistency.call.wait_ms": 12.5,
        "consistency.gateway.litellm-model-id": "abc",
    }
    assert not any("sk-" in str(value) for value in span.attributes.values())


def test_other_operations_and_providers_are_named_by_the_endpoint() -> None:
    calls = [
        call(url="https://api.anthropic.test/v1/messages", provider="anthropic", model_requested="claude-x",
             started_at=T0),
        call(url="https://api.example.test/v1/embeddings", model_requested="embed-1", decision=None, started_at=T0 + 1),
        call(url="https://api.example.test/v1/responses", started_at=T0 + 2),
        call(url="https://api.example.test/v1/models", method="GET", model_requested=None, model_served=None,
             decision=None, started_at=T0 + 3),
    ]  # fmt: skip
    spans = spans_of(summary_of([rep("t", 1, calls, n=1)]))
    clients = [s for s in spans if s.kind == "client"]
    assert [s.name for s in clients] == ["chat claude-x", "embeddings embed-1", "chat gpt-test", "GET /v1/models"]
    assert clients[0].attributes["gen_ai.provider.name"] == "anthropic"
    assert clients[0].attributes["server.port"] == 443  # the scheme's port
    assert "gen_ai.operation.name" not in clients[3].attributes
    assert "gen_ai.usage.input_tokens" not in clients[3].attributes
    assert [s.attributes.get("consistency.step") for s in clients] == [1, None, 2, None]


def test_the_step_index_follows_the_trajectory_and_a_failed_attempt_belongs_to_the_step_its_retry_made() -> None:
    calls = [
        call(started_at=T0, decision=Decision.of("", (ToolCall("search", "{}", "c1"),), "tool_calls")),
        call(started_at=T0 + 1, status=429, decision=None, prompt_tokens=0, completion_tokens=0),
        call(started_at=T0 + 2, retry_index=1),
    ]
    spans = spans_of(summary_of([rep("t", 1, calls, n=1)]))
    assert [s.attributes["consistency.step"] for s in spans if s.kind == "client"] == [1, 2, 2]


def test_a_judges_and_a_simulated_users_calls_are_marked_and_are_no_step_of_the_agent() -> None:
    calls = [
        call(started_at=T0),
        call(started_at=T0 + 1, role="user"),
        call(started_at=T0 + 2),
        call(started_at=T0 + 3, role="judge", model_requested="judge-model"),
    ]
    clients = [s for s in spans_of(summary_of([rep("t", 1, calls, n=1)])) if s.kind == "client"]
    assert [s.attributes.get("consistency.call.role") for s in clients] == [None, "user", None, "judge"]
    assert [s.attributes.get("consistency.step") for s in clients] == [1, None, 2, None]
    assert clients[3].name == "chat judge-model"  # still a model call span with the GenAI attributes
    assert clients[3].attributes["gen_ai.operation.name"] == "chat"


def test_a_rejudged_tasks_span_carries_its_judge_figures_and_leaves_out_what_is_undefined() -> None:
    from pytest_consistency.analysis.judge import judge_summary

    # 3 recorded repetitions x 2 judge samples: the second's disagree (flip 1/3); "b"'s judge always passes.
    outcomes = {"a": "PPFPPP", "b": "PPPPPP"}
    reps = [
        rep(t, i, outcome="passed" if o == "P" else "failed", n=6)
        for t, p in outcomes.items()
        for i, o in enumerate(p, 1)
    ]
    summary = summary_of(reps)
    summary.judge = judge_summary(reps, samples=2)
    spans = spans_of(summary)
    a, b = (task_span(spans, t).attributes for t in ("a", "b"))
    [figures_a, figures_b] = [t.figures for t in summary.judge.tasks]
    assert figures_a.flip_interval is not None and figures_a.kappa_interval is not None
    judged = {key: value for key, value in a.items() if key.startswith("consistency.task.judge.")}
    assert judged == {
        "consistency.task.judge.samples": 2,
        "consistency.task.judge.repetitions": 3,
        "consistency.task.judge.flip_rate": 1 / 3,
        "consistency.task.judge.flip_rate_low": figures_a.flip_interval.low,
        "consistency.task.judge.flip_rate_high": figures_a.flip_interval.high,
        "consistency.task.judge.flip_rate_method": "clopper-pearson",
        "consistency.task.judge.kappa": figures_a.kappa,
        "consistency.task.judge.kappa_low": figures_a.kappa_interval.low,
        "consistency.task.judge.kappa_high": figures_a.kappa_interval.high,
        "consistency.task.judge.gap_observed_pp": figures_a.observed_gap_pp,
        "consistency.task.judge.gap_agent_pp": 0.0,
        "consistency.task.judge.gap_judge_pp": figures_a.observed_gap_pp,
    }
    # Every sample of "b" passed: kappa is undefined, so absent (never a number); the flip rate is 0.
    assert figures_b.kappa is None
    assert b["consistency.task.judge.flip_rate"] == 0.0 and "consistency.task.judge.kappa" not in b
    # Outside a rejudge session no span has one.
    plain = spans_of(summary_of(reps))
    assert not any(key.startswith("consistency.task.judge") for s in plain for key in s.attributes)


def test_a_429_attempt_and_a_timeout_are_error_spans_and_each_retry_is_a_span_of_its_own() -> None:
    calls = [
        call(started_at=T0, status=429, decision=None, latency_ms=20.0, prompt_tokens=0, completion_tokens=0,
             detail="rate limited: retry after 5 ms"),
        call(started_at=T0 + 0.1, retry_index=1, status=None, error="timeout", decision=None, latency_ms=600.0,
             prompt_tokens=0, completion_tokens=0),
        call(started_at=T0 + 0.8, retry_index=2),
    ]  # fmt: skip
    spans = spans_of(summary_of([rep("t", 1, calls, n=1)]))
    limited, timed_out, answered = [s for s in spans if s.kind == "client"]
    assert [s.attributes["consistency.call.retry_index"] for s in (limited, timed_out, answered)] == [0, 1, 2]
    assert len({limited.span_id, timed_out.span_id, answered.span_id}) == 3
    assert limited.attributes["error.type"] == "429"
    assert limited.attributes["http.response.status_code"] == 429
    assert limited.error == "429"  # the status description: the type; the detail (content) only when asked
    assert "gen_ai.usage.input_tokens" not in limited.attributes  # a failed attempt used no tokens
    assert "gen_ai.response.finish_reasons" not in limited.attributes
    assert timed_out.attributes["error.type"] == "timeout"
    assert "http.response.status_code" not in timed_out.attributes
    assert timed_out.error == "timeout"
    assert "error.type" not in answered.attributes and answered.error is None
    assert answered.attributes["gen_ai.usage.input_tokens"] == 11
    assert answered.attributes["gen_ai.response.finish_reasons"] == ["stop"]
    with_content = [s for s in spans_of(summary_of([rep("t", 1, calls, n=1)]), content=True) if s.kind == "client"]
    assert [s.error for s in with_content] == ["rate limited: retry after 5 ms", "timeout", None]


def test_the_sampling_parameters_sent_are_request_attributes() -> None:
    calls = two_steps(temperature=0.7, top_p=0.9, seed=3, presence_penalty=0.5, n=2)
    spans = spans_of(summary_of([cause_repetition("t", 1, calls, True)]))
    first = next(s for s in spans if s.kind == "client")
    assert first.attributes["gen_ai.request.temperature"] == 0.7
    assert first.attributes["gen_ai.request.top_p"] == 0.9
    assert first.attributes["gen_ai.request.seed"] == 3
    assert first.attributes["gen_ai.request.presence_penalty"] == 0.5
    assert first.attributes["gen_ai.request.choice.count"] == 2
    plain = [s for s in spans_of(summary_of([cause_repetition("u", 1, two_steps(), True)])) if s.kind == "client"]
    assert not any(
        name.startswith("gen_ai.request.") and name != "gen_ai.request.model" for name in plain[0].attributes
    )


def test_the_sampling_parameters_of_a_whole_consistent_task_survive_the_reports_round_trip() -> None:
    """A report keeps only the sampling of a task it holds whole (the lightened call's ``Sent("", sampling=...)``):
    enough for the spans of ``show --format otlp-json`` to carry the parameters the session's spans carried."""
    reps = [cause_repetition("t", r, two_steps(temperature=0.7, top_p=0.9, seed=3), True) for r in range(1, 6)]
    summary = summary_of(reps)
    back = SessionSummary.from_dict(json.loads(json.dumps(summary.to_dict())))
    (task,) = back.tasks
    assert task.verdict == "pass" and task.gap_pp == 0.0 and task.cause is None
    sent = task.repetitions[0].calls[0].sent
    assert sent == Sent("", sampling=(("temperature", "0.7"), ("top_p", "0.9"), ("seed", "3")))
    assert task.repetitions[0].calls[0].texts == {}
    original = [(s.span_id, s.attributes) for s in spans_of(summary_of(reps))]
    assert [(s.span_id, s.attributes) for s in spans_of(back)] == original
    for span in spans_of(back):
        if span.kind == "client":
            assert span.attributes["gen_ai.request.temperature"] == 0.7
            assert span.attributes["gen_ai.request.seed"] == 3


def test_the_latest_experimental_conventions_drop_gen_ai_system() -> None:
    summary = summary_of([rep("t", 1, [call(started_at=T0)], n=1)])
    (default,) = [s for s in spans_of(summary) if s.kind == "client"]
    (latest,) = [s for s in spans_of(summary, latest_only=True) if s.kind == "client"]
    assert default.attributes["gen_ai.system"] == "openai"
    assert "gen_ai.system" not in latest.attributes
    assert latest.attributes["gen_ai.provider.name"] == "openai"
    assert {k: v for k, v in default.attributes.items() if k != "gen_ai.system"} == latest.attributes


# --- content ----------------------------------------------------------------------------------------------------


def content_call() -> CallRecord:
    return call(
        started_at=T0,
        asked=(
            Message("system", "You are a bookkeeper."),
            Message("user", "total for march?"),
            Message("tool", "42 invoices", "call_1"),
        ),
        decision=Decision.of("The total is 42.", (ToolCall("search", '{"q":"march"}', "call_2"),), "tool_calls"),
    )


def test_content_is_off_by_default() -> None:
    spans = spans_of(summary_of([rep("t", 1, [content_call()], n=1)]))
    (span,) = [s for s in spans if s.kind == "client"]
    assert "gen_ai.input.messages" not in span.attributes and "gen_ai.output.messages" not in span.attributes
    text = json.dumps([s.attributes for s in spans])
    assert "bookkeeper" not in text and "42 invoices" not in text and "The total" not in text


def test_content_is_on_the_call_spans_in_the_v1_41_message_shapes() -> None:
    spans = spans_of(summary_of([rep("t", 1, [content_call()], n=1)]), content=True)
    (span,) = [s for s in spans if s.kind == "client"]
    asked = json.loads(str(span.attributes["gen_ai.input.messages"]))
    assert asked == [
        {"role": "system", "parts": [{"type": "text", "content": "You are a bookkeeper."}]},
        {"role": "user", "parts": [{"type": "text", "content": "total for march?"}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "response": "42 invoices", "id": "call_1"}]},
    ]
    answered = json.loads(str(span.attributes["gen_ai.output.messages"]))
    assert answered == [
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "The total is 42."},
                {"type": "tool_call", "name": "search", "arguments": {"q": "march"}, "id": "call_2"},
            ],
            "finish_reason": "tool_calls",
        }
    ]
    # content is on the model-call spans only
    assert not any("gen_ai.input.messages" in s.attributes for s in spans if s.kind != "client")


def test_tool_arguments_that_are_not_json_stay_text_in_the_output_message() -> None:
    record = call(started_at=T0, decision=Decision.of("", (ToolCall("run", "ls -la", None),), "tool_calls"))
    (span,) = [s for s in spans_of(summary_of([rep("t", 1, [record], n=1)]), content=True) if s.kind == "client"]
    (message,) = json.loads(str(span.attributes["gen_ai.output.messages"]))
    assert message["parts"] == [{"type": "tool_call", "name": "run", "arguments": "ls -la"}]


# --- times ------------------------------------------------------------------------------------------------------


def test_measured_calls_start_when_sent_and_last_their_latency() -> None:
    calls = [call(started_at=T0 + 0.1, latency_ms=200.0), call(started_at=T0 + 0.5, latency_ms=300.0)]
    spans = spans_of(summary_of([rep("t", 1, calls, n=1, started=T0, stopped=T0 + 1.0)]))
    head = task_span(spans, "t")
    (repetition,) = children(spans, head)
    first, second = children(spans, repetition)
    assert [c.attributes["consistency.call.timing"] for c in (first, second)] == ["measured", "measured"]
    assert (first.start_ns, first.end_ns) == (ns(T0 + 0.1), ns(T0 + 0.1 + 0.2))
    assert (second.start_ns, second.end_ns) == (ns(T0 + 0.5), ns(T0 + 0.5 + 0.3))
    assert (repetition.start_ns, repetition.end_ns) == (ns(T0), ns(T0 + 1.0))  # pytest's start and stop
    assert (head.start_ns, head.end_ns) == (repetition.start_ns, repetition.end_ns)


def test_an_estimated_call_starts_where_the_previous_one_ended() -> None:
    calls = [
        call(started_at=None, latency_ms=100.0),  # the first: at the repetition's start
        call(started_at=T0 + 0.3, latency_ms=200.0),
        call(started_at=None, latency_ms=400.0),  # after the previous call's end
        call(started_at=None, latency_ms=None),  # no latency either: a zero-length span at the previous end
    ]
    spans = spans_of(summary_of([rep("t", 1, calls, n=1, started=T0, stopped=T0 + 2.0)]))
    (repetition,) = children(spans, task_span(spans, "t"))
    c1, c2, c3, c4 = children(spans, repetition)
    assert [c.attributes["consistency.call.timing"] for c in (c1, c2, c3, c4)] == [
        "estimated",
        "measured",
        "estimated",
        "estimated",
    ]
    assert (c1.start_ns, c1.end_ns) == (ns(T0), ns(T0 + 0.1))
    assert c3.start_ns == c2.end_ns == ns(T0 + 0.5)
    assert c3.end_ns == ns(T0 + 0.9)
    assert c4.start_ns == c4.end_ns == c3.end_ns


def test_a_fully_replayed_repetition_covers_the_recorded_times_not_the_replays() -> None:
    recorded = T0 - 86_400.0  # recorded the day before the replay
    calls = [
        call(started_at=recorded, latency_ms=700.0, replayed=True),
        call(started_at=recorded + 1.0, latency_ms=900.0, replayed=True),
    ]
    spans = spans_of(summary_of([rep("t", 1, calls, n=1, started=T0, stopped=T0 + 0.01)]))
    (repetition,) = children(spans, task_span(spans, "t"))
    first, second = children(spans, repetition)
    assert [c.attributes["consistency.call.timing"] for c in (first, second)] == ["recorded", "recorded"]
    assert [c.attributes["consistency.call.replayed"] for c in (first, second)] == [True, True]
    assert (first.start_ns, second.end_ns) == (ns(recorded), ns(recorded + 1.9))
    assert (repetition.start_ns, repetition.end_ns) == (first.start_ns, second.end_ns)  # the recording's waterfall


def test_a_partly_replayed_repetition_covers_its_own_time_and_its_calls() -> None:
    recorded = T0 - 86_400.0
    calls = [
        call(started_at=recorded, latency_ms=700.0, replayed=True),
        call(started_at=None, latency_ms=100.0, replayed=True),  # a cassette that kept no start
    ]
    spans = spans_of(summary_of([rep("t", 1, calls, n=1, started=T0, stopped=T0 + 0.5)]))
    (repetition,) = children(spans, task_span(spans, "t"))
    first, second = children(spans, repetition)
    assert [c.attributes["consistency.call.timing"] for c in (first, second)] == ["recorded", "estimated"]
    assert second.start_ns == first.end_ns
    assert repetition.start_ns == ns(recorded)
    assert repetition.end_ns == ns(T0 + 0.5)


def test_a_repetition_without_calls_or_times_lasts_its_duration_from_the_clock() -> None:
    spans = spans_of(summary_of([rep("t", 1, n=1, duration=2.5)]))
    (repetition,) = children(spans, task_span(spans, "t"))
    assert (repetition.start_ns, repetition.end_ns) == (ns(NOW), ns(NOW + 2.5))


def test_a_task_covers_its_repetitions() -> None:
    reps = [
        rep("t", 1, [call(started_at=T0 + 5, latency_ms=1000.0)], started=T0 + 4.5, stopped=T0 + 6.5),
        rep("t", 2, [call(started_at=T0 + 1, latency_ms=100.0)], started=T0 + 0.9, stopped=T0 + 1.2),
        rep("t", 3, [call(started_at=T0 + 9, latency_ms=100.0)], started=T0 + 8, stopped=T0 + 12),
    ]
    spans = spans_of(summary_of(reps))
    head = task_span(spans, "t")
    assert (head.start_ns, head.end_ns) == (ns(T0 + 0.9), ns(T0 + 12))


# --- properties -------------------------------------------------------------------------------------------------

OUTCOMES = ("passed", "failed", "skipped", "error", "not run")


@st.composite
def sessions(draw: st.DrawFn) -> list[RepetitionResult]:
    """Repetition records of a few tasks: any mix of measured, replayed and unknown times, retries and failures."""
    tasks = draw(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=4, unique=True))
    reps = []
    for order, task in enumerate(tasks):
        n = draw(st.integers(1, 4))
        for repeat in range(1, n + 1):
            started = draw(st.none() | st.floats(T0, T0 + 1000))
            duration = draw(st.floats(0, 30))
            calls = []
            for index in range(draw(st.integers(0, 4))):
                status = draw(st.sampled_from([200, 200, 429, 500, None]))
                calls.append(
                    call(
                        started_at=draw(st.none() | st.floats(T0 - 86_400, T0 + 1000)),
                        latency_ms=draw(st.none() | st.floats(0, 60_000)),
                        replayed=draw(st.booleans()),
                        status=status,
                        error="timeout" if status is None else None,
                        retry_index=index if status != 200 else 0,
                        decision=Decision.of("red", stop_reason="stop") if status == 200 else None,
                    )
                )
            reps.append(
                rep(
                    task,
                    repeat,
                    calls,
                    outcome=draw(st.sampled_from(OUTCOMES)),
                    n=n,
                    order=order,
                    started=started,
                    stopped=None if started is None else started + duration,
                    duration=duration,
                )
            )
    return reps


def check_tree(spans: list[SpanRecord]) -> None:
    ids = [(s.trace_id, s.span_id) for s in spans]
    assert len(set(ids)) == len(ids)
    assert len({s.span_id for s in spans}) == len(spans)  # unique across traces too
    found = {(s.trace_id, s.span_id): s for s in spans}
    for span in spans:
        assert span.start_ns <= span.end_ns, span
        if span.parent_id is None:
            assert span.name.startswith("task ")
            continue
        parent = found.get((span.trace_id, span.parent_id))
        assert parent is not None, f"{span.name}: parent missing from its trace"
        assert parent.start_ns <= span.start_ns and span.end_ns <= parent.end_ns, (parent, span)


@settings(max_examples=60, deadline=None)
@given(reps=sessions(), run_id=st.none() | st.text(min_size=1, max_size=12), shard=st.none() | st.just("1/2"))
def test_every_span_has_its_parent_in_its_trace_covering_it_and_ids_are_unique(
    reps: list[RepetitionResult], run_id: str | None, shard: str | None
) -> None:
    spans = spans_of(summary_of(reps, run_id, shard))
    check_tree(spans)
    ran = [r for r in reps if r.outcome != "not run" or r.calls]
    assert len(spans) == len({r.task_id for r in reps}) + len(ran) + sum(len(r.calls) for r in ran)


@settings(max_examples=40, deadline=None)
@given(reps=sessions(), run_id=st.none() | st.just("run-1"), seed=st.integers(0, 2**16))
def test_ids_do_not_depend_on_the_order_the_repetitions_are_given_in(
    reps: list[RepetitionResult], run_id: str | None, seed: int
) -> None:
    def key(spans: list[SpanRecord]) -> set[tuple[Any, ...]]:
        return {(s.name, s.trace_id, s.span_id, s.parent_id, s.start_ns, s.end_ns) for s in spans}

    first = spans_of(summary_of(reps, run_id))
    shuffled = list(reps)
    random.Random(seed).shuffle(shuffled)
    again = spans_of(summary_of(shuffled, run_id))
    assert key(again) == key(first)
