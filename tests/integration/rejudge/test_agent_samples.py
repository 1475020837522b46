"""``--consistency-rejudge=M --consistency-rejudge-role=agent``: a two-turn dialogue recorded on the loopback server
(a simulated user, role ``user``, and the agent), then sampled again: the user's recorded turns replay in order
(never sent: no user request reaches the server), the agent is asked M times per repetition, and the gap is split
between the simulated user and the agent; committed samples replay offline with the same figures."""

from __future__ import annotations

import fnmatch
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_openai import FakeOpenAI, Step
from suites import load_report, run_recorded

from pytest_consistency.rejudge.cassettes import role_of

#: The user speaks first, then the agent answers, TURNS times; the agent's last answer is the outcome.
SUITE = """
import pytest

TURNS = 2


@pytest.mark.repeat_consistency(n=N, min_pass=0)
def test_dialogue(pinned_client, consistency):
    said = []
    for turn in range(TURNS):
        with consistency.role("user"):
            user = pinned_client.chat.completions.create(
                model="fake-model", messages=[{"role": "user", "content": "User: " + " | ".join(said)}]
            ).choices[0].message.content
        said.append(user)
        agent = pinned_client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "Agent: " + " | ".join(said)}]
        ).choices[0].message.content
        said.append(agent)
    consistency.record(said[-1])
    assert said[-1] == "DONE"
"""
TASK = "test_dialogue.py::test_dialogue"
SAMPLES = Path("cassettes/test_dialogue/test_dialogue/rejudge")


def is_user(body: dict[str, Any]) -> bool:
    return str(body["messages"][0]["content"]).startswith("User: ")


def user_requests(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r for r in fake.requests if is_user(r["body"])]


def agent_requests(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r for r in fake.requests if not is_user(r["body"])]


def varying_user(fake: FakeOpenAI, p: float, seed: int) -> None:
    """The user asks for a refund with probability p (else an exchange); the agent, deterministic given the user's
    words, is DONE after a refund and FAILs after an exchange."""
    rng = random.Random(seed)

    def answer(body: dict[str, Any]) -> Step:
        content = str(body["messages"][0]["content"])
        if is_user(body):
            return Step(text="refund please" if rng.random() < p else "exchange please")
        return Step(text="DONE" if content.endswith("refund please") else "FAIL")

    fake.answer = answer


def flaky_agent(fake: FakeOpenAI, q: float, seed: int) -> None:
    """The user always says the same at each turn ("refund please", then "refund please, again"); the agent's first
    answer is a random word (so the user's second request holds words the recording never saw), its last FAILs with
    probability q."""
    rng = random.Random(seed)

    def answer(body: dict[str, Any]) -> Step:
        content = str(body["messages"][0]["content"])
        if is_user(body):
            return Step(text="refund please, again" if "|" in content else "refund please")
        if content.count("|") == 0:  # the agent's first turn
            return Step(text=f"word-{rng.randrange(10**6)}")
        return Step(text="FAIL" if rng.random() < q else "DONE")

    fake.answer = answer


def record(pytester: pytest.Pytester, fake: FakeOpenAI, n: int) -> None:
    pytester.makepyfile(test_dialogue=SUITE.replace("N,", f"{n},"))
    result = run_recorded(pytester, fake.base_url, "all")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    assert len(user_requests(fake)) == 2 * n and len(agent_requests(fake)) == 2 * n
    fake.reset()


def sample(pytester: pytest.Pytester, fake: FakeOpenAI, mode: str, m: int, *args: str) -> pytest.RunResult:
    return run_recorded(
        pytester,
        fake.base_url,
        mode,
        f"--consistency-rejudge={m}",
        "--consistency-rejudge-role=agent",
        "-p",
        "no:randomly",
        *args,
    )


def user_section(pytester: pytest.Pytester) -> dict[str, Any]:
    return dict(load_report(pytester)["summary"]["simulated_user"])


