"""The pinned route, its clients, drift checks, attribution, tokens and preflight, over real loopback HTTP."""

from __future__ import annotations

import threading

import fake_openai
import pytest
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from suites import load_report as report
from suites import without_timings

AGENT = """
import openai
import pytest

def ask(client, model="fake-model"):
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "items under 20?"}])
    return reply.choices[0].message.content
"""


@pytest.fixture(autouse=True)
def _live(pytester: pytest.Pytester) -> None:
    """These sessions talk to live loopback servers: no cassettes (``--consistency-record=off``)."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nconsistency_record = off\n")


def run(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        "--consistency-report=report.json",
        *args,
    )


def assert_no_key(pytester: pytest.Pytester, result: pytest.RunResult) -> None:
    for text in (result.stdout.str(), result.stderr.str(), (pytester.path / "report.json").read_text()):
        assert GOOD_KEY not in text and GOOD_KEY[3:20] not in text


def test_pinned_stable_suite_passes_with_route_and_tokens(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.repeat_consistency(n=3)
def test_cheap(pinned_client, consistency):
    consistency.record(ask(pinned_client))
    assert len(consistency.calls) == 1 and consistency.calls[0].status == 200
"""
    )
    result = run(pytester, fake, "--route-drift-max=0", "--consistency-temperature=0", "--consistency-seed=7")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            f"route: {fake.base_url}  model fake-model  key sha256:*  timeout 60s  retries 1",
            "calls 3 (retries 0)   tokens 30   avg per task-repetition 10.0",
            "route drift 0.0 pp (0 of the 1 tasks with calls drifted)",
            "gate --route-drift-max: route drift 0.0 pp <= 0.0 pp  ok",
        ]
    )
    summary = report(pytester)["summary"]
    assert (
        summary["route"]["settings"]["model"] == "fake-model"
        and summary["route"]["settings"]["base_url"] == fake.base_url
    )
    assert summary["route"]["key_shown"].startswith("sha256:") and len(summary["route"]["key_shown"]) == 15
    assert summary["route"]["total_tokens"] == 30 and summary["route"]["avg_tokens_per_task"] == 10.0
    call = report(pytester)["tasks"][0]["repetitions"][0]["calls"][0]
    assert call["model_requested"] == call["model_served"] == "fake-model"
    assert call["url"] == fake.base_url + "/chat/completions" and call["pinned"] is True
    assert call["system_fingerprint"] == "fp_test" and call["latency_ms"] > 0
    assert (call["prompt_tokens"], call["completion_tokens"], call["total_tokens"]) == (7, 3, 10)
    assert all(r["body"]["temperature"] == 0 and r["body"]["seed"] == 7 for r in fake.requests)
    assert_no_key(pytester, result)


SWITCHES = {
    "base_url": "openai.OpenAI(base_url=BASE.replace('127.0.0.1', 'localhost'), max_retries=0)",
    "key": "openai.OpenAI(base_url=BASE, api_key=KEY + '-second', max_retries=0)",
    "model_requested": None,
}


@pytest.mark.parametrize("kind", list(SWITCHES))
def test_a_repetition_that_switches_route_fails_drift_gate(
    pytester: pytest.Pytester, fake: FakeOpenAI, kind: str
) -> None:
    client = SWITCHES[kind]
    other = f"ask({client})" if client else "ask(pinned_client, model='other-model')"
    pytester.makepyfile(
        test_agent=AGENT
        + f"""
BASE = {fake.base_url!r}
KEY = {GOOD_KEY!r}

@pytest.mark.repeat_consistency(n=3)
def test_switch(pinned_client, consistency):
    answer = {other} if consistency.repeat == 2 else ask(pinned_client)
    consistency.record(answer + str(consistency.repeat == 2))
"""
    )
    result = run(pytester, fake, "--route-drift-max=0")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*test_switch * 3/3        2  *  pass, route drift",
            "route drift 100.0 pp (1 of the 1 tasks with calls drifted)",
            "gate --route-drift-max: route drift 100.0 pp > 0.0 pp  FAILED",
        ]
    )
    task = report(pytester)["tasks"][0]
    assert task["attribution"] == "route drift"
    assert task["drift"]["kinds"][0] == kind  # asking for another model also gets another model served
    assert_no_key(pytester, result)


