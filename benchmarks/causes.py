"""The cost of naming the cause of every inconsistency (issue 28): the end of a session of 1,000 tasks x 10
repetitions x 20 model steps with and without the attribution, as a ratio in the same run (target: it adds at
most 10 %); and the capture's own costs: instructions per ``sent_of`` call and bytes of the JSON report per call.

    python benchmarks/causes.py [--tasks 1000] [--n 10] [--steps 20] [--repeats 5] [--json out.json]
    python benchmarks/causes.py --capture [--count 200]      # the capture figures only
    python benchmarks/causes.py --smoke                       # tiny sizes, one run each, nothing judged

The end of session is :func:`session_end.end_of_session` (figure 5's: build the summary, decide the gates, the JSON
report redacted and laid out, read back, the terminal, Markdown and HTML renders), judged on CPU seconds
(``time.process_time``; the wall clock is printed beside it). Three sides, each in a fresh process (``--side``),
alternated ABC, CBA, ... so that machine load hits all alike:

- ``cause``: what a session does now: every sampling call carries its ``Sent`` digests and the texts of its parts
  (once per repetition), and every inconsistent task gets its cause (``TaskResult.why``), the suite its gap by
  cause, into the summary, the JSON report and every render;
- ``carried``: the same records, the attribution switched off (``summary.task_cause`` returns None, in this
  benchmark only): what carrying the digests and texts through the report costs alone;
- ``none``: the same records with ``sent`` and ``texts`` cleared and the attribution off: a session before issue
  28 (decisions and the divergence map kept). ``cause / none`` is the figure the target is about.

The records are synthetic but made the way the plugin makes them: each step's request is the body an OpenAI chat
agent sends (system prompt, user turn, then the model's tool calls with generated ids and the tool results, five
tool schemas, ``temperature``), and its ``Sent`` and texts come from :func:`~pytest_consistency.capture.canonical.
sent_of` on that body, kept once per repetition as ``capture/active.py`` keeps them. Two thirds of the tasks take
the same 20 steps in every repetition; a third are inconsistent, cycling through the five causes: ``route`` (the
model served changes at a step), ``input`` (the system prompt carries the time), ``environment`` (a tool result
differs), ``sampling`` (the same request, another decision) and ``outside the model`` (same steps, outcomes
differ). A step's canonical request is computed once per task, branch and step and shared by the repetitions
that take it: canonicalisation numbers the generated ids, so each repetition's own ids would give the same digests
and texts (building 200,000 canonical requests per process would only slow the benchmark, not the end of session).

The capture figures (``--capture``): instructions per ``sent_of`` call under callgrind (only a loop driven by
``functools.reduce`` is counted, as in ``replay_parts.py``; CPU microseconds without valgrind) on a one-turn body
and on the 20th step's body (40 messages); and the JSON report's growth per call: the bytes of ``sent`` and
``texts`` in the call records of one 20-step repetition, laid out as the report writes them.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from session_end import alternated, end_of_session, repetition, replayed_call  # noqa: E402
from trajectory import TOOLS  # noqa: E402
from trajectory import path_of as trajectory_path  # noqa: E402

from pytest_consistency.capture.canonical import sent_of  # noqa: E402
from pytest_consistency.model.cause import CAUSES, Sent  # noqa: E402
from pytest_consistency.model.records import CallRecord, RepetitionResult  # noqa: E402
from pytest_consistency.model.trajectory import Decision, Message  # noqa: E402
from pytest_consistency.route.providers import builtin  # noqa: E402

URL = "http://127.0.0.1:8000/v1/chat/completions"
SYSTEM = (
    "You are a careful accounting assistant. Use the tools to find the customer's invoices for the month they "
    "name, check each one, and answer with the total in euros. Never guess a figure you have not read."
)
#: The tool schemas every request sends (what an SDK user passes as ``tools=``).
TOOL_SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name.replace('_', ' ')} in the accounting system",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "q": {"type": "string"}},
                "required": ["q"],
            },
        },
    }
    for name in TOOLS
]
#: Inconsistent tasks cycle through these (every cause represented).
KINDS = CAUSES
SIDES = ("cause", "carried", "none")
#: ``--lean``: a fourth side, an experiment for the owner of the summary: the attribution on, then ``sent`` and
#: ``texts`` dropped from the call records of every task without a cause before the report is written.
LEAN = "lean"


def path_of(steps: int, seed: int) -> list[Decision]:
    """One branch of a task, as figure 4 builds it (``trajectory.path_of``): tool calls, then a text answer."""
    return trajectory_path(random.Random(seed), steps, seed)


def tool_result(task: int, index: int, variant: int) -> str:
    """The tool result a step's request carries (about 100 characters); ``variant`` 1 is another result."""
    rows = [{"invoice": f"INV-{task:04d}-{index:02d}", "amount": 40 + index + 7 * variant, "status": "paid"}]
    return json.dumps({"rows": rows, "next": None})


