"""The session as OpenTelemetry traces (issue 29), end to end: a real openai SDK agent (and the anthropic SDK) against
the loopback model servers, recorded and replayed, exported with ``--consistency-otel`` to a real OTLP/HTTP
collector on loopback (tests/support/collector.py), which decodes what it received.

The agent suite has three tasks of three repetitions: ``steady`` (one call, always the same answer), ``tools`` (two
calls, a tool step then the answer) and ``flaky`` (repetition 2 is answered 429 first, retried by the SDK, then
answered otherwise: an inconsistent task whose cause is the route). Every expectation is read from the session's
JSON report: the spans are its tasks, repetitions and calls, with their tokens, causes and times; a replay's calls
start when the recording's did; ``-n 2`` and shards export each span once under the same parents and trace ids;
``show --format otlp-json`` writes the spans the collector received; no byte sent holds the API key or the
collector's own credential; a dead collector is one line and no change of the exit status; an export the plugin
cannot make is a usage error before any test runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from collector import Collector, json_spans
from fake_anthropic import MODEL, FakeAnthropic
from fake_anthropic import Step as ClaudeStep
from fake_openai import FakeOpenAI, Step
from suites import anthropic_suite, cli, load_report, run_mode, run_recorded

from pytest_consistency.report.otlp.spans import trace_id_of

#: A distinctive fake API key: the route's key (OPENAI_API_KEY), which no byte sent to the collector may hold.
KEY = "sk-live-otelExportKey0123456789abcdefXYZ"
#: The collector's own credential (OTEL_EXPORTER_OTLP_HEADERS): a request header, never in a span.
AUTH = "otlpCollectorAuth7f3a9c2e5b41"
RUN = "run-otel-29"
#: Kinds and status codes as OTLP numbers them.
INTERNAL, CLIENT = 1, 3
UNSET, ERROR = 0, 2
#: Attributes that differ from one session to the next by design (pytest's measured duration of a repetition).
VOLATILE = ("consistency.repetition.duration_s",)
TASKS = ("steady", "flaky", "tools")
OTEL_VARIABLES = (
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_COMPRESSION",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_SEMCONV_STABILITY_OPT_IN",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_RUN_ID",
)

AGENT = """
import os, pytest

@pytest.mark.parametrize("task", ["steady", "flaky", "tools"])
@pytest.mark.repeat_consistency(n=3)
def test_agent(task, pinned_client, consistency):
    system = "You are a careful assistant."
    if os.environ.get("PLANT_KEY"):  # the key in a prompt: content on, it must still never leave
        system += " Use key " + os.environ["OPENAI_API_KEY"] + " for the lookup."
    messages = [{"role": "system", "content": system}, {"role": "user", "content": f"{task}: which colour?"}]
    answer = ask(pinned_client, messages)
    if task == "tools":
        messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": "tool result: sun"}]
        answer = ask(pinned_client, messages)
    consistency.record(answer)
    assert answer == "red", answer


def ask(client, messages):
    reply = client.chat.completions.create(model="fake-model", messages=messages, temperature=0.2, seed=7)
    return reply.choices[0].message.content