def test_same_route_different_answers_is_the_agent(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(Step(text="widget"), Step(text="gadget"), Step(text="widget"))
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.repeat_consistency(n=3)
def test_agent(pinned_client, consistency):
    consistency.record(ask(pinned_client))
"""
    )
    result = run(pytester, fake, "--route-drift-max=0", "--answer-disagreement-max=0")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["*test_agent * 3/3        2  *  pass, agent", "gate --route-drift-max: route drift 0.0 pp <= 0.0 pp  ok"]
    )
    assert report(pytester)["tasks"][0]["attribution"] == "agent"


def test_retries_over_the_limit_and_errors_by_kind(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(Step(status=429), Step(status=429))
    pytester.makepyfile(
        test_agent=AGENT
        + f"""
@pytest.mark.repeat_consistency(n=2)
def test_retry(pinned_client, consistency):
    own = openai.OpenAI(base_url={fake.base_url!r}, max_retries=2)  # the agent's own client, SDK default retries
    consistency.record(ask(own if consistency.repeat == 1 else pinned_client))
"""
    )
    result = run(pytester, fake, "--route-drift-max=0")
    assert result.ret == 1
    task = report(pytester)["tasks"][0]
    assert task["drift"]["kinds"] == ["retries", "errors"]
    assert task["drift"]["errors"] == {"429": 2}
    calls = task["repetitions"][0]["calls"]
    assert [(c["status"], c["retry_index"], c["pinned"]) for c in calls] == [
        (429, 0, False),
        (429, 1, False),
        (200, 2, False),
    ]
    result.stdout.fnmatch_lines(["*retries: 2 on one request > allowed 1*errors: 429 x2*"])


def test_dated_snapshot_is_not_drift_but_a_change_is(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(
        *[Step(served_model="fake-model-2024-08-06")] * 2,
        Step(served_model="fake-model-2025-01-01"),
        Step(served_model="fake-model-2025-01-01", system_fingerprint="fp_other"),
    )
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.parametrize("task", ["a", "b"])
@pytest.mark.repeat_consistency(n=2)
def test_snap(pinned_client, consistency, task):
    consistency.record(ask(pinned_client))
"""
    )
    run(pytester, fake, "-p", "no:randomly")
    tasks = report(pytester)["tasks"]
    assert tasks[0]["drift"]["kinds"] == []
    assert tasks[1]["drift"]["kinds"] == []
    assert tasks[1]["drift"]["warnings"] == ["system_fingerprint changed between calls (fp_other, fp_test)"]
    fake.reset()
    fake.script(Step(served_model="fake-model-2024-08-06"), Step(served_model="fake-model-2025-01-01"))
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.repeat_consistency(n=2)
def test_snap(pinned_client, consistency):
    consistency.record(ask(pinned_client))