def body_of(task: int, decisions: list[Decision], step: int, system: str, variant_at: int | None) -> dict[str, Any]:
    """The chat request of step ``step`` (from 0) of a repetition that decided ``decisions``: what the OpenAI SDK
    sends; ids generated per repetition as the SDK's (random here; canonicalisation numbers them); a tool result
    from step ``variant_at`` on is the other one."""
    ids = random.Random()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": f"What did customer {task} pay us in March?"},
    ]
    for index, decision in enumerate(decisions[:step]):
        call_id = f"call_{ids.getrandbits(96):024x}"
        tool = decision.tool_calls[0]
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": tool.name, "arguments": tool.arguments}}
                ],
            }
        )
        variant = 1 if variant_at is not None and index + 1 >= variant_at else 0
        messages.append({"role": "tool", "tool_call_id": call_id, "content": tool_result(task, index, variant)})
    return {"model": "fake-model", "messages": messages, "tools": TOOL_SCHEMAS, "temperature": 0.2}


Captured = tuple[Sent, dict[str, str], tuple[Message, ...]]


def capture(body: dict[str, Any]) -> Captured:
    """What ``capture/wire.capture_asked`` stores on the call record for ``body``."""
    provider = builtin("openai")
    assert provider is not None
    sent, texts = sent_of(provider, URL, body, None, URL)
    return sent, texts, provider.asked(URL, body)


def records(tasks: int, n: int, steps: int, seed: int = 23) -> list[RepetitionResult]:
    """``tasks`` x ``n`` repetitions of ``steps`` calls each, with what the plugin captures (see the docstring)."""
    rng = random.Random(seed)
    reps: list[RepetitionResult] = []
    inconsistent = 0
    for t in range(tasks):
        kind = None
        if rng.random() < 1 / 3:
            kind = KINDS[inconsistent % len(KINDS)]
            inconsistent += 1
        at = rng.randrange(1, steps - 1)  # the step (from 0) where the branches part
        base = path_of(steps, t * 10)
        other = base[:at] + path_of(steps, t * 10 + 1)[at:]
        captured: dict[tuple[int, int], Captured] = {}
        for r in range(1, n + 1):
            variant = rng.randrange(2) if kind not in (None, "outside the model") else 0
            if kind not in (None, "outside the model") and r <= 2:
                variant = r - 1  # both branches present in every inconsistent task
            decisions = other if variant else base
            system = SYSTEM + (f" Now: 2026-03-31T12:00:{r:02d}Z." if kind == "input" else "")
            passed = variant == 0
            if kind == "outside the model":
                passed = r == 1 or (r > 2 and rng.random() < 0.5)
            kept: set[str] = set()  # texts kept once per repetition, as capture/active.py
            calls: list[CallRecord] = []
            for index, decision in enumerate(decisions):
                key = (variant if kind != "input" else r, index)
                if key not in captured:
                    variant_at = at if kind == "environment" and variant else None
                    captured[key] = capture(body_of(t, decisions, index, system, variant_at))
                sent, texts, asked = captured[key]
                texts = {k: v for k, v in texts.items() if k not in kept}
                kept.update(texts)
                served = "fake-model-2" if kind == "route" and variant and index >= at else "fake-model"
                call = replayed_call(
                    latency_ms=12.5,
                    prompt_tokens=70 + 60 * index,
                    completion_tokens=12,
                    total_tokens=82 + 60 * index,
                    decision=decision,
                    asked=asked,
                    sent=sent,
                    texts=texts,
                )
                call.model_served = served
                calls.append(call)
            answer = decisions[-1].text
            reps.append(repetition(f"tests/test_agent_{t // 100:03d}.py", t, r, n, passed, answer, calls=calls))
    return reps


def strip_capture(reps: list[RepetitionResult]) -> None:
    """The records as the plugin kept them before issue 28: no ``sent``, no ``texts``."""
    for rep in reps:
        for call in rep.calls:
            call.sent = None
            call.texts = {}


