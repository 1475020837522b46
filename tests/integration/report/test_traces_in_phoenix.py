"""The session's traces in a real tool: Arize Phoenix, started on loopback, holds the spans of a live, a replayed, a
``-n 2`` and a sharded session of the example suite exactly as their reports say (issue 29, "Tested against a real
tool"): the same tasks, repetitions and calls, token counts and causes, each call under its repetition and each
repetition under its task, every span once.

How: one Phoenix for the module (tests/support/phoenix.py), a project of its own per session, named as a user
names it (``OTEL_RESOURCE_ATTRIBUTES=openinference.project.name=...``). Each session exports through a tap that
forwards its requests to Phoenix byte for byte: Phoenix stores a span id once however often it arrives, so "every
span exactly once" is read on the wire, and "the spans match the report" from what Phoenix stored and serves back
through its REST API. The expectations are read from the report JSON here, not from the plugin's span code.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fake_anthropic import GOOD_KEY as ANTHROPIC_KEY
from fake_anthropic import FakeAnthropic
from fake_openai import GOOD_KEY, FakeOpenAI
from phoenix import CHROMIUM, MISSING, PHOENIX, OtlpTap, Phoenix, render_trace, start_phoenix
from suites import ROOT, cli, replay_examples

from pytest_consistency.report.otlp.spans import trace_id_of

EXPECTED = json.loads((ROOT / "examples" / "expected.json").read_text())
#: The model operation of each endpoint the example suite calls (GenAI semantic conventions' operation names).
OPERATIONS = {"/v1/chat/completions": "chat", "/v1/completions": "text_completion", "/v1/messages": "chat"}
#: The flush budget of these sessions (OTEL_EXPORTER_OTLP_TRACES_TIMEOUT): a collector that is up answers well
#: within it even beside a busy CPU; the bounded flush of a dead one is tested elsewhere.
FLUSH_BUDGET = "30"
ROUTE_TASK = "examples/test_cause_tasks.py::test_cause_route"

pytestmark = pytest.mark.skipif(not PHOENIX.exists(), reason=MISSING)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    server = start_phoenix(tmp_path_factory.mktemp("phoenix"))
    print(f"\nphoenix: up in {server.started_in:.1f} s")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def tap(phoenix: Phoenix) -> Iterator[OtlpTap]:
    server = OtlpTap(phoenix.url).start()
    yield server
    server.stop()


@dataclass
class Session:
    project: str
    path: Path
    report: dict[str, Any]
    stdout: str
    returncode: int
    #: The N of the session's "otel: exported N spans" line.
    exported: int

    @property
    def run_id(self) -> str:
        run_id: str = self.report["summary"]["run"]["run_id"]
        return run_id


def run_session(
    tap: OtlpTap,
    workdir: Path,
    *args: str,
    label: str = "replayed",
    project: str | None = None,
    env: dict[str, str] | None = None,
) -> Session:
    """The example suite (``replay_examples``: as CI runs it) with ``--consistency-otel``, exporting to Phoenix
    through the tap into ``project`` (a new one by default); the environment is a user's: OTEL_* variables only."""
    project = project or f"session-{uuid.uuid4().hex[:10]}"
    workdir.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        for name in [name for name in os.environ if name.startswith("OTEL_")]:
            mp.delenv(name)
        mp.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tap.url)
        mp.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={project}")
        mp.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", FLUSH_BUDGET)
        for name, value in (env or {}).items():
            mp.setenv(name, value)
        began = time.monotonic()
        result = replay_examples(workdir / "report.json", "--consistency-otel", *args)
        seconds = time.monotonic() - began
    lines = [line for line in result.stdout.splitlines() if line.startswith("otel: ")]
    assert len(lines) == 1, result.stdout[-3000:] + result.stderr[-3000:]
    words = lines[0].split()
    assert words[1] == "exported", lines[0]
    assert lines[0].endswith(f" to {tap.url}/v1/traces (http/protobuf)"), lines[0]
    session = Session(
        project,
        workdir / "report.json",
        json.loads((workdir / "report.json").read_text()),
        result.stdout,
        result.returncode,
        int(words[2]),
    )
    print(f"session {label}: {seconds:.1f} s, {session.exported} spans")
    return session


def report_tree(report: dict[str, Any]) -> dict[str, Any]:
    """What a report says its spans hold: per task its facts, per repetition its facts and its calls' facts."""
    tree: dict[str, Any] = {}
    for task in report["tasks"]:
        repetitions = {}
        for rep in task["repetitions"]:
            if rep["outcome"] == "not run" and not rep["calls"]:
                continue  # a repetition that never ran has no span
            repetitions[rep["repeat"]] = {
                "outcome": rep["outcome"],
                "replayed": bool(rep["calls"]) and all(call["replayed"] for call in rep["calls"]),
                "calls": sorted(call_facts(call) for call in rep["calls"]),
            }
        tree[task["task_id"]] = {
            "n": task["n"],
            "k": task["k"],
            "verdict": task["verdict"],
            "passes": task["passes"],
            "cause": task.get("cause"),
            "cause_step": (task.get("why") or {}).get("step"),
            "repetitions": repetitions,
        }
    return tree


