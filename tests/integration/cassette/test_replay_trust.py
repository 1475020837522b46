"""The replay is the recording, and one bad cassette fails one repetition, never the session.

Recorded live from the loopback server, then replayed with no network; each test tries one way to make a replay
differ from its recording, or to turn one bad file into a session crash.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from suites import load_report as report
from suites import run_recorded, without_timings

from pytest_consistency.secrets.keys import fingerprint

AGENT = """
import os, pytest

PROMPT = os.environ.get("AGENT_PROMPT", "do task-2024-0117")

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_client, consistency):
    reply = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": PROMPT}])
    answer = reply.choices[0].message.content
    consistency.record(answer)
    assert "risk" in answer
"""


def run(pytester: pytest.Pytester, fake: FakeOpenAI, mode: str, *args: str) -> pytest.RunResult:
    return run_recorded(pytester, fake.base_url, mode, *args)


def cassette(pytester: pytest.Pytester, repeat: int) -> Path:
    return pytester.path / "cassettes" / "test_agent" / "test_task" / f"rep-{repeat}.yaml"


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake: FakeOpenAI) -> pytest.Pytester:
    fake.script(*[Step(text="see the risk-assessment and disk-usage-report")] * 3)
    pytester.makepyfile(test_agent=AGENT)
    assert run(pytester, fake, "once").ret == 0
    fake.reset()
    return pytester


def test_words_that_look_like_keys_replay_byte_for_byte(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    result = run(recorded, fake, "none")
    assert result.ret == 0, result.stdout.str()
    assert report(recorded)["tasks"][0]["answers"] == ["see the risk-assessment and disk-usage-report"] * 3
    assert "task-2024-0117" in cassette(recorded, 1).read_text()


def test_a_changed_prompt_never_replays_the_old_answer(
    recorded: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_PROMPT", "do task-9999-ZZZZ")
    result = run(recorded, fake, "none")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*replay mismatch in repetition 1*[[]closest recorded request differs in: body; body first differs at "
            "messages[[]0[]].content: recorded *task-2024-0117*, sent *task-9999-ZZZZ*[]]*"
        ]
    )
    assert fake.requests == []


@pytest.mark.parametrize(
    "env_key", [None, "YOUR_API_KEY", "dummy", GOOD_KEY + "-second", "sk-ci-real-other-0000111122223333"]
)
def test_replay_only_outcome_and_route_do_not_depend_on_the_environment_key(
    recorded: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, env_key: str | None
) -> None:
    if env_key is None:
        monkeypatch.delenv("OPENAI_API_KEY")
    else:
        monkeypatch.setenv("OPENAI_API_KEY", env_key)
    result = run(recorded, fake, "none", "--route-drift-max=0")
    assert result.ret == 0, result.stdout.str()
    summary = report(recorded)["summary"]
    assert summary["route"]["drift_pp"] == 0.0
    assert summary["route"]["key_shown"] == f"{fingerprint(GOOD_KEY)} (recorded)"
    assert fake.requests == []


def test_two_recorded_keys_are_still_key_drift(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.script(*[Step(text="risk")] * 3)
    pytester.makepyfile(test_agent=AGENT)
    assert run(pytester, fake, "once", "-k", "rep1 or rep2").ret == 0
    monkeypatch.setenv("OPENAI_API_KEY", GOOD_KEY + "-second")
    assert run(pytester, fake, "once", "-k", "rep3").ret == 0
    result = run(pytester, fake, "none", "--route-drift-max=0")
    assert result.ret == 1
    assert report(pytester)["tasks"][0]["drift"]["kinds"] == ["key"]


def test_new_episodes_keeps_the_recorded_fingerprints(
    recorded: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.script(*[Step(text="risk")] * 3)
    monkeypatch.setenv("AGENT_PROMPT", "a new episode")
    assert run(recorded, fake, "new_episodes").ret == 0
    stored = yaml.safe_load(cassette(recorded, 1).read_text())["interactions"]
    assert len(stored) == 2  # the old interaction and the new one, both with the key they were recorded with
    assert [i["request"]["headers"]["x-consistency-key-fingerprint"] for i in stored] == [[fingerprint(GOOD_KEY)]] * 2
    fake.reset()
    monkeypatch.delenv("AGENT_PROMPT")
    assert run(recorded, fake, "none", "--route-drift-max=0").ret == 0
    assert fake.requests == []


def test_recording_with_another_key_is_a_mismatch_that_says_how_to_rerecord(
    recorded: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", GOOD_KEY + "-second")
    result = run(recorded, fake, "once")
    assert result.ret == 1 and fake.requests == []
    result.stdout.fnmatch_lines(["*differs in: key fingerprint*", "*--consistency-record=all*"])
    assert "How to fix" not in result.stdout.str()  # vcrpy's advice names options that do not exist here


CORRUPT = {
    "truncated": "interactions:\n- request:\n    body: '{\"a\n",
    "conflict": "<<<<<<< HEAD\ninteractions: []\n=======\ninteractions: []\n>>>>>>> branch\nversion: 1\n",
    "a list": "- 1\n- 2\n",
    "unknown tag": "interactions: !!python/object/apply:os.system ['echo pwned > pwned.txt']\nversion: 1\n",
    "binary": "\udcff\udcfe",
}


@pytest.mark.parametrize("kind", list(CORRUPT))
def test_a_corrupt_cassette_fails_only_its_repetition(recorded: pytest.Pytester, fake: FakeOpenAI, kind: str) -> None:
    target = cassette(recorded, 2)
    target.write_bytes(CORRUPT[kind].encode("utf-8", "surrogateescape"))
    result = run(recorded, fake, "none")
    out = result.stdout.str()
    assert "INTERNALERROR" not in out
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_task[[]rep2[]]*", "*rep-2.yaml*"])
    assert "--consistency-record=all" in out or "conflict" in out
    assert not (recorded.path / "pwned.txt").exists()
    data = report(recorded)
    assert data["summary"]["passed"] is False and data["tasks"][0]["outcomes"] == ["passed", "error", "passed"]


def test_an_unwritable_cassette_directory_fails_only_the_recording_repetitions(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    fake.script(*[Step(text="risk")] * 3)
    pytester.makepyfile(
        test_agent=AGENT
        + """
