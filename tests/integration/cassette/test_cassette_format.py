"""JSON cassettes (``--consistency-cassette-format=json``) and the migration between the formats, end to end.

Real sessions on the loopback server: a JSON recording replays to the same report as the recording (serial and
``-n 2``), a switch of format without converting fails with the command that converts, the conversion both ways
replays the recording, and a body JSON cannot hold fails one repetition, never the session, writing nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from suites import cli, run_recorded

TASK = """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_client, consistency):
    first = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "caf\\u00e9 \\U0001f600 \\"quoted\\" \\\\ a"}])
    second = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "b"}])
    consistency.record([first.choices[0].message.content, second.choices[0].message.content])
"""


def _facts(report: dict[str, Any]) -> list[Any]:
    """What a replay must reproduce of each repetition: its answer and outcome, and each call's served model,
    status and tokens."""
    return [
        (
            rep["answer"],
            rep["outcome"],
            [(c["model_served"], c["status"], c["total_tokens"]) for c in rep["calls"]],
        )
        for task in report["tasks"]
        for rep in task["repetitions"]
    ]


def _report(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "report.json").read_text())


def _record(pytester: pytest.Pytester, fake: FakeOpenAI, fmt: str) -> dict[str, Any]:
    fake.script(*[Step(text=f'answer {i} \u00e9\U0001f600 "q" \\') for i in range(6)])
    pytester.makepyfile(test_agent=TASK)
    result = run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly", f"--consistency-cassette-format={fmt}")
    assert result.ret == 0, result.stdout.str()
    return _report(pytester)


def test_a_json_recording_replays_to_the_same_report(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Serially: a replay under xdist equals the serial one whatever the format
    (tests/integration/cassette/test_cassettes.py::test_replay_under_xdist_equals_serial_replay)."""
    recorded = _record(pytester, fake, "json")
    cassettes = pytester.path / "cassettes"
    files = sorted(p.name for p in cassettes.rglob("rep-*.*"))
    assert files == ["rep-1.json", "rep-2.json", "rep-3.json"]
    for path in cassettes.rglob("rep-*.json"):
        text = path.read_text()
        assert json.loads(text)["interactions"] and GOOD_KEY not in text and "authorization" not in text.lower()
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")
    result = run_recorded(
        pytester,
        fake.base_url,
        "none",
        "-p",
        "no:randomly",
        "--consistency-cassette-format=json",
        "--route-drift-max=0",
    )
    assert result.ret == 0, result.stdout.str()
    assert fake.requests == []
    replayed = _report(pytester)
    assert _facts(replayed) == _facts(recorded)
    assert all(c["replayed"] for t in replayed["tasks"] for r in t["repetitions"] for c in r["calls"])
    assert [r["cassette"].rsplit("/", 1)[-1] for t in replayed["tasks"] for r in t["repetitions"]] == files


