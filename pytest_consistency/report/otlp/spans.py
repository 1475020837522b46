"""A session result as trace spans: a trace per task, a span per repetition under it, a span per model call under that.

Pure data, no OpenTelemetry import: :mod:`.encode` turns these records into the SDK's spans for its OTLP exporter
and for the OTLP JSON file, so the session's export and ``pytest-consistency show --format otlp-json`` of its
report send the very same spans.

Why each choice:

- **Ids from the run and the task.** A task's trace id is derived from the run id and the task id, and every span
  id from its place (task, shard, repetition, call), so the shards of one run put a task's repetitions in one trace
  (each shard's part of it under a task span of its own) and a report exported again later gives the same ids.
- **Recorded times.** A call's span starts when the call was sent and lasts its latency; a replayed call keeps the
  times of its recording, so a replayed repetition's waterfall is the recording's. A call whose start is unknown (a
  cassette recorded before the start was kept) is laid out after the previous one (``consistency.call.timing`` is
  ``estimated``). A parent span covers its children: a repetition all of whose calls were replayed covers their
  recorded times, any other the time pytest measured too.
- **Each attempt is a span.** A retry is a span of its own (``consistency.call.retry_index``), as the route facts
  are per attempt: the conventions' one span per logical operation would hide the retries drift is made of.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from pytest_consistency.analysis.answers import canonical_json
from pytest_consistency.model.records import AGENT, FAILURE, CallRecord, RepetitionResult
from pytest_consistency.model.result import SessionSummary, TaskResult
from pytest_consistency.model.trajectory import Decision, Message, digest
from pytest_consistency.report.otlp.semconv import SAMPLING_ATTRIBUTES, operation_of

if TYPE_CHECKING:  # a rejudge session's figures: the judge's model loads with its summary
    from pytest_consistency.model.judge import TaskJudge

AttributeValue = str | bool | int | float | Sequence[str] | Sequence[int]


@dataclass(frozen=True)
class SpanRecord:
    """One span, as the exporter will send it; times in nanoseconds since the epoch."""

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    kind: Literal["internal", "client"]
    start_ns: int
    end_ns: int
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    #: The span's status is ERROR with this description when set; UNSET otherwise.
    error: str | None = None


def run_id_of(summary: SessionSummary) -> str:
    """The run's id; a report written before run ids were kept gets one derived from its tasks and repetitions."""
    if summary.run.run_id:
        return summary.run.run_id
    held = sorted((t.task_id, sorted(r.repeat for r in t.repetitions)) for t in summary.tasks)
    return "report-" + digest(json.dumps(held))


