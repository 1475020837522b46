"""Per-repetition cassettes recorded from a live loopback server and replayed with no network and no key."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
import yaml
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from suites import load_report as report
from suites import without_timings

from pytest_consistency.cassette.messages import SecretInCassetteError
from pytest_consistency.cassette.persist import Persister
from pytest_consistency.cassette.scrub import Scrubber
from pytest_consistency.secrets.keys import fingerprint
from pytest_consistency.secrets.structures import redact_body

AGENT = """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_client, pinned_route, consistency):
    reply = pinned_client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "items under 20?"}])
    answer = reply.choices[0].message.content
    consistency.record(answer)
    assert answer == "widget"
"""


def suite(model: str = "fake-model", body: str = AGENT) -> str:
    return f"MODEL = {model!r}\n" + body


def run(pytester: pytest.Pytester, fake: FakeOpenAI, mode: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        f"--consistency-record={mode}",
        "--consistency-report=report.json",
        "-p",
        "no:randomly",
        *args,
    )


def cassette_files(pytester: pytest.Pytester) -> list[Path]:
    return sorted((pytester.path / "cassettes").rglob("*.yaml"))


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """Three repetitions recorded live, with different answers, then the key removed as on CI."""
    fake.script(Step(text="widget"), Step(text="gadget"), Step(text="widget"))
    pytester.makepyfile(test_agent=suite())
    result = run(pytester, fake, "once")
    assert result.ret == 1  # repetition 2 answered "gadget"
    assert len(fake.requests) == 3
    monkeypatch.delenv("OPENAI_API_KEY")
    fake.reset()
    return pytester


def test_each_repetition_has_its_own_cassette_and_replays_its_own_answer(
    recorded: pytest.Pytester, fake: FakeOpenAI
) -> None:
    files = cassette_files(recorded)
    assert [str(f.relative_to(recorded.path)) for f in files] == [
        f"cassettes/test_agent/test_task/rep-{i}.yaml" for i in (1, 2, 3)
    ]
    result = run(recorded, fake, "none", "--consistency-gap-max=50", "--route-drift-max=0")
    assert fake.requests == []  # replayed: not one live call
    task = report(recorded)["tasks"][0]
    assert task["answers"] == ["widget", "gadget", "widget"]  # not repetition 1 three times
    assert task["outcomes"] == ["passed", "failed", "passed"]
    assert task["attribution"] == "agent"
    result.stdout.fnmatch_lines(
        [
            "consistency gap 66.7 pp * answer disagreement 100.0 pp",
            "gate --consistency-gap-max: consistency gap 66.7 pp, one-sided bounds *hold 50.0 pp  UNDECIDED *",
            "gate --route-drift-max: route drift 0.0 pp <= 0.0 pp  ok",
        ]
    )
    calls = [r["calls"][0] for r in task["repetitions"]]
    assert all(c["replayed"] for c in calls)
    assert {c["key_fingerprint"] for c in calls} == {fingerprint(GOOD_KEY)}  # the recorded route, not the dummy
    assert all(c["latency_ms"] > 0 for c in calls)
    assert task["repetitions"][1]["cassette"] == "cassettes/test_agent/test_task/rep-2.yaml"


def test_replay_under_xdist_equals_serial_replay(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    run(recorded, fake, "none")
    serial = report(recorded)
    run(recorded, fake, "none", "-n", "2")
    parallel = report(recorded)
    assert without_timings(serial) == without_timings(parallel)


def test_a_changed_request_is_a_replay_mismatch_and_route_drift(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    recorded.makepyfile(test_agent=suite(model="other-model"))
    result = run(recorded, fake, "none", "--route-drift-max=0")
    assert fake.requests == []
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*replay mismatch in repetition 1: POST */v1/chat/completions (model other-model) was not recorded: "
            "no recorded request in cassettes/test_agent/test_task/rep-1.yaml matches it*",
            "*No live call was made. To re-record this repetition: "
            "pytest 'test_agent.py::test_task[[]rep1[]]' --consistency-record=all*",
        ]
    )
    task = report(recorded)["tasks"][0]
    assert task["drift"]["kinds"][:2] == ["model_requested", "errors"]
    assert task["drift"]["errors"]["replay_mismatch"] >= 3


def test_missing_cassette_names_path_and_command(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    (recorded.path / "cassettes" / "test_agent" / "test_task" / "rep-2.yaml").unlink()
    result = run(recorded, fake, "none")
    assert fake.requests == []
    result.stdout.fnmatch_lines(
        [
            "*replay mismatch in repetition 2: * no cassette at cassettes/test_agent/test_task/rep-2.yaml.*",
            "*To record it: pytest 'test_agent.py::test_task[[]rep2[]]' --consistency-record=once*",
        ]
    )


def test_changing_n_keeps_the_cassettes_of_the_remaining_repetitions(
    recorded: pytest.Pytester, fake: FakeOpenAI
) -> None:
    result = run(recorded, fake, "none", "--consistency-repeat=2")
    assert report(recorded)["tasks"][0]["answers"] == ["widget", "gadget"]
    assert "replay mismatch" not in result.stdout.str()


def test_secrets_never_reach_the_cassettes(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    pytester.makepyfile(
        test_agent=suite(
            body=f"""
