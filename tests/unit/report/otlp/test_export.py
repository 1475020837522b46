"""The export of the session's spans (report/otlp/export.py): the target the OTEL_* variables name, the one line the
session prints, and ``send`` against a real OTLP/HTTP collector on loopback that answers, refuses, hangs or is
overloaded: every span once when it answers, a bounded wait when it does not, never an exception.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from collector import Collector, json_spans

from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import RunFacts
from pytest_consistency.report.otlp import export_session, sdk_spans
from pytest_consistency.report.otlp.encode import otlp_json, readable_spans, resource_of
from pytest_consistency.report.otlp.export import (
    BATCH,
    DEFAULT_ENDPOINT,
    EXPORTERS,
    FIRST_BATCH,
    FLUSH_SECONDS,
    Exporter,
    OtelSetupError,
    Outcome,
    Target,
    line_of,
    reason_of,
    send,
    target_of,
)
from pytest_consistency.report.otlp.spans import SpanRecord

#: The bound the issue sets on what a dead collector may add to a session.
#: What a dead collector may cost a session: the flush budget and a margin a loaded machine needs (measured 2.2 s
#: beside CPU-bound processes). What it rules out is the SDK's own default, 10 s per attempt and its retries.
DEAD_COLLECTOR_SECONDS = FLUSH_SECONDS + 4.5


# --- the target -------------------------------------------------------------------------------------------------


def test_the_default_target_is_the_local_collectors_otlp_http_port() -> None:
    target = target_of({})
    assert target == Target("http://localhost:4318/v1/traces", "http/protobuf", FLUSH_SECONDS)
    assert DEFAULT_ENDPOINT == "http://localhost:4318" and FLUSH_SECONDS <= 1.5


@pytest.mark.parametrize(
    ("base", "endpoint"),
    [
        ("http://collector:4318", "http://collector:4318/v1/traces"),
        ("http://collector:4318/", "http://collector:4318/v1/traces"),
        ("https://otlp.example.test/otel/", "https://otlp.example.test/otel/v1/traces"),
        ("  http://collector:4318  ", "http://collector:4318/v1/traces"),
    ],
)
def test_the_base_endpoint_gets_the_traces_path(base: str, endpoint: str) -> None:
    assert target_of({"OTEL_EXPORTER_OTLP_ENDPOINT": base}).endpoint == endpoint


def test_the_traces_endpoint_is_used_as_given_and_wins() -> None:
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://traces:9999/custom/path",
    }
    assert target_of(environ).endpoint == "http://traces:9999/custom/path"
    assert target_of({**environ, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": " "}).endpoint == "http://base:4318/v1/traces"


@pytest.mark.parametrize(
    ("environ", "protocol"),
    [
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "http/json"),
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, "http/protobuf"),
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": " "}, "http/protobuf"),
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, "http/json"),
    ],
)
def test_the_protocol_comes_from_the_traces_variable_first(environ: dict[str, str], protocol: str) -> None:
    assert target_of(environ).protocol == protocol
    assert set(EXPORTERS) == {"http/protobuf", "http/json"}


@pytest.mark.parametrize(
    ("environ", "variable"),
    [
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL"),
        ({"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
        (
            {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/thrift", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        ),
    ],
)
def test_a_protocol_it_does_not_speak_is_an_error_naming_the_variable(environ: dict[str, str], variable: str) -> None:
    with pytest.raises(OtelSetupError) as raised:
        target_of(environ)
    message = str(raised.value)
    assert message.startswith(f"{variable}=")
    assert "http/protobuf or http/json" in message and "4318" in message


@pytest.mark.parametrize(
    ("environ", "budget"),
    [
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "3"}, 3.0),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "0.25"}, 0.25),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "3", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "0.5"}, 0.5),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": ""}, FLUSH_SECONDS),
    ],
)
def test_the_timeout_variables_set_the_flush_budget(environ: dict[str, str], budget: float) -> None:
    assert target_of(environ).budget == budget


@pytest.mark.parametrize("raw", ["abc", "10s", "0", "-1", "inf", "nan"])
@pytest.mark.parametrize("variable", ["OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"])
def test_a_bad_timeout_is_an_error_naming_the_variable(variable: str, raw: str) -> None:
    with pytest.raises(OtelSetupError) as raised:
        target_of({variable: raw})
    assert str(raised.value).startswith(f"{variable}={raw!r}")
    assert "seconds" in str(raised.value)


@pytest.mark.parametrize(
    "environ",
    [
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "grpc://collector:4317"},
        {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "unix:///var/run/otel.sock"},
    ],
)
def test_an_endpoint_that_is_not_http_is_an_error_naming_its_variable(environ: dict[str, str]) -> None:
    ((variable, value),) = environ.items()
    with pytest.raises(OtelSetupError) as raised:
        target_of(environ)
    message = str(raised.value)
    assert message.startswith(f"{variable}={value!r} is not an http(s) URL"), message
    assert "; set " in message and "OTEL_EXPORTER_OTLP_ENDPOINT" in message and "the collector's base URL" in message


def test_an_endpoints_credentials_are_never_shown() -> None:
    target = target_of({"OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:pa55word@otlp.example.test:443"})
    assert target.endpoint == "https://user:pa55word@otlp.example.test:443/v1/traces"  # the SDK gets it as given
    assert target.shown == "https://otlp.example.test:443/v1/traces"
    target = target_of({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://otlp.example.test/v1/traces?token=t0k3n"})
    assert target.shown == "https://otlp.example.test/v1/traces"
    with pytest.raises(OtelSetupError) as raised:
        target_of({"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://user:pa55word@files.example.test"})
    assert "pa55word" not in str(raised.value)


# --- the line ---------------------------------------------------------------------------------------------------

TARGET = Target("http://user:secret@127.0.0.1:4318/v1/traces", "http/json", 1.5)


def test_the_line_of_an_export() -> None:
    line = line_of(Outcome(sent=12, total=12, finished=True), TARGET, 3)
    assert line == "otel: exported 12 spans in 3 traces to http://127.0.0.1:4318/v1/traces (http/json)"


def test_the_line_of_a_failed_export_says_what_was_not_sent_and_that_the_verdict_stands() -> None:
    outcome = Outcome(sent=2048, total=3000, failure="Failed to export\n   spans batch", finished=True)
    line = line_of(outcome, TARGET, 3)
    assert line == (
        "otel: 952 of 3000 spans not exported to http://127.0.0.1:4318/v1/traces (http/json): Failed to export spans "
        "batch (the session's verdict is unchanged; check OTEL_EXPORTER_OTLP_ENDPOINT and that the collector is up)"
    )
    assert "secret" not in line and "\n" not in line


def test_a_long_reason_is_cut() -> None:
    line = line_of(Outcome(total=5, failure="x" * 500), TARGET, 1)
    reason = line.split("(http/json): ")[1].split(" (the session")[0]
    assert len(reason) == 200 and reason.endswith("…")


GENERIC = "Failed to export spans batch due to timeout, max retries or shutdown."


@pytest.mark.parametrize(
    ("messages", "reason"),
    [
        (
            [
                "Transient error HTTPConnectionPool(host='127.0.0.1', port=1): Max retries exceeded with url: "
                "/v1/traces (Caused by NewConnectionError(...: [Errno 111] Connection refused)) encountered while "
                "exporting spans batch, retrying in 1.02s.",
                GENERIC,
            ],
            "the connection was refused",
        ),
        ([GENERIC], "no answer in time"),
        (["Transient error Service Unavailable encountered while exporting spans batch, retrying in 1.05s.", GENERIC],
         "the collector answered HTTP 503"),
        (["Failed to export spans batch code: 400, reason: Bad Request"], "the collector answered HTTP 400"),
        (["Failed to export spans batch code: None, reason: something odd"], "Failed to export spans batch code: None, "
         "reason: something odd"),
        ([], "the collector did not take them"),
    ],
)  # fmt: skip
def test_the_reason_is_said_in_words_from_the_sdks_log_lines(messages: list[str], reason: str) -> None:
    assert reason_of(messages) == reason


# --- send -------------------------------------------------------------------------------------------------------


@pytest.fixture
def collector(request: pytest.FixtureRequest) -> Iterator[Collector]:
    server = Collector(getattr(request, "param", "normal")).start()
    yield server
    server.stop()


def many_spans(count: int) -> list[Any]:
    """``count`` spans of one trace (a task and its repetitions), built straight from records."""
    records = [SpanRecord("task t", 7, 1, None, "internal", 10, 10 + count, {"consistency.task.id": "t"})]
    records += [
        SpanRecord(f"repetition {i}", 7, 1 + i, 1, "internal", 10 + i, 11 + i, {"consistency.repetition": i})
        for i in range(1, count)
    ]
    return readable_spans(records, resource_of("run-1", None, str), str)


def session_spans_of() -> list[Any]:
    """The spans of a small session: two tasks, two repetitions each, a 429 retried."""
    reps = []
    for task in ("a", "b"):
        for repeat in (1, 2):
            calls = [
                CallRecord("POST", "http://127.0.0.1:9/v1/chat/completions", "http://127.0.0.1:9/v1", "sha256:ab",
                           "m", "m", status=429 if task == "b" else 200, latency_ms=10.0, started_at=1e9 + repeat),
            ]  # fmt: skip
            if task == "b":
                calls.append(
                    CallRecord("POST", calls[0].url, calls[0].base_url, "sha256:ab", "m", "m", status=200,
                               retry_index=1, prompt_tokens=5, latency_ms=10.0, started_at=1e9 + repeat + 0.1)
                )  # fmt: skip
            reps.append(RepetitionResult(f"{task}", f"t.py::t[{task}-rep{repeat}]", repeat, 2, 2, 1.0,
                                         outcome="passed", calls=calls))  # fmt: skip
    from pytest_consistency.analysis.summary import build_summary

    return sdk_spans(build_summary(reps, run=RunFacts(run_id="run-1")))


def target(collector: Collector, protocol: str = "http/protobuf", **environ: str) -> Target:
    return target_of(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol, **environ}
    )


def ids(spans: Sequence[Any]) -> list[str]:
    return sorted(format(s.context.span_id, "016x") for s in spans)


@pytest.mark.parametrize(
    ("protocol", "content_type"), [("http/protobuf", "application/x-protobuf"), ("http/json", "application/json")]
)
def test_every_span_reaches_the_collector_once(collector: Collector, protocol: str, content_type: str) -> None:
    spans = session_spans_of()
    outcome = send(spans, target(collector, protocol))
    assert (outcome.sent, outcome.total, outcome.failure, outcome.finished) == (len(spans), len(spans), None, True)
    assert [(r["path"], r["content_type"], r["status"]) for r in collector.requests] == [
        ("/v1/traces", content_type, 200)
    ]
    assert sorted(s["span_id"] for s in collector.spans) == ids(spans)
    assert collector.spans == json_spans(otlp_json(spans))  # what the otlp-json file holds, field for field


def test_both_protocols_deliver_the_same_spans() -> None:
    spans = session_spans_of()
    received = []
    for protocol in ("http/protobuf", "http/json"):
        server = Collector().start()
        try:
            assert send(spans, target(server, protocol)).failure is None
            received.append(server.spans)
        finally:
            server.stop()
    assert received[0] == received[1]
    assert {s["name"] for s in received[0]} == {"task a", "task b", "repetition 1", "repetition 2", "chat m"}


def test_the_otlp_headers_reach_the_collector_and_no_body(
    collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20collector-auth-value-9f8e7d")
    for protocol in ("http/protobuf", "http/json"):
        assert send(session_spans_of(), target(collector, protocol)).failure is None
    assert [r["headers"].get("authorization") for r in collector.requests] == ["Bearer collector-auth-value-9f8e7d"] * 2
    assert b"collector-auth-value-9f8e7d" not in collector.received()


def span_counts(collector: Collector) -> list[int]:
    """The spans of each request the collector received (protobuf bodies)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    counts = []
    for body in collector.bodies:
        request = ExportTraceServiceRequest.FromString(body)
        counts.append(sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans))
    return counts


