"""Session summaries whose inconsistent tasks each have a known cause, for the tests of the outputs (issue 28).

Built from real request bodies (:mod:`cause_records`) and read back from their JSON, as every output renders from
the report's data: ``clock`` (input at step 1, the system prompt ends with a time), ``search`` (environment at step
2, another tool result), ``sampled`` (sampling at step 1), ``answers`` (outside the model: same calls, answers
differ, every repetition passed, so no gap) and ``steady`` (consistent).
"""

from __future__ import annotations

import json
from typing import Any

from cause_records import repetition, tool, two_steps
from suites import route_settings

from pytest_consistency.analysis.baseline import compare
from pytest_consistency.analysis.summary import build_summary, conclude
from pytest_consistency.model.records import RepetitionResult
from pytest_consistency.model.result import RunFacts, SessionSummary
from pytest_consistency.secrets.structures import redact_strings

#: A credential a repetition of ``clock`` writes into its system prompt, inside the span that differs.
SECRET = "sk-proj-clockSecret0123456789abcdefXYZ"


def cause_repetitions(secret: str | None = None) -> list[RepetitionResult]:
    """Five repetitions of each task; with ``secret``, the clock's differing span holds it."""
    reps = []
    for r in range(1, 6):  # sampling at step 1: 3 of 5 passed
        calls = two_steps()
        if r > 3:
            calls[0].decision = tool("list_emails")
        reps.append(repetition("sampled", r, calls, r <= 3))
    for r in range(1, 6):  # input at step 1: 4 of 5 passed
        stamp = f"token {secret} Now: 09:{10 + r}" if secret else f"Now: 09:{10 + r}"
        reps.append(repetition("clock", r, two_steps(f"You are a bookkeeper. {stamp}"), r != 5))
    for r in range(1, 6):  # environment at step 2: 2 of 5 passed
        reps.append(repetition("search", r, two_steps(result=f"{40 + r % 2} invoices"), r % 2 == 0))
    for r in range(1, 6):  # answers only
        reps.append(repetition("answers", r, two_steps(), True, answer=f"a{r % 2}"))
    for r in range(1, 6):
        reps.append(repetition("steady", r, two_steps(), True))
    return reps


def cause_summary(secret: str | None = None, **gates: float) -> SessionSummary:
    """The summary of :func:`cause_repetitions`, concluded, read back from its JSON."""
    summary = conclude(build_summary(cause_repetitions(secret)), gates)
    summary.exit_status = 0 if summary.passed else 1
    return SessionSummary.from_dict(json.loads(json.dumps(summary.to_dict())))


def redacted(summary: SessionSummary, *secrets: str) -> SessionSummary:
    """The copy every output renders from: the report's data with ``secrets`` redacted (as the plugin's end does)."""
    data: Any = redact_strings(summary.to_dict(), list(secrets))
    return SessionSummary.from_dict(data)


#: The file of :func:`wide_summary`'s tasks: ids as long as a real suite's (a path, a test, a parameter).
WIDE_FILE = "tests/agents/test_bookkeeper_agent.py"


def wide_repetitions(n: int = 10, failing: int = 4) -> list[RepetitionResult]:
    """Six tasks of ``n`` repetitions with long ids: sampling (the last ``failing`` repetitions list emails and
    fail), input (a clock in the system prompt; the last fails), environment (every other search result differs and
    fails), outside the model (answers differ, all pass), a steady task and one that fails every time."""
    reps = []
    for r in range(1, n + 1):
        calls = two_steps()
        if r > n - failing:
            calls[0].decision = tool("list_emails")
        name = f"{WIDE_FILE}::test_monthly_total[invoices-march-2024]"
        reps.append(repetition(name, r, calls, r <= n - failing, n=n, min_pass=0.5))
    for r in range(1, n + 1):
        calls = two_steps(f"You are a bookkeeper. Now: 09:{10 + r}")
        reps.append(repetition(f"{WIDE_FILE}::test_clock_in_prompt[europe-berlin]", r, calls, r != n, n=n))
    for r in range(1, n + 1):
        calls = two_steps(result=f"{40 + r % 2} invoices")
        reps.append(repetition(f"{WIDE_FILE}::test_search_results[paginated]", r, calls, r % 2 == 0, n=n))
    for r in range(1, n + 1):
        name = f"{WIDE_FILE}::test_answer_wording[free-text-summary]"
        reps.append(repetition(name, r, two_steps(), True, answer=f"a{r % 2}", n=n))
    for r in range(1, n + 1):
        reps.append(repetition(f"{WIDE_FILE}::test_steady_lookup[vendor-name]", r, two_steps(), True, n=n))
    for r in range(1, n + 1):
        name = f"{WIDE_FILE}::test_refund_policy[partial-refund]"
        reps.append(repetition(name, r, two_steps(), False, n=n, min_pass=1.0))
    return reps


def wide_summary(baseline: bool = True) -> SessionSummary:
    """The summary of :func:`wide_repetitions` (n = 10) on a pinned route, concluded, read back from its JSON; with
    ``baseline``, compared with a run of the same tasks in which the sampling task failed once and not four times."""
    route = route_settings(base_url="http://127.0.0.1:9/v1", model="gpt-test", key_fingerprint="sha256:aaaa")
    run = RunFacts(route=route)
    summary = conclude(build_summary(wide_repetitions(), run=run), {})
    if baseline:
        before = conclude(build_summary(wide_repetitions(failing=1), run=run), {})
        summary.comparison = compare(before, summary, "baseline.json")
    summary.exit_status = 0 if summary.passed else 1
    return SessionSummary.from_dict(json.loads(json.dumps(summary.to_dict())))