import openai, pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency):
    if consistency.repeat == 2:  # a wrong key: the 401 body echoes it masked
        client = openai.OpenAI(base_url={fake.base_url!r}, api_key="sk-wrong-key-7777777777abcd", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            client.chat.completions.create(model=MODEL, messages=[{{"role": "user", "content": "hi"}}])
    pinned_client.chat.completions.create(
        model=MODEL, messages=[{{"role": "user", "content": "my key is {GOOD_KEY}, keep it"}}])
"""
        )
    )
    assert run(pytester, fake, "once").ret == 0
    text = "\n".join(f.read_text() for f in cassette_files(pytester))
    for secret in (
        GOOD_KEY,
        GOOD_KEY[3:],
        "sk-wrong-key",
        "Bearer",
        "cookie-secret-value",
        "org-secret-organization",
        "sk-****",
        "7777abcd",
    ):
        assert secret not in text, secret
    assert "<redacted>" in text and "Incorrect API key provided: <redacted>" in text
    assert "authorization" not in text.lower() and "set-cookie" not in text.lower()
    assert "x-consistency-key-fingerprint" in text and "x-consistency-sent-at" not in text


def test_the_live_key_in_any_form_refuses_the_write(tmp_path: Path) -> None:
    import base64

    from vcr.request import Request
    from vcr.serializers import yamlserializer

    key = "sk-test-live-abcdefghijklmnop1234"
    target = tmp_path / "rep-1.yaml"
    encoded = base64.b64encode(key.encode()).decode()
    for body in (key, json.dumps(key), encoded, "x" + base64.b64encode(f":{key}".encode()).decode()):
        request = Request("POST", "http://127.0.0.1/v1/chat/completions", b"{}", {})
        data = {
            "requests": [request],
            "responses": [
                {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": f"echo {body}"}}
            ],
        }
        with pytest.raises(SecretInCassetteError, match=r"refusing to write .*rep-1\.yaml.*nothing was written"):
            Persister(Scrubber(key), "re-record").save_cassette(target, data, yamlserializer)
        assert not target.exists() and not list(tmp_path.iterdir())
    assert redact_body(f"x {key} y", [key]) == "x <redacted> y"


def test_recorded_retries_replay_in_order_without_backoff(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.script(Step(status=429, headers={"retry-after-ms": "50"}), Step(text="widget"))
    pytester.makepyfile(test_agent=suite().replace("n=3", "n=1"))
    assert run(pytester, fake, "once").ret == 0
    (path,) = cassette_files(pytester)
    stored = yaml.safe_load(path.read_text())["interactions"][0]["response"]["headers"]
    assert stored["retry-after-ms"] == ["50"]  # the file keeps what the server said; loading rewrites it
    from vcr.serializers import yamlserializer

    _, responses, *_ = Persister(Scrubber(None), "re-record").load_cassette(path, yamlserializer)
    assert responses[0]["headers"]["retry-after-ms"] == ["1"]
    monkeypatch.delenv("OPENAI_API_KEY")
    fake.reset()
    run(pytester, fake, "none")
    calls = report(pytester)["tasks"][0]["repetitions"][0]["calls"]
    assert [(c["status"], c["retry_index"], c["replayed"]) for c in calls] == [(429, 0, True), (200, 1, True)]
    assert fake.requests == []


def test_exception_while_recording_leaves_no_cassette_unless_asked(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    pytester.makepyfile(
        test_agent=suite(
            body="""
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_client, consistency):
    pinned_client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "x"}])
    if consistency.repeat == 2:
        raise RuntimeError("agent crashed half way")
    assert consistency.repeat != 3  # an assertion is a finished trajectory with a failed outcome: kept
