"""The plan before the run against hand-computed figures: the decided chance is the exact binomial sum of
stats.rate (and stats.sequential.operating in sequential mode), the planning n is planning_n / planning_cap, dollars
are tokens x the price, minutes the wall time x repetitions / concurrency, and a task without history says what is
assumed."""

from __future__ import annotations

import math

import pytest
from suites import records

from pytest_consistency.analysis.plan import (
    ASSUMED_RATE,
    PlanError,
    PlannedTask,
    build_plan,
    plan_task,
    planned_from,
    recorded_seconds,
)
from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.prices import Price
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import Analysis, SessionSummary
from pytest_consistency.stats.rate import decided_probability
from pytest_consistency.stats.sequential import operating, planning_cap

PRICES = {"m": Price(1.0, 2.0, 0.5)}


def _call(model: str, prompt: int, completion: int) -> CallRecord:
    return CallRecord(
        "POST",
        "http://h/v1/chat/completions",
        "http://h/v1",
        None,
        model,
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
    )


def _summary(
    pattern: str, min_rate: float | None = 0.8, model: str = "m", seconds: float = 3.0, analysis: Analysis | None = None
) -> SessionSummary:
    reps: list[RepetitionResult] = records({"t": pattern}, min_rate=min_rate)
    for rep in reps:
        rep.calls.append(_call(model, 1000, 500))
        rep.duration = seconds
    return build_summary(reps, analysis=analysis)


def test_nine_of_ten_against_0_8_is_the_exact_binomial_sum() -> None:
    summary = _summary("PPPPPPPPPF")
    plan = plan_task(PlannedTask("t", 10, 1.0, 0.8), summary.tasks[0], Analysis(), PRICES)
    # PASS at n = 10 and 0.8 (alpha 0.05) needs 10/10: P(X >= 10 | 0.8) = 0.107 > 0.05, P(X >= 9) = 0.376;
    # so 10/10 does not pass either (0.8^10 = 0.107 > 0.05): no count passes at n = 10, the chance is 0.
    assert plan.decided == 0.0
    assert plan.history == "9/10"
    assert plan.rate == 0.9
    # At n = 30, PASS needs c with P(X >= c | 0.8) <= 0.05: c = 28 (P(X >= 28) = 0.044, P(X >= 27) = 0.123).
    at_30 = plan_task(PlannedTask("t", 30, 1.0, 0.8), summary.tasks[0], Analysis(), PRICES)
    chance = math.fsum(math.comb(30, c) * 0.9**c * 0.1 ** (30 - c) for c in range(28, 31))
    assert at_30.decided == pytest.approx(chance, rel=1e-12)
    assert at_30.decided == pytest.approx(0.4114, abs=1e-4)


def test_dollars_are_tokens_times_the_price_and_minutes_the_wall_time() -> None:
    summary = _summary("PPPPPPPPPF")
    plan = plan_task(PlannedTask("t", 10, 1.0, 0.8), summary.tasks[0], Analysis(), PRICES, concurrency=2)
    assert plan.tokens_per_repetition == 1500
    assert plan.expected_repetitions == 10
    assert plan.expected_tokens == 15000
    # 1000 input tokens at $1 / M and 500 output tokens at $2 / M: $0.002 a repetition, $0.02 for ten.
    assert plan.usd_per_repetition == pytest.approx(0.002)
    assert plan.expected_usd == pytest.approx(0.02)
    # 3 s a repetition, 10 repetitions, 2 at once: 15 s.
    assert plan.expected_minutes == pytest.approx(0.25)


def test_a_model_without_a_price_is_named_never_zero() -> None:
    summary = _summary("PPPPPPPPPF", model="local-llama")
    plan = plan_task(PlannedTask("t", 10, 1.0, 0.8), summary.tasks[0], Analysis(), PRICES)
    assert plan.expected_usd is None
    assert plan.unpriced_models == ["local-llama"]
    whole = build_plan("r.json", planned_from(summary), summary, {}, Analysis(), PRICES)
    assert whole.usd_complete is False
    assert whole.unpriced_models == ["local-llama"]


