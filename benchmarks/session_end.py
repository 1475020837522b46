"""Figure 5: the end of a session (summary, gates, JSON report, other formats) at scale, without pytest.

Why without pytest: a 10,000-task session would take minutes to run only to reach the part measured here, and the
end of session is a pure function of the repetition records. So this builds ``RepetitionResult`` records the way
a session would have collected them (one call per repetition, about a third of the tasks inconsistent, some with
disagreeing answers) and times what ``finish.summarise`` does with them: ``build_summary``, ``conclude``,
``SessionSummary.to_dict`` redacted and dumped as JSON, read back (``SessionSummary.from_dict``, as the other
formats render from the redacted report), and the terminal, Markdown and HTML renders.

Each measurement runs in a fresh process (``python benchmarks/session_end.py TASKS N [--memory]``, one JSON line
on stdout) so that one size's garbage and allocator state do not leak into the other's; peak memory is taken by
``tracemalloc`` in a separate run, since tracing slows the code it measures.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import RouteSettings, RunFacts, SessionSummary
from pytest_consistency.plugin.finish import gc_paused
from pytest_consistency.report import builtin
from pytest_consistency.report.json_layout import layout
from pytest_consistency.secrets.literals import redact_text
from pytest_consistency.secrets.structures import redact_strings

BASE = "http://127.0.0.1:8000/v1"
#: Formats rendered besides the JSON report, when this version of the plugin has them.
FORMATS = ("terminal", "markdown", "html")
#: The gates a CI run would set, so that ``conclude`` decides something (keys are ``Gate.dest``).
THRESHOLDS: dict[str, float | None] = {
    "consistency_gap_max": 40.0,
    "answer_disagreement_max": 50.0,
    "pass_hat_k_min": 50.0,
    "route_drift_max": 0.0,
}
#: A live session knows its key and redacts every output with it (``finish.known_secrets``).
SECRETS = ["sk-benchmark-secret-0123456789abcdef"]


def alternated(script: str, sides: Sequence[str], repeats: int, args: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Each side of a benchmark ``repeats`` times, each run in a fresh process (``script --side SIDE ARGS``),
    the order of the sides reversed every other round so drift of the machine falls on both; per side, the JSON
    object each run printed last."""
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for round_ in range(repeats):
        for side in sides if round_ % 2 == 0 else reversed(sides):
            command = [sys.executable, script, "--side", side, *args]
            out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            runs[side].append(json.loads(out.strip().splitlines()[-1]))
    return runs


def replayed_call(**facts: Any) -> CallRecord:
    """One answered chat completion on the benchmark's route, replayed; ``facts`` are its figures."""
    return CallRecord(
        method="POST",
        url=BASE + "/chat/completions",
        base_url=BASE,
        key_fingerprint="sha256:0f1e2d3c",
        model_requested="fake-model",
        model_served="fake-model",
        status=200,
        replayed=True,
        **facts,
    )


def repetition(module: str, t: int, r: int, n: int, passed: bool, answer: str, **extra: Any) -> RepetitionResult:
    """Repetition ``r`` of synthetic task ``t`` (of ``module``): the record a session would have collected."""
    return RepetitionResult(
        task_id=f"{module}::test_task[{t}]",
        nodeid=f"{module}::test_task[{t}-rep{r}]",
        repeat=r,
        n=n,
        k=n,
        min_pass=0.0,
        order=t,
        outcome="passed" if passed else "failed",
        answer_recorded=True,
        answer=answer,
        normalized=answer,
        **extra,
    )


def synthetic_records(tasks: int, n: int, seed: int = 11) -> list[RepetitionResult]:
    """``tasks`` x ``n`` repetition records with one call each, from a fixed seed."""
    rng = random.Random(seed)
    reps = []
    for t in range(tasks):
        rate = rng.choice([1.0, 1.0, 0.8, 0.5, 0.0])
        answers = [f"answer {t} variant {v}" for v in range(1 if rate in (0.0, 1.0) else 3)]
        for r in range(1, n + 1):
            answer = rng.choice(answers)
            call = replayed_call(
                system_fingerprint="fp_test",
                latency_ms=round(rng.uniform(1, 50), 3),
                prompt_tokens=7,
                completion_tokens=3,
                total_tokens=10,
            )
            reps.append(
                repetition(
                    f"tests/test_tasks_{t // 100:03d}.py",
                    t,
                    r,
                    n,
                    rng.random() < rate,
                    answer,
                    duration=round(rng.uniform(0.001, 0.01), 6),
                    calls=[call],
                    cassette=f"cassettes/test_tasks/test_task_{t}/rep-{r}.yaml",
                )
            )
    return reps


def end_of_session(reps: list[RepetitionResult]) -> dict[str, float]:
    """What the controller does after the last repetition; wall seconds per step, ``total``, and ``cpu``: the
    process's CPU seconds for the whole (what a ratio is judged on: on a shared machine another process's load
    stretches the wall clock, not the work done)."""
    with gc_paused():  # as finish.summarise
        return _end_of_session(reps)


def _end_of_session(reps: list[RepetitionResult]) -> dict[str, float]:
    steps: dict[str, float] = {}
    cpu = time.process_time()
    start = time.perf_counter()
    route = RouteSettings(BASE, "fake-model", "sha256:0f1e2d3c", "OPENAI_API_KEY", False, 60.0, 1, None, None, 1)
    summary = build_summary(reps, run=RunFacts(route=route, record_mode="none"))
    steps["build_summary"] = time.perf_counter() - start
    mark = time.perf_counter()
    conclude(summary, THRESHOLDS)
    steps["conclude"] = time.perf_counter() - mark
    mark = time.perf_counter()
    data = summary.to_dict()
    steps["to_dict"] = time.perf_counter() - mark
    mark = time.perf_counter()
    data = redact_strings(data, SECRETS)
    steps["redact"] = time.perf_counter() - mark
    mark = time.perf_counter()
    layout(data)  # as report.json_report.write_atomic
    steps["json_dumps"] = time.perf_counter() - mark
    # The other formats render from the redacted report read back, as outputs.prepare does.
    mark = time.perf_counter()
    redacted = SessionSummary.from_dict(data)
    steps["from_dict"] = time.perf_counter() - mark
    for name in FORMATS:
        fmt = builtin(name)
        if fmt is None:
            continue
        mark = time.perf_counter()
        redact_text(fmt.render(redacted), SECRETS)  # as outputs.render
        steps[name] = time.perf_counter() - mark
    steps["total"] = time.perf_counter() - start
    steps["cpu"] = time.process_time() - cpu
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("tasks", type=int)
    parser.add_argument("n", type=int)
    parser.add_argument("--memory", action="store_true", help="trace allocations and report the peak instead")
    args = parser.parse_args(argv)
    reps = synthetic_records(args.tasks, args.n)
    result: dict[str, Any] = {"tasks": args.tasks, "n": args.n}
    if args.memory:
        tracemalloc.start()
        end_of_session(reps)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        result["peak_bytes"] = peak
    else:
        result["seconds"] = end_of_session(reps)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
