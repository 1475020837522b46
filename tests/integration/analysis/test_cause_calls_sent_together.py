"""Calls sent together are one step (issue 41): real SDK agents on the loopback server, from the wire alone.

A forecaster asks about two cities at once, from two threads (``pinned_client``) or with ``asyncio.gather``
(``async_pinned_client``), then asks the model to summarise both answers, in the order it sorts them. Odd repetitions
send Paris first, even ones Rome first (a stagger of 30 ms, each answer 300 ms long: the calls always overlap);
repetition 2's summary is answered otherwise, and fails. Read as a sequence, the order of the questions split the
outcomes as the summary does, and the cause was ``input at step 1`` (``--consistency-cause-max=input=0`` failed on
an agent that varies nothing); read as one step of two calls, it is ``sampling at step 2``, recorded live and
replayed serially, by ``-n 2`` and from merged shards.
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_openai import FakeOpenAI, Step
from suites import load_report, replays_everywhere, run_recorded

AGENT = """
import asyncio
import threading
import time

import pytest

CITIES = ("Paris", "Rome")


def question(city):
    return [{"role": "system", "content": "You are a forecaster."}, {"role": "user", "content": f"weather in {city}?"}]


def summary(weather):
    line = "; ".join(f"{city}: {weather[city]}" for city in sorted(weather))
    return [{"role": "system", "content": "You are a forecaster."}, {"role": "user", "content": f"summarise: {line}"}]


def order(consistency):
    return CITIES if consistency.repeat % 2 else tuple(reversed(CITIES))


def finish(client, weather, consistency):
    reply = client.chat.completions.create(model="fake-model", messages=summary(weather))
    answer = reply.choices[0].message.content
    consistency.record(answer)
    assert answer == "ok", answer


@pytest.mark.repeat_consistency(n=3)
def test_threads(pinned_client, consistency):
    weather = {}

    def ask(city):
        reply = pinned_client.chat.completions.create(model="fake-model", messages=question(city))
        weather[city] = reply.choices[0].message.content

    threads = []
    for city in order(consistency):
        threads.append(threading.Thread(target=ask, args=(city,)))
        threads[-1].start()
        time.sleep(0.03)
    for thread in threads:
        thread.join()
    finish(pinned_client, weather, consistency)


@pytest.mark.asyncio
@pytest.mark.repeat_consistency(n=3)
async def test_gather(async_pinned_client, pinned_client, consistency):
    async def ask(city, delay):
        await asyncio.sleep(delay)
        reply = await async_pinned_client.chat.completions.create(model="fake-model", messages=question(city))
        return city, reply.choices[0].message.content

    pairs = await asyncio.gather(*(ask(city, 0.03 * i) for i, city in enumerate(order(consistency))))
    finish(pinned_client, dict(pairs), consistency)
"""

WEATHER = {"Paris": "sunny", "Rome": "rain"}


def forecast(body: dict[str, Any]) -> Step | None:
    """The answer to a question, whichever arrives first (300 ms late: the two always overlap); None for a summary,
    answered from the script."""
    asked = str(body.get("messages", [{}])[-1].get("content", ""))
    for city, weather in WEATHER.items():
        if asked == f"weather in {city}?":
            return Step(text=weather, delay=0.3)
    return None


def named(report: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for task in report["tasks"]:
        why = task.get("why") or {}
        trajectory = task.get("trajectory") or {}
        out[task["task_id"]] = (
            task["cause"],
            why.get("step"),
            tuple(why.get("others") or ()),
            trajectory.get("divergent_step"),
        )
    return out


def shares(report: dict[str, Any]) -> dict[str, Any]:
    return {cause: (s["tasks"], round(s["gap_pp"], 9)) for cause, s in report["summary"]["causes"].items()}


def timings(report: dict[str, Any]) -> dict[str, Any]:
    return {
        rep["nodeid"]: sorted((call["started_at"], call["latency_ms"]) for call in rep["calls"])
        for task in report["tasks"]
        for rep in task["repetitions"]
    }


EXPECTED = ("sampling", 2, (), 2)


def test_calls_sent_together_in_another_order_are_not_input(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.answer = forecast
    fake.script(*(Step(text="wrong" if repeat == 2 else "ok") for _ in range(2) for repeat in (1, 2, 3)))
    pytester.makepyfile(test_agent=AGENT)
    live = run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly", "--consistency-report=live.json")
    assert live.ret == 1, live.stdout.str()
    report = load_report(pytester, "live.json")
    # the questions overlapped, and left in another order in another repetition
    for task in report["tasks"]:
        for rep in task["repetitions"]:
            first, second = sorted(rep["calls"][:2], key=lambda c: c["started_at"])
            assert second["started_at"] < first["started_at"] + first["latency_ms"] / 1000
        assert len({rep["calls"][0]["decision"]["text"] for rep in task["repetitions"]}) == 2
    found = named(report)
    assert set(found.values()) == {EXPECTED}, found
    fake.reset()

    replays = replays_everywhere(pytester, fake.base_url, ret=1)
    assert named(replays["serial"]) == named(replays["xdist"]) == found
    # the recording session's calls carry the start and latency its cassettes keep: it groups as its replays do
    assert timings(replays["serial"]) == timings(report)
    both = replays["merged"]
    assert (named(both), shares(both)) == (found, shares(report))
    assert shares(report)["input"] == (0, 0.0)

    # the cause gate at input=0 passes: the agent varies nothing it sends
    lenient = ("--consistency-min-pass=0", "-p", "no:randomly", "--consistency-cause-max=input=0")
    gated = run_recorded(pytester, fake.base_url, "none", *lenient)
    assert gated.ret == 0, gated.stdout.str()
    assert fake.requests == []