def test_the_planning_n_is_planning_n() -> None:
    summary = _summary("PPPPPPPPPF")
    plan = plan_task(PlannedTask("t", 10, 1.0, 0.8), summary.tasks[0], Analysis(), PRICES)
    # The first n at which a task at 0.9 passes 0.8 with probability 0.8, the figure the summary advises. By hand
    # (math.comb sums): at n = 82 PASS needs 72 (P(X >= 72 | 0.8) <= 0.05), P(X >= 72 | 0.9) = 0.806; 81 is short.
    assert plan.n_to_decide == summary.tasks[0].plan_n == 82


def test_sequential_mode_reads_operating_and_planning_cap() -> None:
    analysis = Analysis(sequential_alpha=0.05)
    summary = _summary("PPPPPPPPPP")
    plan = plan_task(PlannedTask("t", 40, 1.0, 0.8), summary.tasks[0], analysis, PRICES, n_min=2)
    expected = operating(1.0, 40, 0.8, 0.05, 2)
    assert plan.decided == expected.passed + expected.failed
    assert plan.expected_repetitions == expected.repetitions
    assert plan.expected_repetitions < 40  # stops at the decision
    assert plan.n_to_decide == planning_cap(10, 10, 0.8, 0.05)  # the figure is stats.sequential's, whatever it is
    assert plan.expected_tokens == pytest.approx(1500 * expected.repetitions)


def test_a_min_pass_task_gives_its_chance_of_passing() -> None:
    summary = _summary("PPPPF", min_rate=None)
    plan = plan_task(PlannedTask("t", 5, 0.8, None), summary.tasks[0], Analysis(), PRICES)
    # 4 of 5 needed at a rate of 0.8: P(X >= 4 | 5, 0.8) = 5 * 0.8^4 * 0.2 + 0.8^5.
    assert plan.decided == pytest.approx(5 * 0.8**4 * 0.2 + 0.8**5, rel=1e-12)
    assert plan.bar == "min_pass 0.8"


def test_a_task_without_history_says_what_is_assumed() -> None:
    summary = _summary("PPPPPPPPPF")
    planned = [PlannedTask("t", 10, 1.0, 0.8), PlannedTask("new", 20, 1.0, 0.8)]
    plan = build_plan("r.json", planned, summary, {}, Analysis(), PRICES)
    new = plan.tasks[1]
    assert new.history is None
    assert new.rate == ASSUMED_RATE
    assert new.assumed == "no history: assumed rate 0.5 (the widest), tokens, dollars and minutes unknown"
    assert new.expected_tokens is None and new.expected_usd is None
    assert plan.expected_tokens == 15000 and plan.tokens_complete is False
    assert plan.expected_repetitions == 30


def test_nothing_to_plan_is_an_error_naming_the_source() -> None:
    with pytest.raises(PlanError, match=r"r\.json: no task to plan"):
        build_plan("r.json", [], None, {}, Analysis(), PRICES)


def test_a_gate_on_its_bounds_gets_a_chance_and_the_fresh_run() -> None:
    reps = []
    for i, pattern in enumerate(["PPPPPPPPPP", "PPPPPPPPPF", "PPPPPPPPPP", "PPPPPPPFPP"]):
        reps += records({f"t{i}": pattern}, k=5)
    summary = build_summary(reps)
    plan = build_plan("r.json", planned_from(summary), summary, {"consistency_gap_max": 30.0}, Analysis(), PRICES)
    (gate,) = plan.gates
    assert gate.option == "--consistency-gap-max"
    assert gate.decided is not None and 0.0 <= gate.decided <= 1.0
    # A fresh run at four times n has bounds half as wide: more likely to decide.
    larger = build_plan(
        "r.json",
        [PlannedTask(p.task_id, 40, p.min_pass, p.min_rate) for p in planned_from(summary)],
        summary,
        {"consistency_gap_max": 30.0},
        Analysis(),
        PRICES,
    )
    assert larger.gates[0].decided is not None and larger.gates[0].decided > gate.decided


def _timed(prompt: int, completion: int, latency_ms: float | None, started: float | None) -> CallRecord:
    call = _call("m", prompt, completion)
    call.latency_ms, call.started_at = latency_ms, started
    return call