def test_a_format_switch_without_converting_fails_with_the_command_that_converts(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    _record(pytester, fake, "yaml")
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")
    result = run_recorded(pytester, fake.base_url, "none", "-p", "no:randomly", "--consistency-cassette-format=json")
    assert result.ret == 1
    assert fake.requests == []  # no live call
    result.stdout.fnmatch_lines(
        [
            "*no cassette at cassettes/test_agent/test_task/rep-1.json"
            " (cassettes/test_agent/test_task/rep-1.yaml is there, in the other format: convert the cassettes with "
            "`pytest-consistency cassettes convert --to json`, or pass --consistency-cassette-format=yaml)*"
        ]
    )
    assert _report(pytester)["summary"]["passed"] is False


@pytest.mark.parametrize("mode", ["once", "new_episodes"])
def test_recording_after_a_format_switch_refuses_to_call_the_model_again(
    pytester: pytest.Pytester, fake: FakeOpenAI, mode: str
) -> None:
    """``once`` would see no ``rep-1.json`` and re-record every repetition live, paying again for what is recorded
    in ``rep-1.yaml``: each repetition fails in setup instead, naming the conversion, and nothing is sent."""
    _record(pytester, fake, "yaml")
    task = pytester.path / "cassettes" / "test_agent" / "test_task"
    (task / "rep-2.json").write_text("")  # an empty or blank file is no cassette (vcrpy's rule): still refused
    (task / "rep-3.json").write_text("\n  \n")
    fake.reset()
    result = run_recorded(pytester, fake.base_url, mode, "-p", "no:randomly", "--consistency-cassette-format=json")
    assert result.ret == 1
    assert fake.requests == []
    result.stdout.fnmatch_lines(
        [
            "*refusing to record cassettes/test_agent/test_task/rep-1.json live: "
            "cassettes/test_agent/test_task/rep-1.yaml is there, in the other format: convert the cassettes with "
            "`pytest-consistency cassettes convert --to json`*"
        ]
    )
    assert sorted(p.name for p in task.glob("*.json")) == ["rep-2.json", "rep-3.json"]
    assert (task / "rep-2.json").read_text() == ""
    assert [r["outcome"] for r in _report(pytester)["tasks"][0]["repetitions"]] == ["error"] * 3


def test_converting_to_json_and_back_replays_the_recording(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vcr.serializers import yamlserializer

    recorded = _record(pytester, fake, "yaml")
    cassettes = pytester.path / "cassettes"
    originals = {p.with_suffix(""): yamlserializer.deserialize(p.read_text()) for p in cassettes.rglob("rep-*.yaml")}
    done = cli("cassettes", "convert", "--to", "json", cwd=pytester.path)
    assert done.returncode == 0, done.stderr
    assert "converted 3 cassette(s) to JSON; 0 already JSON, 0 left as they were" in done.stdout
    assert not list(cassettes.rglob("rep-*.yaml")) and len(list(cassettes.rglob("rep-*.json"))) == 3
    again = cli("cassettes", "convert", "--to", "json", str(cassettes), cwd=pytester.path)
    assert again.returncode == 0 and "converted 0 cassette(s) to JSON; 3 already JSON" in again.stdout
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")
    replay = run_recorded(pytester, fake.base_url, "none", "-p", "no:randomly", "--consistency-cassette-format=json")
    assert replay.ret == 0, replay.stdout.str()
    assert _facts(_report(pytester)) == _facts(recorded) and fake.requests == []
    back = cli("cassettes", "convert", "--to", "yaml", cwd=pytester.path)
    assert back.returncode == 0, back.stderr
    restored = {p.with_suffix(""): yamlserializer.deserialize(p.read_text()) for p in cassettes.rglob("rep-*.yaml")}
    assert restored == originals
    replay = run_recorded(pytester, fake.base_url, "none", "-p", "no:randomly")
    assert replay.ret == 0, replay.stdout.str()
    assert _facts(_report(pytester)) == _facts(recorded)


BINARY = """
import httpx, pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_client, consistency):
    pinned_client.chat.completions.create(model="fake-model", messages=[{{"role": "user", "content": "hi"}}])
    if consistency.repeat == 2:
        httpx.request("GET", "{url}/models", content=b"\\xff\\xfe binary")
    consistency.record("done")
"""


def test_a_binary_body_cannot_be_json_and_fails_only_its_repetition(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    fake.script(*[Step(text="widget")] * 3)
    pytester.makepyfile(test_agent=BINARY.format(url=fake.base_url))
    result = run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly", "--consistency-cassette-format=json")
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_task[[]rep2[]]*",
            "*cannot write cassette *rep-2.json as JSON: a request or response body in it is binary*"
            "--consistency-cassette-format=yaml*",
        ]
    )
    names = sorted(p.name for p in (pytester.path / "cassettes").rglob("*"))
    assert "rep-1.json" in names and "rep-3.json" in names and "rep-2.json" not in names
    assert not [n for n in names if n.endswith(".tmp")]
    report = _report(pytester)
    assert report["summary"]["passed"] is False and result.ret == 1
    assert [r["outcome"] for r in report["tasks"][0]["repetitions"]] == ["passed", "error", "passed"]


def test_an_unknown_format_is_a_usage_error_naming_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent="def test_x():\n    pass\n")
    result = pytester.runpytest("--consistency-cassette-format=toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--consistency-cassette-format" in result.stderr.str() and "yaml, json" in result.stderr.str()