"""


def script() -> list[Step]:
    """The answers of a serial session, in order."""
    steps = []
    for task in TASKS:
        for repeat in (1, 2, 3):
            if task == "tools":
                steps.append(Step(text="check"))
            if task == "flaky" and repeat == 2:
                steps.append(Step(status=429))  # the SDK retries it (retry-after-ms: 5)
            steps.append(Step(text="blue" if task == "flaky" and repeat == 2 else "red"))
    return steps


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector().start()
    yield server
    server.stop()


@pytest.fixture
def otel(fake: FakeOpenAI, collector: Collector, monkeypatch: pytest.MonkeyPatch) -> Collector:
    """The environment of a user exporting to the collector: the route's key, the collector's endpoint and its
    credential, a flush budget a busy machine never hits (the bounded flush of a dead collector is tested apart)."""
    fake.keys = {KEY}
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for name in OTEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"authorization=Bearer%20{AUTH}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "30")
    return collector


def session(pytester: pytest.Pytester, fake: FakeOpenAI, mode: str, report: str, *args: str) -> Any:
    return run_recorded(
        pytester,
        fake.base_url,
        mode,
        "-p",
        "no:randomly",
        f"--consistency-report={report}",
        f"--consistency-run-id={RUN}",
        *args,
    )


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake: FakeOpenAI, otel: Collector) -> list[dict[str, Any]]:
    """The suite recorded live into its cassettes, exported: the spans the collector received from it."""
    fake.script(*script())
    pytester.makepyfile(test_agent=AGENT)
    live = session(pytester, fake, "once", "live.json", "--consistency-otel")
    assert live.ret == 1, live.stdout.str()  # flaky fails in repetition 2
    spans = list(otel.spans)
    assert spans, live.stdout.str()
    live.stdout.fnmatch_lines([f"otel: exported {len(spans)} spans in 3 traces to {otel.traces_url} (http/protobuf)"])
    fake.reset()
    otel.reset()
    return spans


def export(collector: Collector, result: Any) -> list[dict[str, Any]]:
    """The spans the collector received from a session, which said it exported them all; then forgotten."""
    spans = list(collector.spans)
    result.stdout.fnmatch_lines([f"otel: exported {len(spans)} spans in 3 traces to {collector.traces_url} *"])
    collector.reset()
    return spans


@pytest.fixture
def replayed(
    pytester: pytest.Pytester, fake: FakeOpenAI, recorded: list[dict[str, Any]], otel: Collector
) -> list[dict[str, Any]]:
    """The spans a serial replay of the recording exported (``serial.json`` its report)."""
    serial = session(pytester, fake, "none", "serial.json", "--consistency-otel")
    assert serial.ret == 1 and fake.requests == [], serial.stdout.str()
    return export(otel, serial)


def task_of(span: dict[str, Any]) -> str:
    return str(span["attributes"]["consistency.task.id"]).split("[")[1].rstrip("]")


def children(spans: list[dict[str, Any]], parent: dict[str, Any]) -> list[dict[str, Any]]:
    """The children of ``parent``, in the order they were sent (a repetition's calls in the order made)."""
    return [s for s in spans if s["trace_id"] == parent["trace_id"] and s["parent_span_id"] == parent["span_id"]]


def check_tree(spans: list[dict[str, Any]]) -> None:
    """Every span once, every parent in its trace and covering its child, a task at the root of each trace."""
    ids = [s["span_id"] for s in spans]
    assert len(ids) == len(set(ids)), "a span arrived twice"
    found = {(s["trace_id"], s["span_id"]): s for s in spans}
    for span in spans:
        if not span["parent_span_id"]:
            assert span["name"].startswith("task ") and span["kind"] == INTERNAL
            continue
        parent = found[(span["trace_id"], span["parent_span_id"])]
        assert parent["start_ns"] <= span["start_ns"] <= span["end_ns"] <= parent["end_ns"], (parent, span)


def check_report(spans: list[dict[str, Any]], report: dict[str, Any]) -> None:
    """The spans are the report's tasks, repetitions and calls, with their verdicts, causes, outcomes, tokens and
    times."""
    check_tree(spans)
    run_id = report["summary"]["run"]["run_id"]
    heads = {s["attributes"]["consistency.task.id"]: s for s in spans if not s["parent_span_id"]}
    assert sorted(heads) == sorted(t["task_id"] for t in report["tasks"])
    calls_seen = 0
    for task in report["tasks"]:
        head = heads[task["task_id"]]
        assert head["name"] == f"task {task['task_id']}"
        assert head["trace_id"] == format(trace_id_of(run_id, task["task_id"]), "032x")
        attributes = head["attributes"]
        assert attributes["consistency.run.id"] == run_id
        assert (attributes["consistency.task.n"], attributes["consistency.task.k"]) == (task["n"], task["k"])
        assert attributes["consistency.task.verdict"] == task["verdict"]
        assert attributes["consistency.task.passes"] == task["passes"]
        assert attributes.get("consistency.task.cause") == task.get("cause")
        assert attributes.get("consistency.task.gap_pp") == task.get("gap_pp")
        assert dollars(attributes, "consistency.task") == (task["cost_usd"] or None, task["unpriced_calls"] or None)
        assert head["status"]["code"] == (ERROR if task["verdict"] in ("fail", "error") else UNSET)
        reps = children(spans, head)
        assert [r["attributes"]["consistency.repetition"] for r in reps] == [r["repeat"] for r in task["repetitions"]]
        for rep_span, rep in zip(reps, task["repetitions"], strict=True):
            assert rep_span["name"] == f"repetition {rep['repeat']}" and rep_span["kind"] == INTERNAL
            assert rep_span["attributes"]["consistency.repetition.outcome"] == rep["outcome"]
            assert rep_span["attributes"]["consistency.repetition.calls"] == len(rep["calls"])
            said = dollars(rep_span["attributes"], "consistency.repetition")
            assert said == (rep["cost_usd"] or None, rep["unpriced_calls"] or None)
            assert rep_span["attributes"]["consistency.repetition.replayed"] == all(c["replayed"] for c in rep["calls"])
            assert rep_span["status"]["code"] == (ERROR if rep["outcome"] == "failed" else UNSET)
            calls = children(spans, rep_span)
            assert len(calls) == len(rep["calls"])
            for call_span, call in zip(calls, rep["calls"], strict=True):
                calls_seen += 1
                got = call_span["attributes"]
                assert call_span["kind"] == CLIENT
                assert call_span["name"] == f"chat {call['model_requested']}"
                assert got["gen_ai.operation.name"] == "chat" and got["gen_ai.provider.name"] == call["provider"]
                assert got["gen_ai.request.model"] == call["model_requested"]
                assert got["consistency.call.retry_index"] == call["retry_index"]
                assert got["consistency.call.replayed"] == call["replayed"]
                assert got["consistency.call.key_fingerprint"] == call["key_fingerprint"]
                assert got["http.response.status_code"] == call["status"]
                assert got["server.address"] == "127.0.0.1"
                assert call_span["start_ns"] == round(call["started_at"] * 1e9)
                assert call_span["end_ns"] == round((call["started_at"] + call["latency_ms"] / 1000) * 1e9)
                if call["status"] < 400:
                    assert got["gen_ai.usage.input_tokens"] == call["prompt_tokens"] > 0
                    assert got["gen_ai.usage.output_tokens"] == call["completion_tokens"] > 0
                    assert got["gen_ai.response.model"] == call["model_served"]
                    assert got["gen_ai.response.finish_reasons"] == [call["decision"]["stop_reason"]]
                    assert got.get("consistency.call.cost_usd") == call["cost_usd"]
                    assert "error.type" not in got and call_span["status"]["code"] == UNSET
                else:
                    assert got["error.type"] == str(call["status"]) and call_span["status"]["code"] == ERROR
                    assert "gen_ai.usage.input_tokens" not in got
    assert calls_seen == sum(len(r["calls"]) for t in report["tasks"] for r in t["repetitions"])
    assert len(spans) == len(report["tasks"]) + sum(len(t["repetitions"]) for t in report["tasks"]) + calls_seen


def dollars(attributes: dict[str, Any], prefix: str) -> tuple[Any, Any]:
    return attributes.get(f"{prefix}.cost_usd"), attributes.get(f"{prefix}.unpriced_calls")


def check_agent(spans: list[dict[str, Any]]) -> None:
    """What this agent did, as spans: a cause on the inconsistent task only, the 429 retried as a span of its own,
    the sampling sent, the steps."""
    heads = {task_of(s): s for s in spans if not s["parent_span_id"]}
    assert heads["flaky"]["attributes"]["consistency.task.cause"] == "route"
    assert heads["flaky"]["attributes"]["consistency.task.verdict"] == "fail"
    assert "consistency.task.cause" not in heads["steady"]["attributes"]
    assert "consistency.task.cause" not in heads["tools"]["attributes"]
    flaky = children(spans, heads["flaky"])
    retried = children(spans, flaky[1])
    assert [c["attributes"]["consistency.call.retry_index"] for c in retried] == [0, 1]
    assert [c["attributes"].get("error.type") for c in retried] == ["429", None]
    assert [c["attributes"]["consistency.step"] for c in retried] == [1, 1]
    steps = [c["attributes"]["consistency.step"] for c in children(spans, children(spans, heads["tools"])[0])]
    assert steps == [1, 2]
    for span in spans:
        if span["kind"] == CLIENT:
            assert span["attributes"]["gen_ai.request.temperature"] == 0.2
            assert span["attributes"]["gen_ai.request.seed"] == 7
            assert span["attributes"]["gen_ai.system"] == "openai"
            assert "gen_ai.input.messages" not in span["attributes"]  # content is off by default
    resource = spans[0]["resource"]
    assert resource["service.name"] == "pytest-consistency"
    assert resource["consistency.run.id"] == RUN


def shape(spans: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What two exports of the same recorded run share: ids, parents, names, kinds, times, attributes (but the
    measured durations), statuses, sorted."""
    return sorted(
        (
            s["trace_id"],
            s["span_id"],
            s["parent_span_id"],
            s["name"],
            s["kind"],
            s["start_ns"],
            s["end_ns"],
            json.dumps({k: v for k, v in s["attributes"].items() if k not in VOLATILE}, sort_keys=True),
            s["status"]["code"],
        )
        for s in spans
    )


def test_a_live_session_exports_its_tasks_repetitions_and_calls_as_its_report_says(
    pytester: pytest.Pytester, recorded: list[dict[str, Any]], otel: Collector
) -> None:
    report = load_report(pytester, "live.json")
    check_report(recorded, report)
    check_agent(recorded)
    assert all(not s["attributes"].get("consistency.call.replayed", False) for s in recorded)
    timings = {s["attributes"]["consistency.call.timing"] for s in recorded if s["kind"] == CLIENT}
    assert timings == {"measured"}


def test_a_replay_exports_the_recorded_times(
    pytester: pytest.Pytester, fake: FakeOpenAI, recorded: list[dict[str, Any]], otel: Collector
) -> None:
    replay = session(pytester, fake, "none", "replay.json", "--consistency-otel")
    assert replay.ret == 1 and fake.requests == []
    spans = export(otel, replay)
    check_report(spans, load_report(pytester, "replay.json"))
    check_agent(spans)
    live = {s["span_id"]: s for s in recorded}
    assert {s["span_id"] for s in spans} == set(live)  # the same run id: the same places, the same ids
    for span in spans:
        if span["kind"] == CLIENT:
            assert span["attributes"]["consistency.call.replayed"] is True
            assert span["attributes"]["consistency.call.timing"] == "recorded"
            assert abs(span["start_ns"] - live[span["span_id"]]["start_ns"]) < 1_000  # to the microsecond
        if span["name"].startswith("repetition "):  # the recording's waterfall, not the replay's moment
            calls = children(spans, span)
            assert span["start_ns"] == calls[0]["start_ns"]
            assert span["end_ns"] == max(c["end_ns"] for c in calls)
            assert span["attributes"]["consistency.repetition.replayed"] is True


def test_the_spans_carry_the_dollars_of_the_report_at_a_price_and_never_zero_without_one(
    pytester: pytest.Pytester, fake: FakeOpenAI, recorded: list[dict[str, Any]], otel: Collector
) -> None:
    """Without a price for the model (the recording), no span says a cost: the calls are counted unpriced. Replayed
    at a price, each call, repetition and task span says its dollars, the report's own."""
    assert not any(key.endswith(".cost_usd") for s in recorded for key in s["attributes"])
    unpriced = {
        task_of(s): s["attributes"].get("consistency.task.unpriced_calls") for s in recorded if not s["parent_span_id"]
    }
    assert unpriced == {"steady": 3, "flaky": 3, "tools": 6}  # the 429 used no token: nothing to price
    priced = session(pytester, fake, "none", "priced.json", "--consistency-otel", "--consistency-price=fake-model=2,8")
    assert priced.ret == 1 and fake.requests == [], priced.stdout.str()
    spans = export(otel, priced)
    report = load_report(pytester, "priced.json")
    check_report(spans, report)
    heads = [s for s in spans if not s["parent_span_id"]]
    assert math.fsum(h["attributes"]["consistency.task.cost_usd"] for h in heads) == report["summary"]["cost"]["usd"]
    assert all("consistency.task.unpriced_calls" not in h["attributes"] for h in heads)
    assert sum(1 for s in spans if "consistency.call.cost_usd" in s["attributes"]) == sum(
        1 for t in report["tasks"] for r in t["repetitions"] for c in r["calls"] if c["status"] < 400
    )


def test_xdist_exports_every_span_once_with_its_parents(
    pytester: pytest.Pytester, fake: FakeOpenAI, replayed: list[dict[str, Any]], otel: Collector
) -> None:
    xdist = session(pytester, fake, "none", "xdist.json", "--consistency-otel", "-n", "2")
    assert xdist.ret == 1, xdist.stdout.str()
    assert len(otel.requests) == 1  # the controller exported; no worker did
    spans = export(otel, xdist)
    check_report(spans, load_report(pytester, "xdist.json"))
    assert shape(spans) == shape(replayed)
    assert fake.requests == []


def test_the_shards_of_a_run_put_each_task_in_the_trace_the_whole_run_gives_it(
    pytester: pytest.Pytester, fake: FakeOpenAI, replayed: list[dict[str, Any]], otel: Collector
) -> None:
    whole = {task_of(s): s["trace_id"] for s in replayed if not s["parent_span_id"]}
    below = {s["span_id"]: s for s in replayed if s["parent_span_id"]}
    held: dict[str, str] = {}
    for index in (1, 2):
        args = ("--consistency-otel", f"--consistency-shard={index}/2")
        shard = session(pytester, fake, "none", f"shard{index}.json", *args)
        assert shard.ret in (0, 1), shard.stdout.str()
        spans = list(otel.spans)
        shard.stdout.fnmatch_lines([f"otel: exported {len(spans)} spans in * traces to {otel.traces_url} *"])
        otel.reset()
        check_report(spans, load_report(pytester, f"shard{index}.json"))
        for head in (s for s in spans if not s["parent_span_id"]):
            assert task_of(head) not in held, "a task in two shards"
            held[task_of(head)] = head["trace_id"]
            assert head["attributes"]["consistency.shard"] == f"{index}/2"
        beneath = [s for s in spans if s["parent_span_id"]]  # repetitions and calls: the ids the whole run gave them
        calls = [s for s in beneath if s["kind"] == CLIENT]
        assert shape(calls) == shape([below[s["span_id"]] for s in calls])
        for span in beneath:  # a repetition hangs under the shard's own task span, in the task's one trace
            twin = below[span["span_id"]]
            assert (span["trace_id"], span["name"], span["start_ns"], span["end_ns"]) == (
                twin["trace_id"],
                twin["name"],
                twin["start_ns"],
                twin["end_ns"],
            )
        assert {s["resource"]["service.instance.id"] for s in spans} == {f"{RUN}/{index}/2"}
    assert held == whole


def test_http_json_sends_the_same_spans(
    pytester: pytest.Pytester,
    fake: FakeOpenAI,
    replayed: list[dict[str, Any]],
    otel: Collector,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    result = session(pytester, fake, "none", "json.json", "--consistency-otel")
    assert result.ret == 1
    result.stdout.fnmatch_lines([f"otel: exported * spans in 3 traces to {otel.traces_url} (http/json)"])
    assert [r["content_type"] for r in otel.requests] == ["application/json"]
    assert json.loads(otel.bodies[0])["resourceSpans"]  # the body is OTLP JSON
    spans = export(otel, result)
    assert shape(spans) == shape(replayed)
    check_report(spans, load_report(pytester, "json.json"))


def test_show_otlp_json_writes_the_spans_the_collector_received(
    pytester: pytest.Pytester, recorded: list[dict[str, Any]], otel: Collector
) -> None:
    shown = cli("show", "live.json", "--format", "otlp-json", cwd=pytester.path)
    assert shown.returncode == 0, shown.stderr
    (pytester.path / "spans.json").write_text(shown.stdout)
    from_file = json_spans(json.loads(shown.stdout))

    def by_id(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(spans, key=lambda s: s["span_id"])

    assert by_id(from_file) == by_id(recorded)  # ids, names, parents, times, attributes, statuses and resource


def secrets_absent(where: str, data: bytes) -> None:
    for secret in (KEY, AUTH):
        assert secret.encode() not in data, f"{secret[:8]}... in {where}"


def test_no_byte_sent_to_the_collector_holds_the_key_or_the_collectors_credential(
    pytester: pytest.Pytester, fake: FakeOpenAI, otel: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Content on and the key planted in every system prompt: the prompts reach the spans, the key does not."""
    monkeypatch.setenv("PLANT_KEY", "1")
    fake.script(*script())
    pytester.makepyfile(test_agent=AGENT)
    result = session(pytester, fake, "off", "report.json", "--consistency-otel", "--consistency-otel-content")
    assert result.ret == 1, result.stdout.str()
    assert KEY in json.dumps(fake.requests[0]["body"])  # the key was in the prompt sent to the model
    headers = [r["headers"] for r in otel.requests]
    sent = b"".join(otel.raw) + otel.received()
    spans = export(otel, result)
    check_report(spans, load_report(pytester))
    calls = [s for s in spans if s["kind"] == CLIENT]
    assert all("gen_ai.input.messages" in s["attributes"] for s in calls)
    first = [
        json.loads(s["attributes"]["gen_ai.input.messages"]) for s in calls if s["attributes"]["consistency.step"] == 1
    ]
    assert len(first) == 3 * 3 + 1  # the first step of every repetition (the system prompt), the 429's attempt too
    for messages in first:
        assert messages[0]["role"] == "system"
        assert messages[0]["parts"][0]["content"] == "You are a careful assistant. Use key <redacted> for the lookup."
    assert all(
        "gen_ai.output.messages" in s["attributes"]
        for s in spans
        if s["kind"] == CLIENT and "error.type" not in s["attributes"]
    )
    # the collector's credential arrived as its header, and nowhere else
    assert {h["authorization"] for h in headers} == {f"Bearer {AUTH}"}
    secrets_absent("the bodies sent to the collector", sent)
    secrets_absent("the session's output", (result.stdout.str() + result.stderr.str()).encode())
    shown = cli("show", "report.json", "--format", "otlp-json", "--consistency-otel-content", cwd=pytester.path)
    assert shown.returncode == 0, shown.stderr
    assert "Use key <redacted> for the lookup." in shown.stdout
    secrets_absent("show --format otlp-json", shown.stdout.encode())


REASONS = {
    "refuse": ("the connection was refused",),
    "hang": ("no answer in time", "no answer within"),
    "503": ("the collector answered HTTP 503",),
}


@pytest.mark.parametrize("mode", ["refuse", "hang", "503"])
def test_a_dead_collector_is_one_line_and_no_change_of_the_exit_status(
    pytester: pytest.Pytester,
    fake: FakeOpenAI,
    recorded: list[dict[str, Any]],
    otel: Collector,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
) -> None:
    """How long it waits is measured where it is bounded (tests/unit/report/otlp/test_export.py times ``send``); a
    session here shows the line and keeps its exit status."""
    without = session(pytester, fake, "none", "without.json")
    dead = Collector(mode).start()
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", dead.endpoint)
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_TIMEOUT")  # the default flush budget
        result = session(pytester, fake, "none", "dead.json", "--consistency-otel")
    finally:
        dead.stop()
    assert result.ret == without.ret == 1, result.stdout.str()
    lines = [line for line in result.stdout.lines if line.startswith("otel: ")]
    assert len(lines) == 1, lines
    total = len(recorded)
    prefix = f"otel: {total} of {total} spans not exported to {dead.traces_url} (http/protobuf): "
    assert lines[0].startswith(prefix), lines[0]
    assert lines[0][len(prefix) :].startswith(REASONS[mode]), lines[0]
    assert lines[0].endswith(
        "(the session's verdict is unchanged; check OTEL_EXPORTER_OTLP_ENDPOINT and that the collector is up)"
    )
    assert load_report(pytester, "dead.json")["summary"]["passed"] is False
    # the line comes last, after where the report was written
    report_line = next(i for i, line in enumerate(result.stdout.lines) if line.startswith("report: "))
    assert result.stdout.lines.index(lines[0]) > report_line


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL='grpc'"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL='grpc'"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon", "OTEL_EXPORTER_OTLP_TIMEOUT='soon'"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4317", "OTEL_EXPORTER_OTLP_ENDPOINT='localhost:4317' is not"),
    ],
)
def test_an_export_it_cannot_make_is_a_usage_error_before_any_test_runs(
    pytester: pytest.Pytester,
    fake: FakeOpenAI,
    otel: Collector,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    named: str,
) -> None:
    monkeypatch.setenv(variable, value)
    pytester.makepyfile(test_agent=AGENT)
    result = session(pytester, fake, "off", "report.json", "--consistency-otel")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines([f"*--consistency-otel: *{named}*"])
    assert fake.requests == [] and otel.requests == []
    assert not (pytester.path / "report.json").exists()
    monkeypatch.delenv(variable)
    fine = session(pytester, fake, "off", "report.json")  # without the option, the variables are not read
    monkeypatch.setenv(variable, value)
    assert fine.ret == 1


#: The otel extra not installed: a finder first on sys.meta_path that finds no ``opentelemetry.sdk``.
BLOCK_SDK = """
import sys


class NoOtelSdk:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry.sdk" or name.startswith("opentelemetry.sdk."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


assert not any(name.startswith("opentelemetry.sdk") for name in sys.modules), "imported before the conftest"
sys.meta_path.insert(0, NoOtelSdk())
"""


def test_a_missing_sdk_is_a_usage_error_naming_the_extra(
    pytester: pytest.Pytester, fake: FakeOpenAI, otel: Collector
) -> None:
    pytester.makeconftest(BLOCK_SDK)
    pytester.makepyfile(test_agent=AGENT)
    args = (f"--consistency-base-url={fake.base_url}", "--consistency-model=fake-model", "--consistency-record=off")
    result = pytester.runpytest_subprocess(*args, "--consistency-report=report.json", "--consistency-otel")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    assert (
        "ERROR: --consistency-otel: the OpenTelemetry SDK is not installed; "
        "install it with pip install 'pytest-consistency[otel]'"
    ) in result.stderr.lines
    assert fake.requests == [] and otel.requests == []
    assert not (pytester.path / "report.json").exists()
    without = pytester.runpytest_subprocess(*args, "--consistency-report=report.json")
    assert without.ret == 1, without.stdout.str()  # the finder alone changes nothing without the option


def test_the_yaml_key_and_the_ini_twin_turn_the_export_on(
    pytester: pytest.Pytester, fake: FakeOpenAI, replayed: list[dict[str, Any]], otel: Collector
) -> None:
    (pytester.path / "consistency.yaml").write_text("otel: true\nrun_id: run-from-yaml\n")
    args = ("-p", "no:randomly", "--consistency-config=consistency.yaml", "--consistency-report=yaml.json")
    by_yaml = run_recorded(pytester, fake.base_url, "none", *args)
    assert by_yaml.ret == 1, by_yaml.stdout.str()
    spans = export(otel, by_yaml)
    report = load_report(pytester, "yaml.json")
    assert report["summary"]["run"]["run_id"] == "run-from-yaml"
    check_report(spans, report)  # trace ids derived from the YAML's run id
    (pytester.path / "consistency.yaml").unlink()
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nconsistency_otel = true\n")
    by_ini = session(pytester, fake, "none", "ini.json")
    assert by_ini.ret == 1, by_ini.stdout.str()
    assert shape(export(otel, by_ini)) == shape(replayed)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    off = session(pytester, fake, "none", "off.json")
    assert off.ret == 1
    assert not any(line.startswith("otel: ") for line in off.stdout.lines) and otel.requests == []


ANTHROPIC_TASK = """
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_anthropic_client, consistency):
    reply = pinned_anthropic_client.messages.create(
        model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    consistency.record(reply.content[0].text)
"""


def test_anthropic_calls_are_chat_spans_live_and_replayed(
    pytester: pytest.Pytester, claude: FakeAnthropic, collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in OTEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "30")
    claude.script(ClaudeStep(), ClaudeStep())
    pytester.makepyfile(test_agent=anthropic_suite(ANTHROPIC_TASK))
    otel_args = ("--consistency-otel", f"--consistency-run-id={RUN}")
    live = run_mode(pytester, "once", "--consistency-report=live.json", *otel_args)
    assert live.ret == 0, live.stdout.str()
    live_spans = list(collector.spans)
    live.stdout.fnmatch_lines([f"otel: exported {len(live_spans)} spans in 1 traces to {collector.traces_url} *"])
    collector.reset()
    check_report(live_spans, load_report(pytester, "live.json"))
    claude.reset()
    replay = run_mode(pytester, "none", "--consistency-report=replay.json", *otel_args)
    assert replay.ret == 0, replay.stdout.str()
    assert claude.requests == []
    spans = list(collector.spans)
    check_report(spans, load_report(pytester, "replay.json"))
    calls = [s for s in spans if s["kind"] == CLIENT]
    assert len(calls) == 2
    live_calls = {s["span_id"]: s for s in live_spans if s["kind"] == CLIENT}
    for span in calls:
        assert span["name"] == f"chat {MODEL}"
        assert span["attributes"]["gen_ai.provider.name"] == "anthropic"
        assert span["attributes"]["server.port"] == int(claude.base_url.rsplit(":", 1)[1].split("/")[0])
        assert abs(span["start_ns"] - live_calls[span["span_id"]]["start_ns"]) < 1_000
