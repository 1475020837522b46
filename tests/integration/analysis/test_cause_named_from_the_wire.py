"""The cause of every inconsistency, end to end (issue 28): real SDKs on loopback servers, from the wire alone.

Each agent of ``tests/support/cause_agents.py`` parts for a known reason. Recorded live, then replayed from its
cassettes, on the OpenAI chat completions and Responses APIs and the Anthropic Messages API, streamed and not, the
report names the same cause at the same step; on chat completions, -n 2 and shards merged by ``pytest-consistency
merge`` give the same causes and the same ``summary.causes``, and the cause gate fails the session on its cause.
"""

from __future__ import annotations

from typing import Any

import pytest
from cause_agents import EXPECTED, module, script
from fake_anthropic import FakeAnthropic
from fake_anthropic import Step as ClaudeStep
from fake_openai import FakeOpenAI, Step
from suites import cli, load_report, run_mode, run_recorded


def causes(report: dict[str, Any]) -> dict[str, tuple[str | None, int | None]]:
    """Per task (its parameter), the cause and the step it names."""
    out = {}
    for task in report["tasks"]:
        why = task.get("why") or {}
        out[task["task_id"].split("[")[1].rstrip("]")] = (task.get("cause"), why.get("step"))
    return out


def expected(report: dict[str, Any]) -> dict[str, tuple[str, int | None]]:
    return {name: EXPECTED[name] for name in causes(report)}


def shares(report: dict[str, Any]) -> dict[str, Any]:
    by_cause = report["summary"]["causes"].items()
    return {cause: (s["tasks"], round(s["gap_pp"], 9), sorted(s["task_ids"])) for cause, s in by_cause}


def record_openai(pytester: pytest.Pytester, fake: FakeOpenAI, api: str, stream: bool, *args: str) -> Any:
    fake.script(*(Step(**step) for step in script(api)))
    pytester.makepyfile(test_agent=module(api, stream))
    return run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly", "--consistency-report=live.json", *args)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_apis_name_each_cause_live_and_replayed(
    pytester: pytest.Pytester, fake: FakeOpenAI, api: str, stream: bool
) -> None:
    live = record_openai(pytester, fake, api, stream)
    assert live.ret == 1, live.stdout.str()
    assert len(fake.requests) == len(script(api))
    found = causes(load_report(pytester, "live.json"))
    assert found == expected(load_report(pytester, "live.json"))
    if api == "chat":  # the retried 429 is a route of errors and retries, not only of the model served
        retried = next(t for t in load_report(pytester, "live.json")["tasks"] if t["task_id"].endswith("[retried]"))
        assert retried["why"]["kinds"] == ["retries", "errors"]  # not the model served: the 429 named none
    fake.reset()
    replay = run_recorded(pytester, fake.base_url, "none", "-p", "no:randomly", "--consistency-report=replay.json")
    assert replay.ret == 1 and fake.requests == []
    assert causes(load_report(pytester, "replay.json")) == found
    assert shares(load_report(pytester, "replay.json")) == shares(load_report(pytester, "live.json"))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_messages_name_each_cause_live_and_replayed(
    pytester: pytest.Pytester, claude: FakeAnthropic, stream: bool
) -> None:
    claude.script(*(ClaudeStep(**step) for step in script("anthropic")))
    pytester.makepyfile(test_agent=module("anthropic", stream))
    live = run_mode(pytester, "once", "--consistency-report=live.json")
    assert live.ret == 1, live.stdout.str()
    found = causes(load_report(pytester, "live.json"))
    assert found == expected(load_report(pytester, "live.json"))
    claude.reset()
    replay = run_mode(pytester, "none", "--consistency-report=replay.json")
    assert replay.ret == 1 and claude.requests == []
    assert causes(load_report(pytester, "replay.json")) == found


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake: FakeOpenAI) -> pytest.Pytester:
    live = record_openai(pytester, fake, "chat", False)
    assert live.ret == 1, live.stdout.str()
    fake.reset()
    return pytester


def test_xdist_and_merged_shards_name_the_same_causes(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    live = load_report(recorded, "live.json")
    assert causes(live) == expected(live)
    assert run_recorded(recorded, fake.base_url, "none", "-n", "2", "--consistency-report=xdist.json").ret == 1
    xdist = load_report(recorded, "xdist.json")
    assert (causes(xdist), shares(xdist)) == (causes(live), shares(live))
    for i in (1, 2):
        shard = run_recorded(
            recorded, fake.base_url, "none", f"--consistency-shard={i}/2", f"--consistency-report=shard{i}.json"
        )
        assert shard.ret in (0, 1), shard.stdout.str()
    merged = cli("merge", "shard1.json", "shard2.json", "-o", "merged.json", cwd=recorded.path)
    assert merged.returncode == 1, merged.stdout + merged.stderr
    both = load_report(recorded, "merged.json")
    assert (causes(both), shares(both)) == (causes(live), shares(live))
    assert fake.requests == []


def test_the_cause_gate_fails_on_its_cause_and_passes_above_its_share(
    recorded: pytest.Pytester, fake: FakeOpenAI
) -> None:
    input_pp = load_report(recorded, "live.json")["summary"]["causes"]["input"]["gap_pp"]
    assert input_pp > 0
    # every repetition passes a lenient pass bar, so only the cause gate decides the exit
    lenient = ("--consistency-min-pass=0", "-p", "no:randomly")
    failing = run_recorded(recorded, fake.base_url, "none", *lenient, "--consistency-cause-max=input=0")
    assert failing.ret == 1, failing.stdout.str()
    failing.stdout.fnmatch_lines(["gate --consistency-cause-max=input: gap attributed to input * > 0.0 pp*"])
    passing = run_recorded(
        recorded, fake.base_url, "none", *lenient, f"--consistency-cause-max=input={input_pp + 1:.1f}"
    )
    assert passing.ret == 0, passing.stdout.str()
    passing.stdout.fnmatch_lines(["gate --consistency-cause-max=input: gap attributed to input * ok*"])


def test_the_yaml_cause_gate_fails_on_its_cause(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    (recorded.path / "consistency.yaml").write_text("gates:\n  cause_max:\n    input: 0\n    'outside the model': 50\n")
    lenient = ("--consistency-min-pass=0", "-p", "no:randomly", "--consistency-config=consistency.yaml")
    result = run_recorded(recorded, fake.base_url, "none", *lenient)
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "gate --consistency-cause-max=input: gap attributed to input * > 0.0 pp*",
            "gate --consistency-cause-max=outside the model: gap attributed to outside the model * ok*",
        ],
        consecutive=False,
    )
