"""``--consistency-judge-votes=M``: each recorded repetition's outcome is the majority of up to M judge samples on its
recorded agent output, asked one at a time until the majority is decided. The agent replays from each repetition's
cassette (no agent request reaches the loopback server); the judge is scripted per agent output, so that the samples
it gives, and so the majorities and the number of judge requests, are known in advance and the same under xdist."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Step
from judged_suite import TASK, agent_requests, is_judge, judge_requests, suite
from suites import cli, load_report, run_recorded


def record(pytester: pytest.Pytester, fake: FakeOpenAI, source: str, n: int) -> None:
    """Record the suite with an agent whose answer names its call (``Invoice 3``: every repetition's output is its
    own) and a judge that passes everything."""
    pytester.makepyfile(test_summary=source)
    calls = iter(range(1, 1000))
    fake.answer = lambda body: Step(text="PASS" if is_judge(body) else f"Invoice {next(calls)} is due on Friday.")
    result = run_recorded(pytester, fake.base_url, "all", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert len(agent_requests(fake)) == n
    fake.reset()


class Judge:
    """A judge scripted per agent output: the k-th time it is asked about ``Invoice i`` it answers ``script[i][k]``
    (True: PASS). A repetition's samples are asked in order (each waits for the one before), so the k-th request about
    an output is that repetition's judge sample k, serially or on two workers."""

    def __init__(self, script: dict[int, list[bool]]) -> None:
        self.script = script
        self.asked: dict[int, int] = {}
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Step:
        assert is_judge(body), "an agent request reached the server"
        invoice = int(str(body["messages"][0]["content"]).split("Invoice ")[1].split()[0])
        with self.lock:
            k = self.asked.get(invoice, 0)
            self.asked[invoice] = k + 1
        return Step(text="PASS" if self.script[invoice][k] else "FAIL")


def flipping(n: int, m: int, q: float, seed: int) -> dict[int, list[bool]]:
    """Every repetition's M judge verdicts: FAIL with probability q, independently (seeded)."""
    rng = random.Random(seed)
    return {i: [rng.random() >= q for _ in range(m)] for i in range(1, n + 1)}


def stop_rule(verdicts: list[bool], m: int) -> tuple[bool, int]:
    """The majority of ``verdicts`` read in order until ``m // 2 + 1`` agree, and how many were read: written out
    here from the rule, independently of the plugin's code."""
    need = m // 2 + 1
    for read in range(1, m + 1):
        passes = sum(verdicts[:read])
        if passes >= need or read - passes >= need:
            return passes >= need, read
    raise AssertionError("an odd M always decides")


def votes(pytester: pytest.Pytester, fake: FakeOpenAI, mode: str, m: int, *args: str) -> pytest.RunResult:
    return run_recorded(pytester, fake.base_url, mode, f"--consistency-judge-votes={m}", "-p", "no:randomly", *args)


@pytest.mark.parametrize(
    ("answers", "asked"), [([True] * 3, 2), ([True, False, True], 3)], ids=["agreeing", "alternating"]
)
def test_the_judge_is_asked_only_until_the_majority_is_decided(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, answers: list[bool], asked: int
) -> None:
    """M = 3: a judge whose first two samples agree is asked twice per repetition, one whose samples alternate three
    times; a sample not needed is skipped, saying why, and writes no cassette; no agent request goes out. The samples
    recorded then replay offline, without a key: a replay is refused only for a missing sample the rule always asks
    (samples 1 and 2), not for a sample 3 it does not need."""
    record(pytester, fake, suite(4), 4)
    fake.answer = Judge({i: list(answers) for i in range(1, 5)})
    result = votes(pytester, fake, "once", 3, "-rs")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert agent_requests(fake) == []
    assert len(judge_requests(fake)) == 4 * asked
    samples = pytester.path / "cassettes/test_summary/test_summary/rejudge"
    assert len(list(samples.rglob("judge-*.yaml"))) == 4 * asked
    if asked == 2:
        result.stdout.fnmatch_lines(["*majority decided after 2 of 3 samples: repetition 1 of *"])
    report = load_report(pytester)
    [task] = report["tasks"]
    assert task["n"] == 4 and len(task["repetitions"]) == 4
    assert [rep["outcome"] for rep in task["repetitions"]] == ["passed"] * 4
    judge = report["summary"]["judge"]
    assert judge["votes"] is True and judge["suite"]["votes_asked"] == 4 * asked
    result.stdout.fnmatch_lines(["tasks 1, repetitions n=4, scored at k=4*"])
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")
    result = votes(pytester, fake, "none", 3)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert fake.requests == []
    replayed = load_report(pytester)
    assert replayed["summary"]["judge"] == judge and replayed["tasks"][0]["judge"] == task["judge"]