def test_a_user_that_varies_under_a_deterministic_agent_is_the_whole_gap(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """(a) The user asks for a refund with probability 0.5; the agent is deterministic given the user's words: held
    on each recorded user, the agent never flips, so the user's part is the whole observed gap and the agent's 0."""
    varying_user(fake, 0.5, 3)
    record(pytester, fake, 12)
    varying_user(fake, 0.5, 4)  # the user's answers now would differ: none is asked
    result = sample(pytester, fake, "once", 3, "-v")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    # (c) Not one user request reached the server; the agent was asked 2 turns x 12 repetitions x 3 samples.
    assert user_requests(fake) == []
    assert len(agent_requests(fake)) == 2 * 12 * 3
    result.stdout.fnmatch_lines([f"{TASK}[[]rep1@agent1[]] *", f"{TASK}[[]rep12@agent3[]] *"])
    section = user_section(pytester)
    [task] = section["tasks"]
    figures = task["figures"]
    rows = task["repetitions"]
    assert [row["samples"] for row in rows] == [3] * 12
    assert {(row["passed"], row["samples"]) for row in rows} <= {(0, 3), (3, 3)}  # each held user: one outcome
    assert 0 < sum(row["passed"] == 3 for row in rows) < 12  # the recorded users differed
    assert figures["flip_rate"] == 0.0 and figures["flip_interval"]["high"] < 1.0
    assert figures["agent_gap_pp"] == 0.0
    assert figures["user_gap_pp"] == figures["observed_gap_pp"] > 0
    out = " ".join(result.stdout.str().split())
    assert f"simulated user {TASK}: 3 agent sample(s) per recorded user; agent flip rate 0.0 % [" in out
    assert "pp (agent majority) + agent 0.0 pp" in out
    # Each sample's cassette: the source's user turns, then the agent's exchanges of its own.
    files = sorted(str(p.relative_to(pytester.path / SAMPLES)) for p in (pytester.path / SAMPLES).rglob("*.yaml"))
    assert files == sorted(f"rep-{r}/agent-{j}.yaml" for r in range(1, 13) for j in (1, 2, 3))
    sample_file = yaml.safe_load((pytester.path / SAMPLES / "rep-2" / "agent-1.yaml").read_text())["interactions"]
    assert [role_of(exchange) for exchange in sample_file] == ["user", "user", "agent", "agent"]
    source = yaml.safe_load((pytester.path / SAMPLES.parent / "rep-2.yaml").read_text())["interactions"]
    assert [e for e in source if role_of(e) == "user"] == sample_file[:2]


def test_a_flaky_agent_under_a_fixed_user_is_the_whole_gap_and_its_flip_rate_is_recovered(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """(b) The user always says the same; the agent FAILs with probability q = 0.3 (seeded), 30 repetitions x 2
    samples: the exact interval of the agent's flip rate holds 2q(1-q) = 0.42, and the user's part is 0. The agent's
    first words differ in every sample, so the user's second request never equals the recorded one: its turns are
    played by order."""
    flaky_agent(fake, 0.3, 1)
    record(pytester, fake, 30)
    flaky_agent(fake, 0.3, 11)
    result = sample(pytester, fake, "once", 2)
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    assert user_requests(fake) == []
    assert len(agent_requests(fake)) == 2 * 30 * 2
    [task] = user_section(pytester)["tasks"]
    figures = task["figures"]
    assert task["excluded"] == []
    assert figures["flip_method"] == "clopper-pearson"
    assert figures["flip_interval"]["low"] <= 0.42 <= figures["flip_interval"]["high"]
    assert figures["flip_rate"] > 0
    assert figures["user_gap_pp"] == 0.0
    assert figures["agent_gap_pp"] == figures["observed_gap_pp"]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_committed_agent_samples_replay_offline_with_the_same_figures(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    """(d) The samples asked live, then replayed from their cassettes without a key (serially and with -n 2): no
    request at all, and the same figures; the user's turns replay by order there too (their recorded requests hold
    the source's agent words, the replayed agent's differ)."""
    flaky_agent(fake, 0.4, 2)
    record(pytester, fake, 6)
    flaky_agent(fake, 0.4, 5)
    result = sample(pytester, fake, "once", 3)
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    live = user_section(pytester)
    assert user_requests(fake) == []
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")
    result = sample(pytester, fake, "none", 3, *workers)
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    assert fake.requests == []
    assert user_section(pytester) == live
    assert load_report(pytester)["summary"]["judge"] is None


def test_a_user_call_beyond_the_recording_fails_the_item_naming_it_and_sends_nothing(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    flaky_agent(fake, 0.0, 0)
    pytester.makepyfile(test_dialogue=SUITE.replace("N,", "2,").replace("TURNS = 2", "TURNS = 1"))
    assert run_recorded(pytester, fake.base_url, "all").ret == 0
    fake.reset()
    source = pytester.path / "test_dialogue.py"
    source.write_text(source.read_text().replace("TURNS = 1", "TURNS = 2"))
    flaky_agent(fake, 0.0, 0)
    result = sample(pytester, fake, "once", 2)
    assert result.ret == 1
    assert user_requests(fake) == []
    result.stdout.fnmatch_lines(
        [
            f"*rejudge {TASK} rep1@agent1: the simulated user's call 2 is beyond rep-1's recording (1 user turn(s) "
            "recorded): the agent took more turns than the recording. No call was sent.*"
        ]
    )
    [task] = user_section(pytester)["tasks"]
    assert len(task["excluded"]) == 4
    assert task["excluded"][0] == (
        "rep1@agent1: the simulated user's recorded turns ran out (the agent took more turns than the recording)"
    )


def test_missing_agent_samples_in_a_replay_are_refused_before_any_call(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    flaky_agent(fake, 0.0, 0)
    record(pytester, fake, 2)
    result = sample(pytester, fake, "none", 2)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --consistency-rejudge=2: 4 agent sample(s) have no complete cassette and must be asked live, but "
            "this session replays only (--consistency-record=none)*"
        ]
    )
    assert fake.requests == []


def test_a_task_without_a_simulated_user_is_left_out_and_said(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    flaky_agent(fake, 0.0, 0)
    record(pytester, fake, 2)
    pytester.makepyfile(
        test_plain="""
import pytest


@pytest.mark.repeat_consistency(n=2)
def test_plain(pinned_client, consistency):
    consistency.record(pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "Agent: hello"}]).choices[0].message.content)
"""
    )
    assert run_recorded(pytester, fake.base_url, "all", "test_plain.py").ret == 0
    fake.reset()
    flaky_agent(fake, 0.0, 0)
    result = sample(pytester, fake, "once", 2)
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(
        [
            "consistency rejudge: left out 1 task(s) whose recording holds no simulated user's call "
            '(consistency.role("user")): test_plain.py::test_plain'
        ]
    )
    assert [t["task_id"] for t in user_section(pytester)["tasks"]] == [TASK]


def test_a_source_re_recorded_since_makes_old_agent_samples_an_error_naming_the_file(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    flaky_agent(fake, 0.0, 0)
    record(pytester, fake, 2)
    flaky_agent(fake, 0.0, 0)
    assert sample(pytester, fake, "once", 2).ret == 0
    fake.reset()
    varying_user(fake, 0.0, 0)  # the user now asks for an exchange
    assert run_recorded(pytester, fake.base_url, "all").ret == 0  # min_pass=0: its failures are tolerated
    result = sample(pytester, fake, "none", 2)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --consistency-rejudge: agent sample cassette cassettes/test_dialogue/test_dialogue/rejudge/rep-1/"
            "agent-1.yaml no longer replays repetition 1's recording*"
        ]
    )


def test_junit_markdown_and_html_carry_the_simulated_users_part(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    import xml.etree.ElementTree as ET

    varying_user(fake, 0.5, 8)
    record(pytester, fake, 4)
    result = sample(
        pytester, fake, "once", 2, "--junitxml=junit.xml", "--consistency-md=out.md", "--consistency-html=out.html"
    )
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    section = user_section(pytester)
    root = ET.parse(pytester.path / "junit.xml").getroot()
    suite = {
        p.get("name"): p.get("value")
        for p in root.iter("property")
        if p.get("name", "").startswith("consistency.simulated_user")
    }
    assert suite["consistency.simulated_user.samples"] == "2"
    assert float(suite["consistency.simulated_user.agent_flip_rate"]) == section["suite"]["flip_rate"]
    assert float(suite["consistency.simulated_user.user_gap_pp"]) == section["suite"]["user_gap_pp"]
    case = next(c for c in root.iter("testcase") if c.get("name", "").endswith("[rep2@agent1]"))
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    figures = section["tasks"][0]["figures"]
    assert float(props["consistency.task.simulated_user.agent_gap_pp"]) == figures["agent_gap_pp"]
    markdown = (pytester.path / "out.md").read_text()
    assert "### Sampling the agent on a simulated user's recorded turns" in markdown
    assert f"simulated user {TASK}: 2 agent sample(s) per recorded user; agent flip rate" in markdown
    page = (pytester.path / "out.html").read_text()
    heading = "<h2>Sampling the agent on a simulated user&#x27;s recorded turns: 2 agent sample(s) per repetition</h2>"
    assert f'<section id="simulated-user">{heading}' in page


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (
            ["--consistency-rejudge=2", "--consistency-rejudge-role=user"],
            "*argument --consistency-rejudge-role: 'user' is not one of judge, agent",
        ),
        (
            ["--consistency-rejudge-role=agent"],
            "ERROR: --consistency-rejudge-role chooses "
            "the role a rejudge session samples again: add --consistency-rejudge=M*",
        ),
        (
            ["--consistency-rejudge=2", "--consistency-rejudge-role=agent", "--consistency-judge-flip-max=10"],
            "ERROR: --consistency-judge-flip-max gates on the judge's flip rate, which a rejudge session sampling the "
            "agent (--consistency-rejudge-role=agent) does not measure*",
        ),
    ],
    ids=["unknown-role", "without-rejudge", "judge-gate"],
)
def test_a_bad_role_is_one_usage_error_naming_the_option(pytester: pytest.Pytester, args: list[str], why: str) -> None:
    pytester.makepyfile(test_dialogue=SUITE.replace("N,", "2,"))
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([why])
    assert len([line for line in result.stderr.lines if fnmatch.fnmatch(line, why)]) == 1  # said once


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("ini", "[pytest]\nconsistency_rejudge = 2\nconsistency_rejudge_role = simulator\n"),
        ("yaml", "rejudge:\n  samples: 2\n  role: simulator\n"),
    ],
)
def test_a_bad_role_in_the_ini_or_yaml_file_is_a_usage_error(pytester: pytest.Pytester, where: str, text: str) -> None:
    pytester.makepyfile(test_dialogue=SUITE.replace("N,", "2,"))
    if where == "ini":
        pytester.makeini(text)
    else:
        (pytester.path / "consistency.yaml").write_text(text)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'simulator' is not one of judge, agent*"])


def test_shards_of_an_agent_sampling_session_merge_to_the_unsharded_figures(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    from suites import cli

    two = SUITE.replace("N,", "3,") + SUITE.replace("N,", "3,").replace("def test_dialogue", "def test_other").replace(
        "import pytest\n", ""
    )
    pytester.makepyfile(test_dialogue=two)
    flaky_agent(fake, 0.4, 6)
    assert run_recorded(pytester, fake.base_url, "all").ret == 0
    fake.reset()
    flaky_agent(fake, 0.4, 7)
    assert sample(pytester, fake, "once", 3).ret in (0, 1)
    whole = user_section(pytester)
    assert len(whole["tasks"]) == 2
    for index in (1, 2):
        result = sample(pytester, fake, "none", 3, f"--consistency-shard={index}/2")
        assert result.ret in (0, 1), result.stdout.str()[-3000:]
        (pytester.path / "report.json").rename(pytester.path / f"shard{index}.json")
    merged = cli("merge", "shard1.json", "shard2.json", "-o", "merged.json", cwd=pytester.path)
    assert merged.returncode in (0, 1), merged.stdout + merged.stderr
    assert load_report(pytester, "merged.json")["summary"]["simulated_user"] == whole