def test_spans_go_in_batches_a_small_one_first_every_span_once(collector: Collector) -> None:
    spans = many_spans(FIRST_BATCH + BATCH + 5)
    outcome = send(spans, target(collector))
    assert (outcome.sent, outcome.failure) == (len(spans), None)
    assert span_counts(collector) == [FIRST_BATCH, BATCH, 5]
    assert sorted(s["span_id"] for s in collector.spans) == ids(spans)


@pytest.mark.parametrize("collector", ["503"], indirect=True)
def test_a_failed_batch_ends_the_export(collector: Collector) -> None:
    """The overloaded collector is asked the first batch (retried by the SDK within the budget), never the second."""
    spans = many_spans(FIRST_BATCH + BATCH + 5)
    outcome = send(spans, target(collector))
    assert (outcome.sent, outcome.total) == (0, len(spans))
    assert outcome.failure == "the collector answered HTTP 503"
    assert len(collector.requests) >= 1
    assert set(span_counts(collector)) == {FIRST_BATCH}  # the first batch, retried; never a later one
    assert collector.spans == []


#: Why the spans were not taken, as the closing line says it, per kind of dead collector.
REASONS = {
    "refuse": "the connection was refused",
    "hang": "no answer in time",
    "503": "the collector answered HTTP 503",
}