def test_the_majority_decides_each_repetition_and_the_gates_read_it(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """The majority is recovered where sample 1 was outvoted, both ways; a failing sample 1 outvoted in a task that
    must pass every repetition (min_pass=1) no longer fails the run."""
    record(pytester, fake, suite(4, 1), 4)
    script = {1: [False, True, True], 2: [True, True, False], 3: [True, False, True], 4: [False, True, True]}
    fake.answer = Judge(script)
    result = votes(pytester, fake, "once", 3)
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = load_report(pytester)
    [task] = report["tasks"]
    assert task["verdict"] == "pass" and task["passes"] == 4
    judged = task["judge"]
    assert [row["verdicts"] for row in judged["repetitions"]] == ["FPP", "PP.", "PFP", "FPP"]
    assert judged["figures"]["majority_changed"] == 2 and judged["figures"]["votes_asked"] == 11
    assert len(judge_requests(fake)) == 11
    out = " ".join(result.stdout.str().split())  # the terminal's judge block, unwrapped
    assert (
        f"judge votes {TASK}: majority of 3 sample(s); 11 of 12 sample(s) asked (1 saved by the stop rule); the "
        "majority changed 2 of 4 repetition(s) against judge sample 1; flip rate " in out
    )
    assert "votes per repetition: FPP PP. PFP FPP; gap " in out and "judge votes, suite: 11 of 12 sample(s)" in out
    result.stdout.fnmatch_lines(["consistency judge votes: each recorded repetition's outcome is the majority of 3*"])
    # The same recording, outvoted the other way: the majority fails repetitions 2 and 3, sample 1 passed them.
    fake.reset()
    for path in (pytester.path / "cassettes/test_summary/test_summary/rejudge").rglob("*.yaml"):
        path.unlink()
    fake.answer = Judge({1: [True, True], 2: [True, False, False], 3: [True, False, False], 4: [True, True]})
    result = votes(pytester, fake, "once", 3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    [task] = load_report(pytester)["tasks"]
    assert [rep["outcome"] for rep in task["repetitions"]] == ["passed", "failed", "failed", "passed"]
    assert task["verdict"] == "fail"


@pytest.mark.parametrize("m", [3, 5])
def test_a_flipping_judge_s_majority_and_its_requests_are_the_stop_rule_s(
    pytester: pytest.Pytester, fake: FakeOpenAI, m: int
) -> None:
    """A judge that says FAIL with probability q = 0.3 on an agent that deserves a pass: every repetition's outcome is
    the stop rule's majority of its scripted samples, asked exactly as many times as the rule reads; serially and on
    two workers alike (the figures and the number of judge requests)."""
    n = 12
    record(pytester, fake, suite(n), n)
    script = flipping(n, m, 0.3, seed=m)
    expected = {i: stop_rule(script[i], m) for i in script}
    found = []
    for workers in ([], ["-n", "2"]):
        fake.reset()
        for path in (pytester.path / "cassettes/test_summary/test_summary/rejudge").rglob("*.yaml"):
            path.unlink()
        fake.answer = Judge(script)
        result = votes(pytester, fake, "once", m, *workers)
        assert result.ret == 0, result.stdout.str()[-3000:]
        assert agent_requests(fake) == []
        assert len(judge_requests(fake)) == sum(read for _, read in expected.values())
        report = load_report(pytester)
        [task] = report["tasks"]
        outcomes = [rep["outcome"] == "passed" for rep in task["repetitions"]]
        assert outcomes == [expected[i][0] for i in range(1, n + 1)]
        found.append(
            (len(judge_requests(fake)), task["passes"], task["mean_at_k"], report["summary"]["judge"], task["judge"])
        )
    assert found[0] == found[1]


def test_committed_rejudge_samples_serve_votes_offline(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Samples a rejudge session recorded are the votes' samples: replayed without a key and without a request, the
    stop rule counts those it needs (a recorded sample 3 after two agreeing ones does not count)."""
    record(pytester, fake, suite(3), 3)
    script = {1: [True, True, False], 2: [False, True, False], 3: [False, False, True]}
    fake.answer = Judge(script)
    assert run_recorded(pytester, fake.base_url, "once", "--consistency-rejudge=3", "-p", "no:randomly").ret == 0
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")
    result = votes(pytester, fake, "none", 3)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert fake.requests == []
    [task] = load_report(pytester)["tasks"]
    assert [rep["outcome"] for rep in task["repetitions"]] == ["passed", "failed", "failed"]


def test_merged_shards_of_a_votes_session_give_the_serial_figures(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    two = suite(3) + suite(3).replace("def test_summary", "def test_title").replace("import pytest\n", "")
    pytester.makepyfile(test_summary=two)
    calls = iter(range(1, 1000))
    fake.answer = lambda body: Step(text="PASS" if is_judge(body) else f"Invoice {next(calls)} is due on Friday.")
    assert run_recorded(pytester, fake.base_url, "all", "-p", "no:randomly").ret == 0
    fake.reset()
    fake.answer = Judge(flipping(6, 3, 0.4, seed=5))
    result = votes(pytester, fake, "once", 3)
    assert result.ret == 0, result.stdout.str()[-3000:]
    whole = load_report(pytester)
    for index in (1, 2):
        result = votes(pytester, fake, "none", 3, f"--consistency-shard={index}/2")
        assert result.ret == 0, result.stdout.str()[-3000:]
        (pytester.path / "report.json").rename(pytester.path / f"shard{index}.json")
    merged = cli("merge", "shard1.json", "shard2.json", "-o", "merged.json", cwd=pytester.path)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    together = load_report(pytester, "merged.json")
    assert together["summary"]["judge"] == whole["summary"]["judge"]
    assert {t["task_id"]: t["judge"] for t in together["tasks"]} == {t["task_id"]: t["judge"] for t in whole["tasks"]}
    for key in ("mean_at_k", "pass_hat_k", "consistency_gap_pp", "intervals"):
        assert together["summary"][key] == whole["summary"][key], key
    assert [(t["task_id"], t["passes"], t["n"]) for t in together["tasks"]] == [
        (t["task_id"], t["passes"], t["n"]) for t in whole["tasks"]
    ]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("2", "'2' is even: give an odd number, so that a majority always exists"),
        ("0", "'0' must be at least 1"),
        ("three", "'three' is not a whole number"),
    ],
)
def test_a_bad_number_of_votes_is_one_usage_error_naming_the_option(
    pytester: pytest.Pytester, value: str, why: str
) -> None:
    pytester.makepyfile(test_summary=suite(2))
    result = pytester.runpytest(f"--consistency-judge-votes={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument --consistency-judge-votes: {why}"])


@pytest.mark.parametrize("other", ["--consistency-rejudge=3", "--consistency-sequential"])
def test_votes_with_another_session_mode_is_one_usage_error(pytester: pytest.Pytester, other: str) -> None:
    pytester.makepyfile(test_summary=suite(2))
    result = pytester.runpytest("--consistency-judge-votes=3", other)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --consistency-judge-votes and {other.split('=')[0]} *"])


def test_a_rejudge_session_counts_n_repetitions_not_n_times_m(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """Re-judging's headline figures read each repetition once (its judge sample 1), its samples kept beside it."""
    record(pytester, fake, suite(3), 3)
    fake.answer = Judge({i: [True, False, True] for i in range(1, 4)})
    result = run_recorded(pytester, fake.base_url, "once", "--consistency-rejudge=3", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["tasks 1, repetitions n=3, scored at k=3*"])
    [task] = load_report(pytester)["tasks"]
    assert task["n"] == 3 and [len(rep["samples"]) for rep in task["repetitions"]] == [3, 3, 3]


def test_a_needed_sample_missing_in_a_replay_fails_its_item_and_sends_nothing(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """Samples 1 and 2 disagree, so sample 3 is needed; its cassette deleted, a replay fails that item (it is not
    refused at collection: whether it is needed is known only once samples 1 and 2 have run)."""
    record(pytester, fake, suite(2), 2)
    fake.answer = Judge({i: [True, False, True] for i in range(1, 3)})
    assert votes(pytester, fake, "once", 3).ret == 0
    (pytester.path / "cassettes/test_summary/test_summary/rejudge/rep-2/judge-3.yaml").unlink()
    fake.reset()
    result = votes(pytester, fake, "none", 3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert fake.requests == []
    result.stdout.fnmatch_lines(
        [
            "*--consistency-judge-votes=3: 1 judge sample(s) have no complete cassette and must be asked live, but "
            "this session replays only (--consistency-record=none)*"
        ]
    )
    # The repetition has no majority of verdicts: the setup's failure (an error, never a judge's FAIL).
    [task] = load_report(pytester)["tasks"]
    assert task["verdict"] == "error"
    assert (
        "--consistency-judge-votes=3: 1 judge sample(s) have no complete cassette"
        in task["repetitions"][1]["infrastructure"]
    )