def test_z_after_the_failed_writes():
    import httpx2, vcr.patch
    assert httpx2.HTTPTransport.handle_request is vcr.patch._Httpx2HttpTransport_handle_request  # unpatched
"""
    )
    (pytester.path / "cassettes").write_text("a file where the directory should be")
    result = run(pytester, fake, "once")
    assert "INTERNALERROR" not in result.stdout.str()
    result.assert_outcomes(passed=4, errors=3)
    result.stdout.fnmatch_lines(["*cannot write cassette *rep-1.yaml*--consistency-cassettes*"])
    assert report(pytester)["summary"]["passed"] is False and result.ret == 1


def test_cassettes_outside_rootdir_record_and_replay(
    pytester: pytest.Pytester, fake: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "tapes"
    fake.script(*[Step(text="risk")] * 3)
    pytester.makepyfile(test_agent=AGENT)
    assert run(pytester, fake, "once", f"--consistency-cassettes={outside}").ret == 0
    fake.reset()
    assert run(pytester, fake, "none", f"--consistency-cassettes={outside}").ret == 0
    assert fake.requests == [] and len(list(outside.rglob("rep-*.yaml"))) == 3
    assert report(pytester)["tasks"][0]["repetitions"][0]["cassette"].startswith(str(outside))


def test_a_mismatch_of_the_agents_own_client_gets_the_plugins_message(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_agent=f"""
import httpx, os, pytest

@pytest.mark.repeat_consistency(n=1)
def test_task():
    ask = [{{"role": "user", "content": os.environ["PROMPT"]}}]
    httpx.post("{fake.base_url}/chat/completions", json={{"model": "fake-model", "messages": ask}})
