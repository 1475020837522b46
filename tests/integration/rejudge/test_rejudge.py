"""``--consistency-rejudge=M``: a task recorded on the loopback server (a deterministic agent, a judge that says
FAIL with a known probability), then re-judged: the agent replays from each repetition's cassette (no agent request
reaches the server), the judge is asked M times per repetition, and the committed samples replay offline."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_openai import FakeOpenAI, Step
from judged_suite import TASK, agent_requests, is_judge, judge_requests, suite
from suites import load_report, run_recorded

from pytest_consistency.rejudge.cassettes import role_of

SAMPLES = Path("cassettes/test_summary/test_summary/rejudge")


def script(fake: FakeOpenAI, q: float, seed: int) -> None:
    """The agent answers the same every call (temperature 0); the judge says FAIL with probability q (seeded)."""
    rng = random.Random(seed)

    def answer(body: dict[str, Any]) -> Step:
        if is_judge(body):
            return Step(text="FAIL" if rng.random() < q else "PASS")
        return Step(text="The invoice is due on Friday.")

    fake.answer = answer


def record(pytester: pytest.Pytester, fake: FakeOpenAI, n: int) -> None:
    pytester.makepyfile(test_summary=suite(n))
    script(fake, 0.0, 0)
    result = run_recorded(pytester, fake.base_url, "all")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert len(agent_requests(fake)) == n and len(judge_requests(fake)) == n
    fake.reset()


def rejudge(pytester: pytest.Pytester, fake: FakeOpenAI, mode: str, m: int, *args: str) -> pytest.RunResult:
    return run_recorded(pytester, fake.base_url, mode, f"--consistency-rejudge={m}", "-p", "no:randomly", *args)


def judge_section(pytester: pytest.Pytester, name: str = "report.json") -> dict[str, Any]:
    """The report's judge figures: the suite's (``summary.judge``) and, as ``tasks``, each task's with its id (the
    report keeps them on the task, ``tasks[].judge``)."""
    report = load_report(pytester, name)
    tasks = [{"task_id": t["task_id"], **t["judge"]} for t in report["tasks"] if t.get("judge") is not None]
    return {**report["summary"]["judge"], "tasks": tasks}


def test_rejudging_replays_the_agent_and_asks_only_the_judge(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    record(pytester, fake, 3)
    script(fake, 0.5, 1)
    result = rejudge(pytester, fake, "once", 2, "-v")
    assert result.ret == 0, result.stdout.str()[-3000:]
    # Not one agent call went out; the judge was asked M x n times.
    assert agent_requests(fake) == []
    assert len(judge_requests(fake)) == 6
    # Items name their repetition and judge sample.
    result.stdout.fnmatch_lines([f"{TASK}[[]rep1@judge1[]] *", f"{TASK}[[]rep3@judge2[]] *"])
    files = sorted(str(p.relative_to(pytester.path / SAMPLES)) for p in (pytester.path / SAMPLES).rglob("*.yaml"))
    assert files == [f"rep-{r}/judge-{j}.yaml" for r in (1, 2, 3) for j in (1, 2)]
    # Each sample's cassette: the source's agent exchange, then a judge exchange of its own.
    sample = yaml.safe_load((pytester.path / SAMPLES / "rep-2" / "judge-1.yaml").read_text())["interactions"]
    assert [role_of(exchange) for exchange in sample] == ["agent", "judge"]
    source = yaml.safe_load((pytester.path / SAMPLES.parent / "rep-2.yaml").read_text())["interactions"]
    assert sample[0] == source[0] and sample[1] != source[1]
    section = judge_section(pytester)
    assert section["samples"] == 2
    [task] = section["tasks"]
    assert task["task_id"] == TASK and len(task["repetitions"]) == 3
    assert all(row["samples"] == 2 for row in task["repetitions"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_committed_samples_replay_offline_with_the_same_figures(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    record(pytester, fake, 4)
    script(fake, 0.3, 7)
    result = rejudge(pytester, fake, "once", 3)
    assert result.ret == 0, result.stdout.str()[-3000:]
    live = judge_section(pytester)
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")
    result = rejudge(pytester, fake, "none", 3, *workers)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert fake.requests == []
    assert judge_section(pytester) == live


def test_missing_samples_in_a_replay_are_refused_before_any_call(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    record(pytester, fake, 2)
    result = rejudge(pytester, fake, "none", 2)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --consistency-rejudge=2: 4 judge sample(s) have no complete cassette and must be asked live, but "
            "this session replays only (--consistency-record=none)*"
        ]
    )
    assert fake.requests == []


def test_a_missing_judge_key_is_refused_before_any_call(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    record(pytester, fake, 2)
    monkeypatch.delenv("OPENAI_API_KEY")
    result = rejudge(pytester, fake, "once", 2)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # The route's own check refuses first (the judge's route reads the agent route's key variable).
    result.stderr.fnmatch_lines(["ERROR: pytest-consistency: the pinned route cannot be used:", "*no API key*"])
    assert fake.requests == []


def test_an_agent_whose_input_varies_is_an_error_naming_the_call_and_no_agent_call_goes_out(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    record(pytester, fake, 2)
    source = pytester.path / "test_summary.py"
    source.write_text(source.read_text().replace("summarise the invoice", "summarise the invoice today"))
    script(fake, 0.0, 0)
    result = rejudge(pytester, fake, "once", 2)
    assert agent_requests(fake) == []
    result.stdout.fnmatch_lines(
        [
            f"*rejudge {TASK} rep1@judge1: the agent's call 1 is not in rep-1's recording: its input varies between "
            "runs (see the cause `input`); rejudging needs an agent whose calls replay*"
        ]
    )
    [task] = judge_section(pytester)["tasks"]
    assert len(task["excluded"]) == 4 and task["excluded"][0].startswith("rep1@judge1: ")


def test_a_source_re_recorded_since_makes_old_samples_an_error_naming_the_file(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    record(pytester, fake, 2)
    script(fake, 0.0, 0)
    assert rejudge(pytester, fake, "once", 2).ret == 0
    fake.reset()
    script(fake, 0.0, 0)
    fake.answer = lambda body: Step(text="PASS" if is_judge(body) else "The invoice is due on Monday.")
    assert run_recorded(pytester, fake.base_url, "all").ret == 0
    result = rejudge(pytester, fake, "none", 2)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --consistency-rejudge: judge sample cassette cassettes/test_summary/test_summary/rejudge/rep-1/"
            "judge-1.yaml no longer replays repetition 1's recording*"
        ]
    )


def test_json_cassettes(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    pytester.makepyfile(test_summary=suite(2))
    script(fake, 0.0, 0)
    assert run_recorded(pytester, fake.base_url, "all", "--consistency-cassette-format=json").ret == 0
    fake.reset()
    script(fake, 0.5, 3)
    result = rejudge(pytester, fake, "once", 2, "--consistency-cassette-format=json")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert agent_requests(fake) == [] and len(judge_requests(fake)) == 4
    data = json.loads((pytester.path / SAMPLES / "rep-1" / "judge-2.json").read_text())
    assert len(data["interactions"]) == 2


def test_the_recovered_flip_rate_holds_2q_1_minus_q(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """A judge that says FAIL with probability q = 0.3 (seeded), 30 repetitions x 2 samples: the exact interval of
    the flip rate holds 2q(1-q) = 0.42; the terminal shows the task's judge block and the suite's split."""
    record(pytester, fake, 30)
    script(fake, 0.3, 11)
    result = rejudge(pytester, fake, "once", 2)
    assert result.ret == 0, result.stdout.str()[-3000:]
    [task] = judge_section(pytester)["tasks"]
    figures = task["figures"]
    assert figures["flip_method"] == "clopper-pearson"
    assert figures["flip_interval"]["low"] <= 0.42 <= figures["flip_interval"]["high"]
    result.stdout.fnmatch_lines([f"judge {TASK}: 2 sample(s) per repetition; flip rate *", "judge, suite: *"])
    out = " ".join(result.stdout.str().split())  # the lines as the terminal wraps them, unwrapped
    flip = figures["flip_rate"] * 100
    assert f"flip rate {flip:.1f} % [" in out and "(clopper-pearson); kappa " in out
    assert "judge, suite: 30 repetition(s) x 2 sample(s); flip rate " in out
    assert "pp observed = agent " in out and " pp (judge majority) + judge " in out


def test_an_agent_that_varies_under_a_fixed_judge_leaves_the_judge_no_part(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    pytester.makepyfile(test_summary=suite(6))
    days = iter(["Friday", "Monday"] * 3)
    fake.answer = lambda body: Step(
        text=("PASS" if "Friday" in body["messages"][0]["content"] else "FAIL")
        if is_judge(body)
        else f"The invoice is due on {next(days)}."
    )
    assert run_recorded(pytester, fake.base_url, "all").ret == 0
    fake.reset()
    fake.answer = lambda body: Step(text="PASS" if "Friday" in body["messages"][0]["content"] else "FAIL")
    result = rejudge(pytester, fake, "once", 3)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert agent_requests(fake) == []
    [task] = judge_section(pytester)["tasks"]
    figures = task["figures"]
    assert [(row["passed"], row["samples"]) for row in task["repetitions"]] == [(3, 3), (0, 3)] * 3
    assert figures["flip_rate"] == 0.0 and figures["kappa"] == 1.0
    assert figures["judge_gap_pp"] == 0.0 and figures["majority_gap_pp"] == figures["observed_gap_pp"] > 0


TWO_TASKS = suite(3) + suite(3).replace("def test_summary", "def test_title").replace("import pytest\n", "")


def test_shards_of_a_rejudge_session_merge_to_the_unsharded_figures(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    from suites import cli

    pytester.makepyfile(test_summary=TWO_TASKS)
    script(fake, 0.0, 0)
    assert run_recorded(pytester, fake.base_url, "all").ret == 0
    fake.reset()
    script(fake, 0.4, 5)
    assert rejudge(pytester, fake, "once", 3).ret == 0
    whole = judge_section(pytester)
    assert len(whole["tasks"]) == 2
    for index in (1, 2):
        result = rejudge(pytester, fake, "none", 3, f"--consistency-shard={index}/2")
        assert result.ret == 0, result.stdout.str()[-3000:]
        (pytester.path / "report.json").rename(pytester.path / f"shard{index}.json")
    merged = cli("merge", "shard1.json", "shard2.json", "-o", "merged.json", cwd=pytester.path)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert judge_section(pytester, "merged.json") == whole


@pytest.mark.parametrize(("value", "why"), [("0", "'0' must be at least 1"), ("two", "'two' is not a whole number")])
def test_a_bad_number_of_samples_is_one_usage_error_naming_the_option(
    pytester: pytest.Pytester, value: str, why: str
) -> None:
    pytester.makepyfile(test_summary=suite(2))
    result = pytester.runpytest(f"--consistency-rejudge={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument --consistency-rejudge: {why}"])


def test_the_judge_flip_gate_fails_a_flipping_judge_and_passes_a_steady_one(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    record(pytester, fake, 30)
    script(fake, 0.5, 3)  # flip rate 0.5
    result = rejudge(pytester, fake, "once", 2, "--consistency-judge-flip-max=10")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["gate --consistency-judge-flip-max: * > 10.0 pp*FAIL*"])
    fake.reset()
    shutil.rmtree(pytester.path / SAMPLES)
    script(fake, 0.0, 3)  # never flips
    result = rejudge(pytester, fake, "once", 2, "--consistency-judge-flip-max=20")
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["gate --consistency-judge-flip-max: *ok*"])
    gate = next(g for g in load_report(pytester)["summary"]["gates"] if g["name"] == "judge_flip")
    assert gate["state"] == "pass"


def test_the_judge_flip_gate_outside_a_rejudge_session_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_summary=suite(2))
    result = pytester.runpytest("--consistency-judge-flip-max=10")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --consistency-judge-flip-max * add --consistency-rejudge=M *"])


def test_junit_and_markdown_carry_the_judge_figures(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    import xml.etree.ElementTree as ET

    record(pytester, fake, 4)
    script(fake, 0.5, 9)
    result = rejudge(
        pytester, fake, "once", 2, "--junitxml=junit.xml", "--consistency-md=out.md", "--consistency-html=out.html"
    )
    assert result.ret == 0, result.stdout.str()[-3000:]
    section = judge_section(pytester)
    root = ET.parse(pytester.path / "junit.xml").getroot()
    suite = {
        p.get("name"): p.get("value")
        for p in root.iter("property")
        if p.get("name", "").startswith("consistency.judge")
    }
    assert suite["consistency.judge.samples"] == "2"
    assert float(suite["consistency.judge.flip_rate"]) == section["suite"]["flip_rate"]
    case = next(c for c in root.iter("testcase") if c.get("name", "").endswith("[rep2@judge1]"))
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert float(props["consistency.task.judge.flip_rate"]) == section["tasks"][0]["figures"]["flip_rate"]
    markdown = (pytester.path / "out.md").read_text()
    assert "### Re-judging" in markdown and f"judge {TASK}: 2 sample(s) per repetition; flip rate" in markdown
    page = (pytester.path / "out.html").read_text()
    assert '<section id="judge"><h2>Re-judging: 2 judge sample(s) per repetition</h2>' in page
    rows = section["tasks"][0]["repetitions"]
    first = " ".join(rows[0]["verdicts"])
    assert len(rows[0]["verdicts"]) == 2 and f"<td class=num>1</td><td><code>{first}</code></td>" in page