def timed_send(spans: Sequence[Any], to: Target) -> tuple[Outcome, float]:
    began = time.monotonic()
    outcome = send(spans, to)
    return outcome, time.monotonic() - began


@pytest.mark.parametrize("protocol", ["http/protobuf", "http/json"])
@pytest.mark.parametrize("collector", ["refuse", "hang", "503"], indirect=True)
def test_a_dead_collector_costs_at_most_the_bounded_flush(collector: Collector, protocol: str) -> None:
    spans = session_spans_of()
    outcome, seconds = timed_send(spans, target(collector, protocol))
    assert seconds < DEAD_COLLECTOR_SECONDS, seconds
    assert outcome.sent == 0 and outcome.total == len(spans)
    assert outcome.failure
    line = line_of(outcome, target(collector, protocol), 2)
    assert line.startswith(f"otel: {len(spans)} of {len(spans)} spans not exported to {collector.traces_url}")
    assert "the session's verdict is unchanged" in line
    assert outcome.failure == REASONS[collector.mode] or (
        collector.mode == "hang" and outcome.failure.startswith("no answer within ")  # the wait ran out first
    )
    if collector.mode == "refuse":
        assert collector.requests == []
    else:  # it got the spans and did not answer them, or answered 503 (retried by the SDK)
        assert collector.requests and all(r["status"] in (None, 503) for r in collector.requests)