def test_a_task_known_only_from_cassettes_has_its_price_and_the_assumed_rate() -> None:
    # Two recorded repetitions: 1500 and 3000 tokens; the calls of the second overlap (started 0.5 s apart).
    recorded = [
        [_timed(1000, 500, 2000.0, 100.0)],
        [_timed(1000, 500, 1000.0, 200.0), _timed(1000, 500, 2000.0, 200.5)],
    ]
    plan = plan_task(PlannedTask("t", 10, 1.0, 0.8), None, Analysis(), PRICES, concurrency=2, recorded=recorded)
    assert plan.rate == ASSUMED_RATE and plan.history is None and plan.cassettes == 2
    assert plan.assumed is not None and "no pass/fail in a cassette, assumed rate 0.5" in plan.assumed
    assert plan.tokens_per_repetition == 2250
    assert plan.expected_tokens == 22500
    # $1 and $2 per million: 1000 x 1 + 500 x 2 = 2000 micro-dollars a call, 1.5 calls a repetition.
    assert plan.usd_per_repetition == pytest.approx(0.003)
    assert plan.expected_usd == pytest.approx(0.03)
    # 2 s, then 0.5 + 2 = 2.5 s from the first start to the last end: 2.25 s x 10 repetitions / 2 workers.
    assert plan.seconds_per_repetition == pytest.approx(2.25)
    assert plan.expected_minutes == pytest.approx(2.25 * 10 / 2 / 60)
    assert plan.decided == decided_probability(10, 0.5, 0.8, 0.05)


def test_a_recorded_repetition_without_starts_sums_its_latencies_and_without_latency_has_no_time() -> None:
    assert recorded_seconds([_timed(1, 1, 1000.0, None), _timed(1, 1, 500.0, 3.0)]) == 1.5
    assert recorded_seconds([_timed(1, 1, None, 3.0)]) is None
    plan = plan_task(PlannedTask("t", 4, 1.0, None), None, Analysis(), PRICES, recorded=[[_timed(1, 1, None, None)]])
    assert plan.expected_minutes is None and plan.expected_tokens == 8


def test_the_report_wins_over_the_cassettes() -> None:
    summary = _summary("PPPPPPPPPF")
    recorded = [[_timed(9000, 9000, 1.0, None)]]
    plan = plan_task(PlannedTask("t", 10, 1.0, 0.8), summary.tasks[0], Analysis(), PRICES, recorded=recorded)
    assert plan.history == "9/10" and plan.cassettes is None and plan.tokens_per_repetition == 1500


def test_build_plan_takes_cassettes_by_task_without_a_report() -> None:
    recorded = {"a": [[_timed(10, 0, 1.0, None)]]}
    plan = build_plan(
        "cassettes", [PlannedTask("a", 3), PlannedTask("b", 3)], None, {}, Analysis(), PRICES, recorded=recorded
    )
    assert [t.cassettes for t in plan.tasks] == [1, None]
    assert plan.expected_tokens == 30 and not plan.tokens_complete


def test_in_sequential_mode_a_min_pass_task_is_planned_by_curtailments_exact_repetitions() -> None:
    summary = _summary("PPPPPPPPPF", min_rate=None)  # 9/10
    sequential = Analysis(sequential_alpha=0.05)
    plan = plan_task(PlannedTask("t", 3, 1.0, None), summary.tasks[0], sequential, PRICES)
    # min_pass 1.0 stops at the first failure: 1 + 0.9 + 0.9^2 repetitions on average, not n = 3.
    assert plan.expected_repetitions == pytest.approx(1 + 0.9 + 0.81, rel=1e-12)
    assert plan.expected_tokens == pytest.approx(1500 * 2.71)
    assert plan.expected_usd == pytest.approx(0.002 * 2.71)  # $0.002 a repetition (1000 x $1 + 500 x $2 per M)
    assert plan.decided == pytest.approx(0.9**3, rel=1e-12)  # the chance of a PASS is the full run's
    fixed = plan_task(PlannedTask("t", 3, 1.0, None), summary.tasks[0], Analysis(), PRICES)
    assert fixed.expected_repetitions == 3.0