"""
    )
    run(pytester, fake)
    assert report(pytester)["tasks"][0]["drift"]["kinds"] == ["model_served"]


def test_streaming_async_and_responses_api_are_recorded(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(Step(text="a b c"), Step(text="d e"), Step(text="f"), Step(text="g"))
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.repeat_consistency(n=1)
def test_sync_stream(pinned_client, consistency, pinned_route):
    stream = pinned_client.chat.completions.create(
        model=pinned_route.model, messages=[{"role": "user", "content": "x"}], stream=True,
        stream_options={"include_usage": True})
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    consistency.record(text)

@pytest.mark.asyncio
@pytest.mark.repeat_consistency(n=1)
async def test_async_stream(async_pinned_client, consistency, pinned_route):
    stream = await async_pinned_client.chat.completions.create(
        model=pinned_route.model, messages=[{"role": "user", "content": "x"}], stream=True,
        stream_options={"include_usage": True})
    consistency.record("".join([c.choices[0].delta.content or "" async for c in stream if c.choices]))

@pytest.mark.repeat_consistency(n=1)
def test_responses(pinned_client, consistency, pinned_route):
    copy = pinned_client.with_options(timeout=5)
    consistency.record(copy.responses.create(model=pinned_route.model, input="x").output_text)

@pytest.mark.asyncio
@pytest.mark.repeat_consistency(n=1)
async def test_responses_stream(async_pinned_client, consistency, pinned_route):
    stream = await async_pinned_client.responses.create(model=pinned_route.model, input="x", stream=True)
    consistency.record([e.type async for e in stream])
"""
    )
    result = run(pytester, fake, "-p", "asyncio", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()
    tasks = {t["task_id"].split("::")[1]: t for t in report(pytester)["tasks"]}
    assert tasks["test_sync_stream"]["answers"] == ["abc"]
    for name, t in tasks.items():
        (call,) = t["repetitions"][0]["calls"]
        assert call["model_served"] == "fake-model", name
        assert call["total_tokens"] == 10, name
        assert call["stream"] == name.endswith("stream"), name
    assert tasks["test_responses"]["repetitions"][0]["calls"][0]["url"].endswith("/v1/responses")


def test_token_budget_stops_live_calls_and_fails(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.repeat_consistency(n=4)
def test_spend(pinned_client, consistency):
    consistency.record(ask(pinned_client))
"""
    )
    result = run(pytester, fake, "--consistency-token-budget=15")
    assert result.ret == 1
    assert len(fake.requests) == 2  # 10 tokens, then 20 > 15: every later call is refused before sending
    result.stdout.fnmatch_lines(["*token budget exceeded: 20 tokens used > --consistency-token-budget=15*"])
    assert report(pytester)["summary"]["run"]["token_budget"] == {"limit": 15, "spent": 20, "exceeded_in": []}


def asking_task(pytester: pytest.Pytester, n: int) -> None:
    """The agent with one task that asks the pinned route once per repetition."""
    pytester.makepyfile(
        test_agent=AGENT
        + f"""
@pytest.mark.repeat_consistency(n={n})
def test_x(pinned_client, consistency):
    ask(pinned_client)
"""
    )


def test_preflight_turns_a_401_into_one_message_before_any_test(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-wrong-key-000000000000000")
    asking_task(pytester, 5)
    result = run(pytester, fake, "--consistency-preflight")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (len(fake.preflights), fake.requests) == (1, [])
    result.stderr.fnmatch_lines(["*preflight: * rejected the API key (401, key sha256:*); set $OPENAI_API_KEY*"])
    assert "sk-test-wrong-key" not in result.stdout.str() + result.stderr.str()
    monkeypatch.setenv("OPENAI_API_KEY", GOOD_KEY)
    fake.reset()
    wrong = fake.base_url.replace("/v1", "/api")
    result = pytester.runpytest(f"--consistency-base-url={wrong}", "--consistency-preflight")
    result.stderr.fnmatch_lines(["*answered 404 for model*check the base URL*"])
    result = pytester.runpytest("--consistency-base-url=http://127.0.0.1:9/v1", "--consistency-preflight")
    result.stderr.fnmatch_lines(["*preflight: cannot connect to http://127.0.0.1:9/v1*"])
    assert run(pytester, fake, "--consistency-preflight").ret == 0


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        ({"OPENAI_API_KEY": None}, [], "*no API key: $OPENAI_API_KEY is not set*"),
        ({"OPENAI_API_KEY": "YOUR_API_KEY"}, [], "*$OPENAI_API_KEY holds a placeholder*"),
        ({"MY_KEY": None}, ["--consistency-api-key-env=MY_KEY"], "*no API key: $MY_KEY is not set*"),
        ({}, ["--consistency-base-url=https://example.com/v1?utm_source=x"], "*query string or fragment*"),
        ({}, ["--consistency-base-url=https://api.example.com"], "*has no API path*/v1*"),
        ({}, ["--consistency-base-url=ftp://x/v1"], "*is not an http(s) URL*"),
        (
            {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"},
            ["--consistency-base-url=http://127.0.0.1:2/v1"],
            "*OPENAI_BASE_URL=http://127.0.0.1:1/v1 differs from the configured base URL*",
        ),
    ],
)
def test_route_problems_stop_the_session_before_any_test(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    fake: FakeOpenAI,
    env: dict[str, str | None],
    args: list[str],
    message: str,
) -> None:
    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    pytester.makepyfile(test_agent="def test_x(pinned_client):\n    pass\n")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert fake.requests == []


def test_route_from_yaml(pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAM_KEY", GOOD_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unused-00000000000000000000")
    pytester.makefile(
        ".yaml",
        c=f"route:\n  base_url: {fake.base_url}\n  model: fake-model\n  api_key_env: TEAM_KEY\n"
        "  max_retries: 0\n  timeout: 7\n",
    )
    pytester.makepyfile(
        test_agent="""
def test_route(pinned_route, pinned_client):
    assert (pinned_route.model, pinned_route.max_retries, pinned_route.timeout) == ("fake-model", 0, 7.0)
    assert pinned_client.max_retries == 0
    assert pinned_route.api_key not in repr(pinned_route)
"""
    )
    assert pytester.runpytest("--consistency-config=c.yaml").ret == 0


def test_xdist_gives_the_same_route_summary(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    pytester.makepyfile(
        test_agent=AGENT
        + f"""
@pytest.mark.parametrize("task", ["a", "b"])
@pytest.mark.repeat_consistency(n=3)
def test_mix(pinned_client, consistency, task):
    if task == "b" and consistency.repeat == 2:
        consistency.record(ask(openai.OpenAI(base_url={fake.base_url!r}, api_key={GOOD_KEY!r} + "-second")))
    else:
        consistency.record(ask(pinned_client))
"""
    )
    run(pytester, fake, "--route-drift-max=0")
    serial = report(pytester)
    run(pytester, fake, "--route-drift-max=0", "-n", "2")
    parallel = report(pytester)
    assert without_timings(serial) == without_timings(parallel)
    assert serial["summary"]["route"]["drift_pp"] == 50.0


def test_route_problem_under_xdist_errors_each_route_test_without_calls(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    pytester.makepyfile(test_agent="def test_x(pinned_client):\n    pass\n\ndef test_y(pinned_route):\n    pass\n")
    result = pytester.runpytest("-n", "2", f"--consistency-base-url={fake.base_url}")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*no API key: $OPENAI_API_KEY is not set*"])
    assert fake.requests == []


def test_streaming_is_not_buffered_by_the_recorder(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """The server holds the stream after its first event until the test has read it: a buffering recorder
    would deliver that event only after the server stopped holding (5 s later)."""
    fake.release = threading.Event()
    fake.script(Step(text="first second third", hold=fake.release))
    fake_openai.ACTIVE = fake  # the inner session runs in this process and imports the same module
    pytester.makepyfile(
        test_agent="""
import fake_openai
import pytest

@pytest.mark.repeat_consistency(n=1)
def test_stream(pinned_client, pinned_route, consistency):
    server = fake_openai.ACTIVE
    stream = pinned_client.chat.completions.create(
        model=pinned_route.model, messages=[{"role": "user", "content": "x"}], stream=True)
    chunks = iter(stream)
    first = next(chunks)
    assert server.holding, "the first chunk arrived only after the server finished"
    server.release.set()
    consistency.record(first.choices[0].delta.content + "".join(c.choices[0].delta.content for c in chunks))
"""
    )
    result = run(pytester, fake)
    assert result.ret == 0, result.stdout.str()
    assert report(pytester)["tasks"][0]["answers"] == ["firstsecondthird"]


def test_preflight_checks_only_the_routes_the_selected_tests_use(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An Anthropic key exported for other work, pointing nowhere: the OpenAI tests selected must still run.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "x1" * 20)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    asking_task(pytester, 2)
    result = run(pytester, fake, "--consistency-preflight")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert (len(fake.preflights), len(fake.requests)) == (1, 2)  # the preflight, then the two repetitions
    assert report(pytester)["summary"]["run"]["preflight"] == "ok"


def test_preflight_under_xdist_fails_the_tests_of_a_broken_route_before_their_calls(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-wrong-key-000000000000000")
    asking_task(pytester, 4)
    result = run(pytester, fake, "--consistency-preflight", "-n", "2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert len(fake.preflights) <= 2 and fake.requests == []  # one preflight per worker, no repetition's call
    result.stdout.fnmatch_lines(["*rejected the API key (401*"])
    assert "sk-test-wrong-key" not in result.stdout.str() + result.stderr.str()


def test_the_route_limits_the_tokens_of_a_request_that_sets_no_limit(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.repeat_consistency(n=1)
def test_task(pinned_client, consistency):
    ask = [{"role": "user", "content": "items?"}]
    pinned_client.chat.completions.create(model="fake-model", messages=ask)
    pinned_client.chat.completions.create(model="fake-model", messages=ask, max_completion_tokens=5)
    pinned_client.responses.create(model="fake-model", input="items?")
"""
    )
    result = run(pytester, fake, "--consistency-max-tokens=64")
    assert result.ret == 0, result.stdout.str()
    bodies = [r["body"] for r in fake.requests]
    assert bodies[0]["max_tokens"] == 64
    assert "max_tokens" not in bodies[1] and bodies[1]["max_completion_tokens"] == 5  # its own limit stands
    assert bodies[2]["max_output_tokens"] == 64 and "max_tokens" not in bodies[2]