@pytest.mark.parametrize("protocol", ["http/protobuf", "http/json"])
@pytest.mark.parametrize("collector", ["hang", "503"], indirect=True)
def test_a_dead_collector_costs_at_most_the_bounded_flush_for_a_large_session_too(
    collector: Collector, protocol: str
) -> None:
    """A small first batch finds the collector dead: the rest of a large session is never encoded."""
    spans = many_spans(FIRST_BATCH + 4 * BATCH)
    outcome, seconds = timed_send(spans, target(collector, protocol))
    assert seconds < DEAD_COLLECTOR_SECONDS, seconds
    assert (outcome.sent, outcome.total) == (0, len(spans)) and outcome.failure


@pytest.mark.parametrize("collector", ["hang"], indirect=True)
def test_the_timeout_variable_sets_the_wait(collector: Collector) -> None:
    """A wait longer than the default budget shows the variable was read: a lower bound on elapsed time holds on a
    loaded machine, where an upper bound tight enough to show a shorter wait would not."""
    budget = FLUSH_SECONDS + 1.0
    outcome, seconds = timed_send(session_spans_of(), target(collector, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=str(budget)))
    assert seconds >= budget - 0.1, seconds
    assert outcome.sent == 0
    assert outcome.failure == "no answer in time" or str(outcome.failure).startswith("no answer within ")


@pytest.mark.parametrize("collector", ["refuse"], indirect=True)
def test_the_sdks_log_lines_are_kept_not_printed(collector: Collector, capfd: pytest.CaptureFixture[str]) -> None:
    logger = logging.getLogger("opentelemetry")
    handlers, propagate = list(logger.handlers), logger.propagate
    outcome = send(session_spans_of(), target(collector))
    assert outcome.finished and outcome.failure
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
    assert (list(logger.handlers), logger.propagate) == (handlers, propagate)


class Refusing:
    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        pass


def test_send_never_raises() -> None:
    def broken(endpoint: str, timeout: float) -> Any:
        raise RuntimeError("no exporter today")

    to = Target("http://127.0.0.1:9/v1/traces", "http/protobuf", 1.0)
    outcome = send(many_spans(3), to, {"http/protobuf": Exporter(broken, 0.0)})
    assert (outcome.sent, outcome.failure, outcome.finished) == (0, "RuntimeError: no exporter today", True)
    outcome = send(many_spans(3), to, {"http/protobuf": Exporter(lambda endpoint, timeout: Refusing(), 0.0)})
    assert (outcome.sent, outcome.failure) == (0, "the collector did not take them")  # no log line to say why


def test_export_session_honours_otel_sdk_disabled_and_sends_nothing_without_a_task(collector: Collector) -> None:
    from pytest_consistency.analysis.summary import build_summary

    reps = [RepetitionResult("t", "t.py::t[rep1]", 1, 1, 1, 1.0, outcome="passed", started=1e9, stopped=1e9 + 1)]
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint, "OTEL_SDK_DISABLED": "true"}
    summary = build_summary(reps, run=RunFacts(run_id="run-1"))
    assert export_session(summary, environ=environ) == "otel: OTEL_SDK_DISABLED=true: nothing exported"
    empty = build_summary([], run=RunFacts(run_id="run-1"))
    line = export_session(empty, environ={"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint})
    assert line == "otel: no task ran: nothing to export"
    assert collector.requests == []


def test_export_session_sends_and_says_so_in_one_line(collector: Collector) -> None:
    from pytest_consistency.analysis.summary import build_summary

    reps = [
        RepetitionResult("t", f"t.py::t[rep{r}]", r, 2, 2, 1.0, outcome="passed", started=1e9 + r, stopped=1e9 + r + 1)
        for r in (1, 2)
    ]
    line = export_session(
        build_summary(reps, run=RunFacts(run_id="run-1")), environ={"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint}
    )
    assert line == f"otel: exported 3 spans in 1 traces to {collector.traces_url} (http/protobuf)"
    assert [s["name"] for s in collector.spans] == ["task t", "repetition 1", "repetition 2"]
    assert json.dumps(collector.spans)  # plain data, as a test reads it