def one_side(side: str, tasks: int, n: int, steps: int) -> dict[str, Any]:
    """One measurement in this process: the end of session of ``side`` (``records``: only build the records)."""
    import pytest_consistency.analysis.summary as summary_module

    if side in ("carried", "none"):
        summary_module.task_cause = lambda *args, **kwargs: None  # type: ignore[assignment]
    if side == "lean":
        build_task = summary_module.build_task

        def lean_task(*args: Any, **kwargs: Any) -> Any:
            task = build_task(*args, **kwargs)
            if task.why is None:
                strip_capture(task.repetitions)
            return task

        summary_module.build_task = lean_task  # type: ignore[assignment]
    reps = records(tasks, n, steps)
    if side == "none":
        strip_capture(reps)
    if side == "records":
        return {"side": side, "seconds": {}}
    seconds = end_of_session(reps)
    result: dict[str, Any] = {"side": side, "seconds": seconds}
    if side == "cause":
        # The attribution's own work timed again right after, in this process: its share of the end of session
        # (only the inconsistent tasks, as build_task asks for a cause only there).
        from pytest_consistency.analysis.cause.attribute import task_finding

        by_task: dict[str, list[RepetitionResult]] = {}
        for rep in reps:
            by_task.setdefault(rep.task_id, []).append(rep)
        mark = time.process_time()
        found: dict[str, int] = {}
        for task_id, task_reps in by_task.items():
            if len({(rep.outcome, rep.answer) for rep in task_reps}) < 2:
                continue
            classes = {rep.repeat: hash(rep.answer) for rep in task_reps}
            finding = task_finding(task_id, task_reps, classes)
            if finding is not None:
                found[finding.cause] = found.get(finding.cause, 0) + 1
        result["finding_cpu"] = time.process_time() - mark
        result["found"] = found
    return result


def measure(args: argparse.Namespace) -> dict[str, Any]:
    sides = (*SIDES, LEAN) if args.lean else SIDES
    size = ["--tasks", str(args.tasks), "--n", str(args.n), "--steps", str(args.steps)]
    runs = alternated(__file__, sides, args.repeats, size)
    samples = {side: [run["seconds"]["cpu"] for run in rs] for side, rs in runs.items()}
    medians = {side: statistics.median(values) for side, values in samples.items()}
    walls = {side: statistics.median(run["seconds"]["total"] for run in rs) for side, rs in runs.items()}
    lean = {"ratio_lean": medians[LEAN] / medians["none"]} if args.lean else {}
    return {
        **lean,
        "tasks": args.tasks,
        "n": args.n,
        "steps": args.steps,
        "repeats": args.repeats,
        "samples": samples,
        "runs": runs,
        "median_cpu_seconds": medians,
        "median_wall_seconds": walls,
        "spread": {s: (max(v) - min(v)) / medians[s] if medians[s] else 0.0 for s, v in samples.items()},
        "ratio_cause": medians["cause"] / medians["none"],
        "ratio_analysis": medians["cause"] / medians["carried"],
        "ratio_carried": medians["carried"] / medians["none"],
        "wall_ratio_cause": walls["cause"] / walls["none"],
        "finding_share": statistics.median(r["finding_cpu"] / r["seconds"]["cpu"] for r in runs["cause"]),
        "found": runs["cause"][0]["found"],
    }


# --- the capture's own costs --------------------------------------------------------------------------------------

#: The bodies ``sent_of`` is measured on: a one-turn request, and the 20th step of the benchmark's conversation.
BODIES = ("small", "20-step")


def sample_body(name: str, steps: int = 20) -> dict[str, Any]:
    if name == "small":
        return {"model": "fake-model", "messages": [{"role": "user", "content": "What is 2 + 2?"}]}
    return body_of(7, path_of(steps, 70), steps - 1, SYSTEM, None)


def drive(name: str, count: int) -> None:
    """``sent_of`` on body ``name`` once (warm), then ``count`` times inside ``functools.reduce`` (what callgrind
    counts; a fresh copy of the body is made outside the loop, as ``sent_of`` does not change it)."""
    provider = builtin("openai")
    assert provider is not None
    body = sample_body(name)
    sent_of(provider, URL, body, None, URL)
    started = time.process_time()
    functools.reduce(lambda _, __: sent_of(provider, URL, body, None, URL), range(count), None)
    print(json.dumps({"cpu_s": time.process_time() - started}))