"""
    )
    monkeypatch.setenv("PROMPT", "recorded")
    assert run(pytester, fake, "once").ret == 0
    fake.reset()
    monkeypatch.setenv("PROMPT", "changed")  # the recorded task now sends what no cassette holds
    result = run(pytester, fake, "none")
    assert result.ret == 1 and fake.requests == []
    result.stdout.fnmatch_lines(
        ["*replay mismatch in repetition 1: POST * (sent by a client the agent built itself) was not recorded*"]
    )
    assert "How to fix" not in result.stdout.str()


def test_in_process_transports_need_no_cassette(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
import httpx, httpx2, pytest, respx

def answer(request):
    return httpx.Response(200, json={"choices": [{"message": {"content": "mocked"}}]})

@pytest.mark.repeat_consistency(n=2)
def test_mock_transport(consistency):
    for module in (httpx, httpx2):
        client = module.Client(transport=module.MockTransport(lambda r: module.Response(200, json={"ok": True})))
        assert client.get("https://api.example.invalid/v1/models").json() == {"ok": True}
    consistency.record("ok")

@pytest.mark.repeat_consistency(n=2)
def test_respx(consistency):
    with respx.mock:
        respx.post("https://api.example.invalid/v1/chat/completions").mock(side_effect=answer)
        reply = httpx.post("https://api.example.invalid/v1/chat/completions", json={})
    consistency.record(reply.json()["choices"][0]["message"]["content"])
"""
    )
    for mode in ("none", "once", "all"):
        result = pytester.runpytest(f"--consistency-record={mode}", "--consistency-base-url=http://127.0.0.1:9/v1")
        assert result.ret == 0, (mode, result.stdout.str())


def test_traffic_the_plugin_cannot_see_is_not_no_drift(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(*[Step(text="risk")] * 2)
    pytester.makepyfile(
        test_agent=f"""
import pytest, requests

@pytest.mark.repeat_consistency(n=2)
def test_task(consistency):
    reply = requests.post("{fake.base_url}/chat/completions", json={{"model": "fake-model", "messages": []}},
                          headers={{"authorization": "Bearer {GOOD_KEY}"}})
    consistency.record(reply.json()["choices"][0]["message"]["content"])
"""
    )
    assert run(pytester, fake, "once").ret == 0
    result = run(pytester, fake, "none", "--route-drift-max=0")
    assert result.ret == 1
    task = report(pytester)["tasks"][0]
    assert task["drift"]["kinds"] == ["unobserved"] and task["drift"]["unobserved"] == 2
    result.stdout.fnmatch_lines(["*client the plugin does not observe*"])


def test_ignored_telemetry_is_neither_recorded_nor_counted(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(*[Step(text="risk")] * 4)
    pytester.makepyfile(
        test_agent=f"""
import httpx, pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency):
    try:
        httpx.post("{fake.base_url}/traces/ingest", json={{"spans": []}})
    except Exception:
        pass  # blocked while replaying: telemetry is never a cassette's business
    reply = pinned_client.chat.completions.create(model="fake-model", messages=[{{"role": "user", "content": "x"}}])
    consistency.record(reply.choices[0].message.content)
"""
    )
    ignore = "--consistency-ignore-url=/traces/ingest"
    assert run(pytester, fake, "once", ignore).ret == 0
    text = "\n".join(p.read_text() for p in (pytester.path / "cassettes").rglob("*.yaml"))
    assert "traces" not in text
    result = run(pytester, fake, "none", ignore, "--route-drift-max=0")
    assert result.ret == 0, result.stdout.str()
    assert all(len(r["calls"]) == 1 for r in report(pytester)["tasks"][0]["repetitions"])


def test_replay_equals_recording_under_xdist_after_the_changes(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    run(recorded, fake, "none")
    serial = without_timings(report(recorded))
    run(recorded, fake, "none", "-n", "2")
    assert without_timings(report(recorded)) == serial