"""
        )
    )
    run(pytester, fake, "once")
    assert [f.name for f in cassette_files(pytester)] == ["rep-1.yaml", "rep-3.yaml"]
    run(pytester, fake, "once", "--consistency-record-on-exception")
    assert [f.name for f in cassette_files(pytester)] == ["rep-1.yaml", "rep-2.yaml", "rep-3.yaml"]


def test_streaming_async_and_responses_record_and_replay(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.script(Step(text="a b"), Step(text="c"), Step(text="d"), Step(text="e f"))
    pytester.makepyfile(
        test_agent="""
import pytest

MESSAGES = [{"role": "user", "content": "x"}]

@pytest.mark.repeat_consistency(n=1)
def test_stream(pinned_client, consistency, pinned_route):
    stream = pinned_client.chat.completions.create(model=pinned_route.model, messages=MESSAGES, stream=True,
                                                   stream_options={"include_usage": True})
    consistency.record("".join(c.choices[0].delta.content or "" for c in stream if c.choices))

@pytest.mark.asyncio
@pytest.mark.repeat_consistency(n=1)
async def test_async(async_pinned_client, consistency, pinned_route):
    reply = await async_pinned_client.chat.completions.create(model=pinned_route.model, messages=MESSAGES)
    consistency.record(reply.choices[0].message.content)

@pytest.mark.repeat_consistency(n=1)
def test_responses(pinned_client, consistency, pinned_route):
    consistency.record(pinned_client.responses.create(model=pinned_route.model, input="x").output_text)

@pytest.mark.asyncio
@pytest.mark.repeat_consistency(n=1)
async def test_responses_stream(async_pinned_client, consistency, pinned_route):
    stream = await async_pinned_client.responses.create(model=pinned_route.model, input="x", stream=True)
    consistency.record([e.type async for e in stream])
"""
    )
    assert run(pytester, fake, "once", "-p", "asyncio").ret == 0
    live = report(pytester)
    monkeypatch.delenv("OPENAI_API_KEY")
    fake.reset()
    assert run(pytester, fake, "none", "-p", "asyncio").ret == 0
    replay = report(pytester)
    assert fake.requests == []
    assert [t["answers"] for t in replay["tasks"]] == [t["answers"] for t in live["tasks"]]
    assert replay["tasks"][0]["answers"] == ["ab"]
    for task in replay["tasks"]:
        (call,) = task["repetitions"][0]["calls"]
        assert call["replayed"] and call["model_served"] == "fake-model" and call["total_tokens"] == 10


def test_network_is_blocked_while_replaying(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    port = fake.server.server_address[1]
    pytester.makepyfile(
        test_agent=f"""
import socket, pytest

@pytest.mark.repeat_consistency(n=1)
def test_task():  # a raw socket: no HTTP library vcrpy knows
    socket.create_connection(("127.0.0.1", {port}), timeout=5)
"""
    )
    result = run(pytester, fake, "none")
    result.stdout.fnmatch_lines(["*network access to * blocked: cassettes are replayed only*"])
    assert fake.requests == [] and result.ret == 1


def test_pytest_recording_marker_is_refused_clearly(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.vcr
@pytest.mark.repeat_consistency(n=1)
def test_task():
    pass
"""
    )
    result = run(pytester, fake, "none", "-W", "ignore::pytest.PytestUnknownMarkWarning")
    result.stdout.fnmatch_lines(["*both pytest-recording (@pytest.mark.vcr) and pytest-consistency would patch*"])
    assert run(pytester, fake, "off", "-W", "ignore::pytest.PytestUnknownMarkWarning").ret == 0