def instructions(name: str, count: int, out: Path) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tool = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=functools_reduce"]
    command = [*tool, f"--callgrind-out-file={out}", sys.executable, __file__, "--drive", name, "--count", str(count)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if not found:
        raise RuntimeError(f"callgrind printed no total for {name}:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def report_bytes(steps: int) -> dict[str, float]:
    """Bytes of the JSON report per call for one repetition of the ``steps``-step conversation: with and without
    ``sent`` and ``texts`` (the call records laid out as the report writes them, one line each)."""
    from pytest_consistency.model.serial import to_data
    from pytest_consistency.report.json_layout import layout

    rep = records(1, 1, steps)[0]
    with_capture = [layout(to_data(call)) for call in rep.calls]
    strip_capture([rep])
    without = [layout(to_data(call)) for call in rep.calls]
    grown = [len(a.encode()) - len(b.encode()) for a, b in zip(with_capture, without, strict=True)]
    return {
        "calls": len(grown),
        "bytes_per_call": sum(grown) / len(grown),
        "bytes_per_repetition": sum(grown),
        "call_bytes_without": sum(len(b.encode()) for b in without) / len(without),
        "first_call": grown[0],
        "last_call": grown[-1],
    }


def capture_figures(count: int, steps: int) -> dict[str, Any]:
    use_callgrind = shutil.which("valgrind") is not None
    per_call: dict[str, float] = {}
    work = Path(os.environ.get("TMPDIR", "/tmp"))
    for name in BODIES:
        if use_callgrind:
            out = work / f"causes-sent-of-{os.getpid()}-{name}.out"
            try:
                per_call[name] = instructions(name, count, out) / count
            finally:
                out.unlink(missing_ok=True)
        else:
            command = [sys.executable, __file__, "--drive", name, "--count", str(count)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            per_call[name] = json.loads(done.stdout)["cpu_s"] / count
    return {
        "unit": "instructions" if use_callgrind else "cpu_seconds",
        "count": count,
        "sent_of": per_call,
        "report": report_bytes(steps),
    }


def print_capture(figures: dict[str, Any]) -> None:
    print(f"capture: sent_of per sampling call ({figures['count']} calls each)")
    for name, value in figures["sent_of"].items():
        counted = figures["unit"] == "instructions"
        shown = f"{value / 1e6:8.3f} M instructions" if counted else f"{value * 1e6:8.1f} us CPU"
        print(f"  {name:<8} body {shown}")
    report = figures["report"]
    print(f"capture: JSON report per call, {report['calls']}-step conversation, sent + texts")
    print(
        f"  +{report['bytes_per_call']:.0f} bytes per call (first call +{report['first_call']}, last +"
        f"{report['last_call']}; a call record without them: {report['call_bytes_without']:.0f} bytes); "
        f"+{report['bytes_per_repetition']} bytes per repetition"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--count", type=int, default=200, help="sent_of calls counted per body (--capture)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--capture", action="store_true", help="only the capture figures")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one run each, nothing judged")
    parser.add_argument("--lean", action="store_true", help="also measure the side 'lean' (see LEAN)")
    parser.add_argument("--side", choices=(*SIDES, LEAN, "records"), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--drive", choices=BODIES, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.side is not None:
        print(json.dumps(one_side(args.side, args.tasks, args.n, args.steps)))
        return 0
    if args.drive is not None:
        drive(args.drive, args.count)
        return 0
    started = time.perf_counter()
    if args.smoke:
        args.tasks, args.n, args.steps, args.repeats, args.count = 15, 3, 5, 1, 5
    output: dict[str, Any] = {}
    if not args.capture:
        result = measure(args)
        output["end_of_session"] = result
        medians, walls = result["median_cpu_seconds"], result["median_wall_seconds"]
        size = f"{args.tasks} tasks x {args.n} repetitions x {args.steps} steps"
        print(f"end of session, {size}, {args.repeats} runs each")
        print(f"  (CPU seconds of the end of session, ratios of their medians; load average {os.getloadavg()[0]:.1f})")
        for side in (LEAN, *SIDES)[::-1] if args.lean else SIDES[::-1]:
            print(
                f"  {side:<8} median {medians[side]:8.3f} s CPU   spread {result['spread'][side] * 100:5.1f} %"
                f"   wall {walls[side]:8.3f} s"
            )
        verdict = "" if args.smoke else f"  (target <= 1.10: {'met' if result['ratio_cause'] <= 1.10 else 'NOT met'})"
        print(f"  the attribution (cause / none):        x{result['ratio_cause']:.3f}{verdict}")
        print(f"  finding causes alone (cause / carried): x{result['ratio_analysis']:.3f}")
        print(f"  carrying sent + texts (carried / none): x{result['ratio_carried']:.3f}")
        print(f"  the attribution in wall-clock time:     x{result['wall_ratio_cause']:.3f}")
        if args.lean:
            print(f"  lean (sent + texts kept for tasks with a cause only) / none: x{result['ratio_lean']:.3f}")
        print(f"  task_finding timed again in the cause side: {result['finding_share'] * 100:.1f} % of its CPU")
        print(f"  causes found: {', '.join(f'{k} {v}' for k, v in sorted(result['found'].items()))}")
    figures = capture_figures(args.count, args.steps)
    output["capture"] = figures
    print_capture(figures)
    print(f"  took {time.perf_counter() - started:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(output, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
