"""Calls that overlap in time are one step whose requests form a set (issue 41): their order is never a cause.

A forecaster agent asks about two or three cities at once (threads, ``asyncio.gather``), then summarises the answers
in its own order. Which question leaves first differs from one repetition to the next; the plugin must read the
questions sent together as one step, the same set in every repetition, and find the cause elsewhere: the summary's
decision (``sampling at step 2``), in the cause and in the divergence map alike, for the chat completions, Responses
and Messages APIs. The rule is stated as a property too: any start order and any completion order of the same
overlapping calls gives the same cause.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from cause_records import call, chat, forecaster, question, repetition, text, timed, tool
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_consistency.analysis.cause.attribute import task_finding
from pytest_consistency.analysis.trajectory.divergence import divergence_map
from pytest_consistency.model.cause import Finding
from pytest_consistency.model.records import RepetitionResult

TASK = "test_agent.py::test_agent[t]"
WEATHER = {"Paris": "sunny", "Rome": "rain", "Oslo": "snow"}
APIS = ["chat", "responses", "anthropic"]


def finding(reps: list[RepetitionResult]) -> Finding:
    found = task_finding(TASK, reps, {})
    assert found is not None
    return found


def parted_at(reps: list[RepetitionResult]) -> int | None:
    mapped = divergence_map(reps, True)
    assert mapped is not None
    return mapped.divergent_step


@pytest.mark.parametrize("api", APIS)
def test_the_order_of_overlapping_calls_is_not_a_cause(api: str) -> None:
    # repetition 2 sent Rome first and its summary was decided otherwise: the order happens to split the outcomes as
    # the summary does, and read as a sequence it was named "input at step 1"
    orders = [["Paris", "Rome"], ["Rome", "Paris"], ["Paris", "Rome"]]
    reps = [
        repetition("t", r, forecaster(order, WEATHER, "ok" if r != 2 else "wrong", api, start=1000.0 + r), r != 2)
        for r, order in enumerate(orders, start=1)
    ]
    found = finding(reps)
    assert (found.cause, found.step, found.others) == ("sampling", 2, ())
    assert parted_at(reps) == 2
    assert divergence_map(reps, True).steps == 2  # type: ignore[union-attr]


def test_a_different_set_of_overlapping_requests_is_still_input() -> None:
    reps = [
        repetition("t", 1, forecaster(["Paris", "Rome"], WEATHER), True),
        repetition("t", 2, forecaster(["Oslo", "Paris"], WEATHER, "wrong"), False),
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("input", 1)
    assert [side.text for side in found.sides] == ["weather in Rome…", "weather in Oslo…"]


def test_which_question_got_which_answer_is_compared() -> None:
    # the same two answers, swapped between the questions: the model decided otherwise, even though the answers
    # taken as a set are the same
    swapped = {"Paris": "rain", "Rome": "sunny"}
    reps = [
        repetition("t", 1, forecaster(["Paris", "Rome"], WEATHER), True),
        repetition("t", 2, forecaster(["Paris", "Rome"], swapped), False),
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("sampling", 1)
    assert "sunny" in found.detail and "rain" in found.detail


def test_calls_that_do_not_overlap_keep_their_order() -> None:
    # each question sent after the previous answer came back: a sequence, and its order is what the agent asked
    apart = [0.0, 0.5]
    reps = [
        repetition("t", 1, forecaster(["Paris", "Rome"], WEATHER, offsets=apart), True),
        repetition("t", 2, forecaster(["Rome", "Paris"], WEATHER, "wrong", offsets=apart), False),
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("input", 1)
    assert parted_at(reps) == 1


def test_an_sdk_retry_inside_overlapping_calls_keeps_them_one_step() -> None:
    # Rome's first attempt was answered 429 and the SDK retried it after Paris's answer came back: one step, whose
    # route differs (retries, errors), not a step more
    plain = forecaster(["Paris", "Rome"], WEATHER)
    retried = forecaster(["Paris", "Rome"], WEATHER)
    failed = timed(call(question("Rome"), None, status=429, error="429"), 1000.0005, 5.0)
    retried[1].retry_index = 1
    timed(retried[1], 1000.25, 100.0)  # after Paris's answer (1000.2): it overlaps nothing but its first attempt
    retried[2].started_at = 1000.36
    retried.insert(1, failed)
    reps = [repetition("t", 1, plain, True), repetition("t", 2, retried, False)]
    found = finding(reps)
    assert (found.cause, found.step) == ("route", 1)
    assert set(found.kinds) == {"retries", "errors"}
    assert divergence_map(reps, True).steps == 2  # type: ignore[union-attr]


def test_records_without_timings_read_as_a_sequence() -> None:
    # a cassette recorded before calls kept their timings: nothing says they overlapped
    reps = [
        repetition("t", 1, forecaster(["Paris", "Rome"], WEATHER), True),
        repetition("t", 2, forecaster(["Rome", "Paris"], WEATHER, "wrong"), False),
    ]
    for rep in reps:
        for record in rep.calls:
            record.started_at = record.latency_ms = None
    assert (finding(reps).cause, finding(reps).step) == ("input", 1)


# The rule as a property: any start order and any completion order of the same overlapping calls, in any order of
# the records (a replay sends them in its own order; their recorded times are the recording's), gives the same cause.


@st.composite
def interleavings(draw: Any) -> dict[str, Any]:
    api = draw(st.sampled_from(APIS))
    cities = draw(st.sampled_from([["Paris", "Rome"], ["Paris", "Rome", "Oslo"]]))
    n = draw(st.integers(2, 5))
    finals = draw(st.lists(st.sampled_from(["ok", "wrong"]), min_size=n, max_size=n))
    swapped = draw(st.lists(st.booleans(), min_size=n, max_size=n))  # the model swapped two answers at step 1
    timings = []
    for _ in range(n):
        # every start within 5 ms, every answer at least 20 ms long: they all overlap, in any start and end order
        offsets = draw(st.lists(st.floats(0, 0.005), min_size=len(cities), max_size=len(cities)))
        latencies = draw(st.lists(st.floats(20, 400), min_size=len(cities), max_size=len(cities)))
        timings.append((offsets, latencies))
    return {
        "api": api,
        "cities": cities,
        "finals": finals,
        "swapped": swapped,
        "timings": timings,
        "shuffle": draw(st.randoms(use_true_random=False)),
    }


def forecasts(swap: bool) -> dict[str, str]:
    return {**WEATHER, "Paris": WEATHER["Rome"], "Rome": WEATHER["Paris"]} if swap else dict(WEATHER)


def interleaved(plan: dict[str, Any], canonical: bool) -> list[RepetitionResult]:
    reps = []
    for r, (final, swap, (offsets, latencies)) in enumerate(
        zip(plan["finals"], plan["swapped"], plan["timings"], strict=True), start=1
    ):
        cities = list(plan["cities"])
        weather = {city: forecasts(swap)[city] for city in cities}
        if canonical:  # the cities in one order, sent 1 ms apart, answered in that order
            calls = forecaster(cities, weather, final, plan["api"], start=1000.0 * r)
        else:
            calls = forecaster(cities, weather, final, plan["api"], 1000.0 * r, latencies, offsets)
            head = calls[:-1]
            plan["shuffle"].shuffle(head)  # recorded in any order: a replay sends them as it goes
            calls = [*head, calls[-1]]
        reps.append(repetition("t", r, calls, final == "ok"))
    return reps


def named(reps: list[RepetitionResult]) -> tuple[Any, ...]:
    found = task_finding(TASK, reps, {})
    mapped = divergence_map(reps, True)
    shape = None if found is None else (found.cause, found.step, found.others)
    return shape, None if mapped is None else (mapped.divergent_step, mapped.steps, mapped.distinct)


@settings(max_examples=150, deadline=None)
@given(plan=interleavings())
def test_any_interleaving_of_overlapping_calls_gives_the_same_cause(plan: dict[str, Any]) -> None:
    assert named(interleaved(plan, canonical=False)) == named(interleaved(plan, canonical=True))


def test_the_property_sees_both_causes() -> None:
    # what the property ranges over includes sampling at step 1 (a swap) and at step 2 (the summary)
    plan = {
        "api": "chat",
        "cities": ["Paris", "Rome"],
        "finals": ["ok", "ok", "wrong"],
        "swapped": [False, True, False],
        "timings": [([0.004, 0.0], [300.0, 50.0])] * 3,
        "shuffle": random.Random(1),
    }
    found = task_finding(TASK, interleaved(plan, canonical=False), {})
    assert found is not None and (found.cause, found.step) == ("sampling", 2)
    plan["finals"] = ["ok", "wrong", "ok"]
    found = task_finding(TASK, interleaved(plan, canonical=False), {})
    assert found is not None and (found.cause, found.step) == ("sampling", 1)


def test_a_sequential_agent_is_read_as_before() -> None:
    # timed calls that never overlap: the same steps as untimed ones
    first = chat("You are a bookkeeper.")
    calls = [timed(call(first, tool("search")), 1000.0, 100.0), timed(call(first, text("total-42")), 1000.2, 100.0)]
    again = [timed(call(first, tool("search")), 2000.0, 100.0), timed(call(first, text("total-41")), 2000.2, 100.0)]
    found = finding([repetition("t", 1, calls, True), repetition("t", 2, again, False)])
    assert (found.cause, found.step) == ("sampling", 2)


def test_sampling_past_calls_sent_together_is_not_confirmed_by_a_resample_of_another_call() -> None:
    # a resample replays calls one by one: its step 2 is the second question, not the summary the cause names
    reps = [
        repetition("t", r, forecaster(["Paris", "Rome"], WEATHER, "ok" if r != 2 else "wrong"), r != 2)
        for r in (1, 2, 3)
    ]
    found = finding(reps)
    assert (found.cause, found.step) == ("sampling", 2)
    assert "--consistency-resample=" not in found.advice and "more repetitions" in found.advice
    plain = [
        repetition("t", r, [call(chat("You are a forecaster."), text("ok" if r != 2 else "no"))], r != 2)
        for r in (1, 2)
    ]
    assert f"--consistency-resample='{TASK}@1'" in finding(plain).advice