#: A tracer like LangSmith's: a background thread posting through ``requests`` to an ignored endpoint. The loopback
#: server reads each post's headers, then holds it until the test releases it: the body, larger than the socket
#: buffers, keeps the sender inside its send (inside vcrpy's window for unrecorded requests) exactly while the
#: repetition's pinned call is made, and the post a repetition started ends in the next repetition.
TRACED = """
import threading

import fake_openai
import pytest
import requests

IN_FLIGHT = []
OUTCOMES = []  # each post's status, or the error that ended it
BODY = b"r" * (64 << 20)  # more than loopback's send and receive buffers together


def trace(url):
    # The timeout only keeps a broken run from hanging: a socket's send timeout covers the whole ``sendall``, held
    # time included, and the post is held across a repetition, so a short one loses posts on a busy machine.
    try:
        OUTCOMES.append(requests.post(url, data=BODY, timeout=30).status_code)
    except requests.RequestException as exc:
        OUTCOMES.append(repr(exc))


@pytest.mark.repeat_consistency(n=3)
def test_traced(pinned_client, pinned_route, consistency):
    server = fake_openai.ACTIVE
    if server.trace_release is not None:
        server.trace_arrived.clear()
        server.trace_release = release = threading.Event()
        url = server.base_url.removesuffix("/v1") + "/langsmith/runs/multipart"
        tracer = threading.Thread(target=trace, args=(url,))
        tracer.start()
        assert server.trace_arrived.wait(10), "the tracer's post never reached the server"
        IN_FLIGHT.append((tracer, release))
    reply = pinned_client.chat.completions.create(
        model=pinned_route.model, messages=[{"role": "user", "content": "is invoice 4121 paid?"}])
    if len(IN_FLIGHT) > 1:  # the previous repetition's post ends now, inside this repetition
        tracer, release = IN_FLIGHT.pop(0)
        release.set()
        tracer.join()
    consistency.record(reply.choices[0].message.content)


def test_zz_last_post_ends_after_the_repetitions():
    for tracer, release in IN_FLIGHT:
        release.set()
        tracer.join()
    if fake_openai.ACTIVE.trace_release is not None:
        assert OUTCOMES == [202, 202, 202], "a tracer's post did not complete"
"""


def test_a_background_post_to_an_ignored_url_never_loses_a_cassette_or_moves_a_call(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vcrpy sends a ``requests`` post it does not record inside ``force_reset``, which put the unpatched transports
    back for the whole process while the post was in flight: a pinned call made meanwhile on the main thread went
    live past the cassette (``rep-1.yaml`` never written, then "no cassette" on replay), and a post ending after its
    repetition put that repetition's patches back for good."""
    import fake_openai
    import httpx2

    monkeypatch.setattr(fake_openai, "ACTIVE", fake)  # the inner session runs in this process
    monkeypatch.setattr(fake, "trace_release", threading.Event())
    transport = httpx2.HTTPTransport.handle_request
    fake.script(Step(text="paid-1"), Step(text="paid-2"), Step(text="paid-3"))
    pytester.makepyfile(test_agent=TRACED)
    ignore = f"--consistency-ignore-url=^{fake.base_url.removesuffix('/v1')}/langsmith/"
    # A connection the plugin left unclosed would warn when dropped: an error here.
    unclosed = ("-W", "error::ResourceWarning", "-W", "error::pytest.PytestUnraisableExceptionWarning")
    recorded = run(pytester, fake, "once", ignore, *unclosed)
    assert recorded.ret == 0, recorded.stdout.str()
    assert [r["path"] for r in fake.requests].count("/langsmith/runs/multipart") == 3
    for i in (1, 2, 3):
        path = pytester.path / "cassettes" / "test_agent" / "test_traced" / f"rep-{i}.yaml"
        assert path.is_file(), f"rep-{i}.yaml was not written"
        interactions = yaml.safe_load(path.read_text())["interactions"]
        assert [x["request"]["uri"] for x in interactions] == [fake.base_url + "/chat/completions"], i
        assert f"paid-{i}" in interactions[0]["response"]["body"]["string"], i
    assert report(pytester)["tasks"][0]["answers"] == ["paid-1", "paid-2", "paid-3"]
    assert httpx2.HTTPTransport.handle_request is transport, "a repetition's patch outlived the session"
    fake.reset()
    fake.trace_release = None  # replaying: no tracer (the network block would refuse its post)
    replayed = run(pytester, fake, "none", ignore)
    assert replayed.ret == 0, replayed.stdout.str()
    assert fake.requests == []
    assert report(pytester)["tasks"][0]["answers"] == ["paid-1", "paid-2", "paid-3"]