def _id(bits: int, *parts: object) -> int:
    """A non-zero id of ``bits`` bits derived from ``parts`` (trace ids 128, span ids 64)."""
    raw = hashlib.sha256("\x1f".join(str(part) for part in parts).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(raw[: bits // 8], "big") or 1


def trace_id_of(run_id: str, task_id: str) -> int:
    return _id(128, "trace", run_id, task_id)


def _ns(seconds: float) -> int:
    return round(seconds * 1e9)


def session_spans(
    summary: SessionSummary, *, content: bool = False, latest_only: bool = False, now: float | None = None
) -> list[SpanRecord]:
    """Every span of the session: per task, its span, then each repetition's span and its calls' spans.

    ``content`` puts the prompts and completions on the model-call spans; ``latest_only`` leaves out the v1.36.0
    names (:func:`.semconv.latest_only`); ``now`` is the time given to a report that kept no time at all.
    """
    run_id = run_id_of(summary)
    scored = len(summary.scored_tasks)
    clock = time.time() if now is None else now
    judged = {} if summary.judge is None else {t.task_id: t for t in summary.judge.tasks}
    spans: list[SpanRecord] = []
    for task in summary.tasks:
        spans.extend(
            task_spans(
                task, run_id, summary.run.shard, scored, content, latest_only, clock, judge=judged.get(task.task_id)
            )
        )
    return spans


def task_spans(
    task: TaskResult,
    run_id: str,
    shard: str | None,
    scored: int,
    content: bool,
    latest_only: bool,
    clock: float,
    judge: TaskJudge | None = None,
) -> list[SpanRecord]:
    """The task's span (first), then its repetitions'; ``judge``: its figures of a rejudge session."""
    trace_id = trace_id_of(run_id, task.task_id)
    task_span = _id(64, "task", run_id, task.task_id, shard or "")
    children: list[SpanRecord] = []
    intervals: list[tuple[int, int]] = []
    for repetition in sorted(task.repetitions, key=lambda r: r.repeat):
        if repetition.outcome == "not run" and not repetition.calls:
            continue
        spans = repetition_spans(repetition, trace_id, task_span, run_id, content, latest_only, clock)
        intervals.append((spans[0].start_ns, spans[0].end_ns))
        children.extend(spans)
    start = min((a for a, _ in intervals), default=_ns(clock))
    end = max((b for _, b in intervals), default=start)
    attributes: dict[str, AttributeValue] = {
        "consistency.task.id": task.task_id,
        "consistency.task.n": task.n,
        "consistency.task.k": task.k,
        "consistency.task.verdict": task.verdict,
        "consistency.task.passes": task.passes,
        "consistency.task.scored": task.scored,
        "consistency.run.id": run_id,
    }
    if task.gap_pp is not None:
        attributes["consistency.task.gap_pp"] = task.gap_pp
        if scored:  # its points of the suite's gap (the gap is the mean of the tasks' gaps)
            attributes["consistency.task.gap_share_pp"] = task.gap_pp / scored
    if task.pass_hat_k is not None:
        attributes["consistency.task.pass_hat_k"] = task.pass_hat_k
    if task.answers_disagree is not None:
        attributes["consistency.task.answers_disagree"] = task.answers_disagree
    attributes.update(_dollars("consistency.task", task.cost_usd, task.unpriced_calls))
    if task.cause is not None:
        attributes["consistency.task.cause"] = task.cause
    if task.why is not None:
        attributes["consistency.task.cause.where"] = task.why.where
        attributes["consistency.task.cause.repetitions"] = list(task.why.repeats)
        if task.why.kinds:
            attributes["consistency.task.cause.kinds"] = list(task.why.kinds)
        if task.why.step is not None:
            attributes["consistency.task.cause.step"] = task.why.step
        if content:  # the finding's sentence quotes the differing prompts: content
            attributes["consistency.task.cause.line"] = task.why.line
    if judge is not None:
        attributes.update(judge_attributes(judge))
    if shard is not None:
        attributes["consistency.shard"] = shard
    error = f"task verdict: {task.verdict}" if task.verdict in ("fail", "error") else None
    head = SpanRecord(f"task {task.task_id}", trace_id, task_span, None, "internal", start, end, attributes, error)
    return [head, *children]


def judge_attributes(judge: TaskJudge) -> dict[str, AttributeValue]:
    """A re-judged task's figures (``--consistency-rejudge``, docs/judges.md) as ``consistency.task.judge.*``: M,
    the repetitions judged, the judge's flip rate (0..1) and Fleiss' kappa with their intervals' ends, and the gap
    split in points (observed = agent + judge). A figure that is undefined (no repetition with two verdicts, kappa
    when every sample agreed) is left out, never a number."""
    f = judge.figures
    prefix = "consistency.task.judge"
    facts: dict[str, AttributeValue] = {f"{prefix}.samples": judge.samples, f"{prefix}.repetitions": f.repetitions}
    for name, value, interval in (("flip_rate", f.flip_rate, f.flip_interval), ("kappa", f.kappa, f.kappa_interval)):
        if value is not None:
            facts[f"{prefix}.{name}"] = value
        if interval is not None:
            facts[f"{prefix}.{name}_low"] = interval.low
            facts[f"{prefix}.{name}_high"] = interval.high
    if f.flip_method is not None:
        facts[f"{prefix}.flip_rate_method"] = f.flip_method
    for name, points in (
        ("gap_observed_pp", f.observed_gap_pp),
        ("gap_agent_pp", f.majority_gap_pp),
        ("gap_judge_pp", f.judge_gap_pp),
    ):
        if points is not None:
            facts[f"{prefix}.{name}"] = points
    if judge.excluded:
        facts[f"{prefix}.excluded"] = len(judge.excluded)
    return facts


def repetition_spans(
    repetition: RepetitionResult,
    trace_id: int,
    parent: int,
    run_id: str,
    content: bool,
    latest_only: bool,
    clock: float,
) -> list[SpanRecord]:
    """The repetition's span (first) and its calls' spans."""
    span_id = _id(64, "repetition", run_id, repetition.task_id, repetition.repeat)
    own_start = repetition.started
    cursor = own_start if own_start is not None else clock
    calls: list[SpanRecord] = []
    recorded_only = bool(repetition.calls)
    steps = step_numbers(repetition.calls)
    for index, call in enumerate(repetition.calls):
        start = call.started_at
        if start is None:
            timing = "estimated"
            start = cursor
            recorded_only = False
        else:
            timing = "recorded" if call.replayed else "measured"
            recorded_only = recorded_only and call.replayed
        end = start + (call.latency_ms or 0.0) / 1000
        cursor = end
        call_id = _id(64, "call", run_id, repetition.task_id, repetition.repeat, index)
        step = steps[index]
        calls.append(call_span(call, trace_id, call_id, span_id, start, end, timing, step, content, latest_only))
    own = (
        []
        if recorded_only or own_start is None
        else [(_ns(own_start), _ns(repetition.stopped if repetition.stopped is not None else own_start))]
    )
    bounds = own + [(c.start_ns, c.end_ns) for c in calls]
    if not bounds:
        bounds = [(_ns(clock), _ns(clock + repetition.duration))]
    start_ns = min(a for a, _ in bounds)
    end_ns = max(b for _, b in bounds)
    attributes: dict[str, AttributeValue] = {
        "consistency.task.id": repetition.task_id,
        "consistency.repetition": repetition.repeat,
        "consistency.repetition.outcome": repetition.outcome,
        "consistency.repetition.replayed": bool(repetition.calls) and all(c.replayed for c in repetition.calls),
        "consistency.repetition.calls": len(repetition.calls),
        "consistency.repetition.duration_s": repetition.duration,
    }
    if repetition.answer_recorded:
        try:
            attributes["consistency.repetition.answer_digest"] = digest(canonical_json(repetition.normalized))
        except (TypeError, ValueError):  # an answer JSON cannot hold: no digest rather than a wrong one
            pass
    attributes.update(_dollars("consistency.repetition", repetition.cost_usd, repetition.unpriced_calls))
    if repetition.cassette is not None:
        attributes["consistency.repetition.cassette"] = repetition.cassette
    if repetition.infrastructure is not None:
        attributes["consistency.repetition.infrastructure"] = repetition.infrastructure
    error = None
    if repetition.outcome in FAILURE:
        # the assertion's message can quote the answer: content; the infrastructure reason is the plugin's own words
        error = (repetition.message if content else None) or repetition.infrastructure or repetition.outcome
    head = SpanRecord(
        f"repetition {repetition.repeat}", trace_id, span_id, parent, "internal", start_ns, end_ns, attributes, error
    )
    return [head, *calls]


def _dollars(prefix: str, usd: float, unpriced: int) -> dict[str, AttributeValue]:
    """``{prefix}.cost_usd`` once something was priced (a lower bound while ``{prefix}.unpriced_calls`` is not 0,
    which is then set too); nothing where nothing was priced: never a price of zero for a model with none."""
    facts: dict[str, AttributeValue] = {}
    if usd:
        facts[f"{prefix}.cost_usd"] = usd
    if unpriced:
        facts[f"{prefix}.unpriced_calls"] = unpriced
    return facts


def step_numbers(calls: Sequence[CallRecord]) -> list[int | None]:
    """Per call, the trajectory step it made or tried (a failed attempt belongs to the step its retry answered, as
    :func:`..trajectory.steps.steps_of` counts steps), None for a call that is no model step or not the agent's."""
    numbers: list[int | None] = []
    done = 0
    for call in calls:
        if call.role != AGENT:  # a judge's or a simulated user's call is no step of the agent's trajectory
            numbers.append(None)
        elif call.decision is not None and call.error is None:
            done += 1
            numbers.append(done)
        elif call.sent is not None or (call.method == "POST" and operation_of(call.url) == "chat"):
            numbers.append(done + 1)
        else:
            numbers.append(None)
    return numbers


def call_span(
    call: CallRecord,
    trace_id: int,
    span_id: int,
    parent: int,
    start: float,
    end: float,
    timing: str,
    step: int | None,
    content: bool,
    latest_only: bool,
) -> SpanRecord:
    operation = operation_of(call.url) if call.method == "POST" else None
    parts = urlsplit(call.url)
    attributes: dict[str, AttributeValue] = {}
    if operation is not None:
        attributes["gen_ai.operation.name"] = operation
        attributes["gen_ai.provider.name"] = call.provider
        if not latest_only:
            attributes["gen_ai.system"] = call.provider
    if call.model_requested is not None:
        attributes["gen_ai.request.model"] = call.model_requested
    if call.model_served is not None:
        attributes["gen_ai.response.model"] = call.model_served
    if call.decision is not None and call.decision.stop_reason:
        attributes["gen_ai.response.finish_reasons"] = [call.decision.stop_reason]
    if call.status is not None and call.status < 400 and operation is not None:
        attributes["gen_ai.usage.input_tokens"] = call.prompt_tokens
        attributes["gen_ai.usage.output_tokens"] = call.completion_tokens
        if call.cache_read_tokens:
            attributes["gen_ai.usage.cache_read.input_tokens"] = call.cache_read_tokens
        if call.cache_creation_tokens:
            attributes["gen_ai.usage.cache_creation.input_tokens"] = call.cache_creation_tokens
        if call.cost_usd is not None:
            attributes["consistency.call.cost_usd"] = call.cost_usd
    if call.sent is not None:
        for name, value in call.sent.sampling:
            attribute = SAMPLING_ATTRIBUTES.get(name)
            parsed = _scalar(value)
            if attribute is not None and parsed is not None:
                attributes[attribute] = parsed
    if call.system_fingerprint is not None and call.provider == "openai":
        attributes["openai.response.system_fingerprint"] = call.system_fingerprint
    if parts.hostname:
        attributes["server.address"] = parts.hostname
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    if port is not None:
        attributes["server.port"] = port
    attributes["http.request.method"] = call.method
    if call.status is not None:
        attributes["http.response.status_code"] = call.status
    error_type = call.error or (str(call.status) if call.status is not None and call.status >= 400 else None)
    if error_type is not None:
        attributes["error.type"] = error_type
    attributes.update(_route_facts(call, timing, step))
    if content and operation is not None:
        if call.asked:
            attributes["gen_ai.input.messages"] = input_messages(call.asked)
        if call.decision is not None:
            attributes["gen_ai.output.messages"] = output_messages(call.decision)
    model = call.model_requested or call.model_served
    name = (f"{operation} {model}" if model else operation) if operation is not None else f"{call.method} {parts.path}"
    error = None if error_type is None else ((call.detail if content else None) or error_type)
    return SpanRecord(name, trace_id, span_id, parent, "client", _ns(start), _ns(end), attributes, error)


def _route_facts(call: CallRecord, timing: str, step: int | None) -> dict[str, AttributeValue]:
    facts: dict[str, AttributeValue] = {
        "consistency.call.base_url": call.base_url,
        "consistency.call.retry_index": call.retry_index,
        "consistency.call.replayed": call.replayed,
        "consistency.call.pinned": call.pinned,
        "consistency.call.timing": timing,
    }
    if call.role != AGENT:  # whose call: the judge's and a simulated user's are told from the agent's
        facts["consistency.call.role"] = call.role
    if step is not None:
        facts["consistency.step"] = step
    if call.key_fingerprint is not None:
        facts["consistency.call.key_fingerprint"] = call.key_fingerprint
    if call.route_key is not None:
        facts["consistency.call.route_key"] = call.route_key
    if call.wait_ms:
        facts["consistency.call.wait_ms"] = call.wait_ms
    if call.tokens_estimated:
        facts["consistency.call.tokens_estimated"] = True
    for header, value in sorted(call.gateway.items()):
        facts[f"consistency.gateway.{header.removeprefix('x-')}"] = value
    return facts


def _scalar(text: str) -> str | bool | int | float | None:
    """A sampling parameter's JSON text as an attribute value (an object, a list or null is left out)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, (str, bool, int, float)) else None


def input_messages(asked: Sequence[Message]) -> str:
    """What the step added since the model's previous turn, in the conventions' input message shape (JSON)."""
    messages: list[dict[str, Any]] = []
    for message in asked:
        if message.role == "tool":
            part: dict[str, Any] = {"type": "tool_call_response", "response": message.text}
            if message.tool_call_id is not None:
                part["id"] = message.tool_call_id
            messages.append({"role": "tool", "parts": [part]})
        else:
            messages.append({"role": message.role, "parts": [{"type": "text", "content": message.text}]})
    return json.dumps(messages, ensure_ascii=False)


def output_messages(decision: Decision) -> str:
    """The model's decision in the conventions' output message shape (JSON)."""
    parts: list[dict[str, Any]] = []
    if decision.text:
        parts.append({"type": "text", "content": decision.text})
    if decision.refusal:
        parts.append({"type": "text", "content": decision.refusal})
    for call in decision.tool_calls:
        try:
            arguments: Any = json.loads(call.arguments)
        except ValueError:
            arguments = call.arguments
        tool: dict[str, Any] = {"type": "tool_call", "name": call.name, "arguments": arguments}
        if call.id is not None:
            tool["id"] = call.id
        parts.append(tool)
    message: dict[str, Any] = {"role": "assistant", "parts": parts}
    if decision.stop_reason:
        message["finish_reason"] = decision.stop_reason
    return json.dumps([message], ensure_ascii=False)