def call_facts(call: dict[str, Any]) -> tuple[Any, ...]:
    path = urlsplit(call["url"]).path
    assert path in OPERATIONS, f"the example suite called {path}, unknown here"
    answered = call["status"] is not None and call["status"] < 400
    return (
        f"{OPERATIONS[path]} {call['model_requested']}",
        call["model_requested"],
        call["model_served"],
        call["prompt_tokens"] if answered else None,
        call["completion_tokens"] if answered else None,
        call["status"],
        call["replayed"],
        call["key_fingerprint"],
        call["retry_index"],
    )


def span_count(report: dict[str, Any]) -> int:
    tree = report_tree(report)
    return sum(1 + sum(1 + len(r["calls"]) for r in t["repetitions"].values()) for t in tree.values())


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


def within(child: dict[str, Any], parent: dict[str, Any]) -> bool:
    return bool(
        instant(parent["start_time"]) <= instant(child["start_time"])
        and instant(child["end_time"]) <= instant(parent["end_time"])
    )


def phoenix_tree(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """Phoenix's spans as :func:`report_tree` shapes a report, checking on the way that every span is there once,
    each call under a repetition of its trace and each repetition under a task span of its trace, inside their
    parents' times, and that Phoenix read each model call as an LLM span with the call's tokens."""
    ids = [span["context"]["span_id"] for span in spans]
    assert len(ids) == len(set(ids)), "a span id twice in Phoenix"
    children: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for span in spans:
        if span["parent_id"] is not None:
            assert span["parent_id"] in ids, f"{span['name']}: its parent {span['parent_id']} never arrived"
            children[span["parent_id"]].append(span)
    tree: dict[str, Any] = {}
    placed = 0
    for task in (span for span in spans if span["parent_id"] is None):
        facts = task["attributes"]
        task_id = facts["consistency.task.id"]
        assert task["name"] == f"task {task_id}" and task_id not in tree, task["name"]
        repetitions = {}
        for rep in children[task["context"]["span_id"]]:
            said = rep["attributes"]
            assert rep["name"] == f"repetition {said.get('consistency.repetition')}", rep["name"]
            assert rep["context"]["trace_id"] == task["context"]["trace_id"] and within(rep, task), rep["name"]
            calls = children[rep["context"]["span_id"]]
            assert said["consistency.repetition.calls"] == len(calls), rep["name"]
            for call in calls:
                assert call["context"]["trace_id"] == task["context"]["trace_id"] and within(call, rep), call["name"]
                assert call["span_kind"] == "LLM" and not children[call["context"]["span_id"]], call["name"]
                tokens = call["attributes"].get("gen_ai.usage.input_tokens")
                assert call["attributes"].get("llm.token_count.prompt") == tokens, call["name"]
            repetitions[said["consistency.repetition"]] = {
                "outcome": said["consistency.repetition.outcome"],
                "replayed": said["consistency.repetition.replayed"],
                "calls": sorted(phoenix_call(call) for call in calls),
            }
            placed += 1 + len(calls)
        tree[task_id] = {
            "n": facts["consistency.task.n"],
            "k": facts["consistency.task.k"],
            "verdict": facts["consistency.task.verdict"],
            "passes": facts["consistency.task.passes"],
            "cause": facts.get("consistency.task.cause"),
            "cause_step": facts.get("consistency.task.cause.step"),
            "repetitions": repetitions,
        }
        placed += 1
    assert placed == len(spans), "spans outside any task's tree"
    return tree


def phoenix_call(span: dict[str, Any]) -> tuple[Any, ...]:
    facts = span["attributes"]
    return (
        span["name"],
        facts.get("gen_ai.request.model"),
        facts.get("gen_ai.response.model"),
        facts.get("gen_ai.usage.input_tokens"),
        facts.get("gen_ai.usage.output_tokens"),
        facts.get("http.response.status_code"),
        facts["consistency.call.replayed"],
        facts.get("consistency.call.key_fingerprint"),
        facts["consistency.call.retry_index"],
    )


def arrived(phoenix: Phoenix, tap: OtlpTap, session: Session) -> list[dict[str, Any]]:
    """The session's spans once in Phoenix, after checking that the wire carried each exactly once, as many as the
    session said it exported and its report holds."""
    expected = span_count(session.report)
    sent = [span["span_id"] for _, span in tap.spans(session.project)]
    assert len(sent) == len(set(sent)) == session.exported == expected, (len(sent), session.exported, expected)
    spans = phoenix.wait_for_spans(session.project, expected)
    assert len(spans) == expected, f"Phoenix holds {len(spans)} of the {expected} spans"
    return spans


def assert_traces_of_run(spans: list[dict[str, Any]], run_id: str) -> None:
    """Every task's spans are in the trace its run and task id give."""
    for span in spans:
        if span["parent_id"] is None:
            task_id = span["attributes"]["consistency.task.id"]
            assert span["context"]["trace_id"] == f"{trace_id_of(run_id, task_id):032x}", task_id
            assert span["attributes"]["consistency.run.id"] == run_id


@pytest.fixture(scope="module")
def replayed(tap: OtlpTap, tmp_path_factory: pytest.TempPathFactory) -> Session:
    session = run_session(tap, tmp_path_factory.mktemp("replayed"))
    assert session.returncode == 0, session.stdout[-3000:]
    return session


def test_a_replayed_session_is_in_phoenix_as_its_report_says(phoenix: Phoenix, tap: OtlpTap, replayed: Session) -> None:
    spans = arrived(phoenix, tap, replayed)
    tree = phoenix_tree(spans)
    assert tree == report_tree(replayed.report)
    assert set(tree) == set(EXPECTED["tasks"])
    assert {task_id: facts["cause"] for task_id, facts in tree.items()} == {
        task_id: facts["cause"] for task_id, facts in EXPECTED["tasks"].items()
    }
    assert all(rep["replayed"] for facts in tree.values() for rep in facts["repetitions"].values())
    assert_traces_of_run(spans, replayed.run_id)
    tokens = sum(span["attributes"].get("llm.token_count.total", 0) for span in spans)
    assert tokens == EXPECTED["total_tokens"] == replayed.report["summary"]["route"]["total_tokens"]


def otlp_value(value: dict[str, Any]) -> Any:
    """An attribute value of the OTLP JSON encoding as plain data (int64 values are strings in it)."""
    ((kind, inner),) = value.items()
    if kind == "intValue":
        return int(inner)
    if kind == "arrayValue":
        return [otlp_value(item) for item in inner.get("values", [])]
    return inner


def micros(text: str) -> int:
    return (instant(text) - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1)


def test_the_otlp_json_of_the_report_is_what_phoenix_received(
    phoenix: Phoenix, tap: OtlpTap, replayed: Session, tmp_path: Path
) -> None:
    """``pytest-consistency show REPORT --format otlp-json`` of the replayed session's report writes the very spans
    the session sent (ids, names, parents, times to the nanosecond, attributes) and Phoenix stored (to its
    microsecond)."""
    shown = cli("show", str(replayed.path), "--format", "otlp-json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    from_file = {
        span["spanId"]: (
            span["name"],
            span["traceId"],
            span.get("parentSpanId") or None,
            int(span["startTimeUnixNano"]),
            int(span["endTimeUnixNano"]),
            {item["key"]: otlp_value(item["value"]) for item in span.get("attributes", [])},
        )
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    }
    on_the_wire = {
        span["span_id"]: (
            span["name"],
            span["trace_id"],
            span["parent_id"],
            span["start_ns"],
            span["end_ns"],
            span["attributes"],
        )
        for _, span in tap.spans(replayed.project)
    }
    assert from_file == on_the_wire
    stored = phoenix.wait_for_spans(replayed.project, len(from_file))
    assert {s["context"]["span_id"]: (s["name"], s["context"]["trace_id"], s["parent_id"]) for s in stored} == {
        span_id: facts[:3] for span_id, facts in from_file.items()
    }
    for span in stored:
        _, _, _, start, end, _ = from_file[span["context"]["span_id"]]
        assert abs(micros(span["start_time"]) * 1000 - start) < 2000, span["name"]
        assert abs(micros(span["end_time"]) * 1000 - end) < 2000, span["name"]


@pytest.mark.browser  # its own page, drawn in Chromium (no fixture says so)
def test_phoenix_draws_the_trace_of_a_task(phoenix: Phoenix, tap: OtlpTap, replayed: Session) -> None:
    """Phoenix's own page of the route task's trace, in headless Chromium, shows the task span, its repetitions
    and their model calls (docs/traces-phoenix.png is this page of another task)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium); CI installs it")
    arrived(phoenix, tap, replayed)
    trace = f"{trace_id_of(replayed.run_id, ROUTE_TASK):032x}"
    text = render_trace(phoenix.trace_page(trace), trace, f"task {ROUTE_TASK}")
    assert f"task {ROUTE_TASK}" in text
    for repeat in range(1, 6):
        assert f"repetition {repeat}" in text
    assert "chat smollm2" in text  # the calls through the gateway's balanced alias


def test_a_session_under_xdist_is_in_phoenix_once_with_its_parents(
    phoenix: Phoenix, tap: OtlpTap, tmp_path: Path
) -> None:
    """With ``-n 2`` the controlling process exports once, from the report the workers' repetitions make up."""
    session = run_session(tap, tmp_path, "-n", "2", label="-n 2")
    assert session.returncode == 0, session.stdout[-3000:]
    spans = arrived(phoenix, tap, session)
    assert phoenix_tree(spans) == report_tree(session.report)
    assert set(report_tree(session.report)) == set(EXPECTED["tasks"])
    assert_traces_of_run(spans, session.run_id)


def test_two_shards_of_one_run_each_export_their_own_tasks_into_the_run_s_traces(
    phoenix: Phoenix, tap: OtlpTap, tmp_path: Path
) -> None:
    run_id = f"phoenix-shards-{uuid.uuid4().hex[:8]}"
    project = f"shards-{uuid.uuid4().hex[:10]}"
    shards = [
        run_session(
            tap,
            tmp_path / f"shard{i}",
            f"--consistency-shard={i}/2",
            f"--consistency-run-id={run_id}",
            label=f"shard {i}/2",
            project=project,
        )
        for i in (1, 2)
    ]
    wire = tap.spans(project)
    ids = [span["span_id"] for _, span in wire]
    assert len(ids) == len(set(ids)) == sum(s.exported for s in shards) == sum(span_count(s.report) for s in shards)
    tasks = [set(report_tree(s.report)) for s in shards]
    assert tasks[0] and tasks[1] and not tasks[0] & tasks[1] and tasks[0] | tasks[1] == set(EXPECTED["tasks"])
    for i, (session, own) in enumerate(zip(shards, tasks, strict=True), start=1):
        assert session.returncode == 0, session.stdout[-3000:]
        assert session.run_id == run_id and session.report["summary"]["run"]["shard"] == f"{i}/2"
        sent = [span for resource, span in wire if resource.get("consistency.shard") == f"{i}/2"]
        assert len(sent) == session.exported
        assert {span["trace_id"] for span in sent} == {f"{trace_id_of(run_id, task):032x}" for task in own}
        assert {span["name"] for span in sent if span["parent_id"] is None} == {f"task {task}" for task in own}
    spans = phoenix.wait_for_spans(project, len(ids))
    assert len(spans) == len(ids)
    assert phoenix_tree(spans) == {**report_tree(shards[0].report), **report_tree(shards[1].report)}
    assert_traces_of_run(spans, run_id)
    for span in spans:
        if span["parent_id"] is None:
            shard = 1 if span["attributes"]["consistency.task.id"] in tasks[0] else 2
            assert span["attributes"]["consistency.shard"] == f"{shard}/2", span["name"]


def test_a_live_session_is_in_phoenix_with_measured_call_times_and_no_key(
    phoenix: Phoenix, tap: OtlpTap, tmp_path: Path, fake: FakeOpenAI, claude: FakeAnthropic
) -> None:
    """The example suite recorded live against the loopback servers (its answers fail its checks; what matters is
    that what happened is what Phoenix shows): each call span starts inside its repetition span, its times measured,
    and no byte sent to the collector holds a key."""
    session = run_session(
        tap,
        tmp_path,
        f"--consistency-base-url={fake.base_url}",
        f"--consistency-anthropic-base-url={claude.base_url}",
        "--consistency-api-key-env=PHOENIX_TEST_OPENAI_KEY",
        "--consistency-anthropic-key-env=PHOENIX_TEST_ANTHROPIC_KEY",
        "--consistency-record=all",
        f"--consistency-cassettes={tmp_path / 'cassettes'}",
        env={"PHOENIX_TEST_OPENAI_KEY": GOOD_KEY, "PHOENIX_TEST_ANTHROPIC_KEY": ANTHROPIC_KEY},
        label="live",
    )
    assert fake.requests and claude.requests, "the session called the loopback servers"
    calls = [c for t in session.report["tasks"] for r in t["repetitions"] for c in r["calls"]]
    assert calls and not any(call["replayed"] for call in calls)
    spans = arrived(phoenix, tap, session)
    tree = phoenix_tree(spans)
    assert tree == report_tree(session.report) and set(tree) == set(EXPECTED["tasks"])
    assert_traces_of_run(spans, session.run_id)
    by_id = {span["context"]["span_id"]: span for span in spans}
    model_calls = [span for span in spans if span["span_kind"] == "LLM"]
    assert len(model_calls) == len(calls)
    for call in model_calls:
        assert call["attributes"]["consistency.call.timing"] == "measured", call["name"]
        repetition = by_id[call["parent_id"]]
        assert instant(repetition["start_time"]) <= instant(call["start_time"]) <= instant(repetition["end_time"])
    for key in (GOOD_KEY, ANTHROPIC_KEY):
        assert all(key.encode() not in body for body in tap.bodies())
        assert key not in json.dumps(spans)
