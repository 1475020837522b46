"""``--consistency-resample``: a multi-step task recorded on the loopback server, step 2 resampled live from
repetition 1's exact prefix, then the samples replayed offline (serially and under xdist)."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from suites import REACT_SUITE, cli, load_report, run_recorded

TASK = "test_react.py::test_react"
SAMPLES = Path("cassettes/test_react/test_react/resample/rep1@2")


def resample(pytester: pytest.Pytester, fake: FakeOpenAI, mode: str, *args: str) -> pytest.RunResult:
    return run_recorded(
        pytester, fake.base_url, mode, f"--consistency-resample={TASK}@2", "--consistency-resample-n=4", *args
    )


def rows(pytester: pytest.Pytester) -> list[tuple[str, int, int]]:
    section = load_report(pytester)["summary"]["resample"]
    return [(row["label"], row["samples"], row["passed"]) for row in section["rows"]]


def texts(*replies: str) -> list[Step]:
    return [Step(text=reply) for reply in replies]


#: Repetition 1 passes through mail, 2 fails after mail, 3 answers at once and fails.
RECORDING = texts(
    "Action: mail[invoice]",
    "Action: answer[Alice]",
    "Action: mail[invoice]",
    "Action: answer[Bob]",
    "Action: answer[Bob]",
)
#: What step 2 (and what follows) answers in the four live samples, in order.
LIVE = texts(
    "Action: answer[Alice]",
    "Action: answer[Bob]",
    "Action: calendar[friday]",
    "Action: answer[Alice]",
    "Action: answer[Alice]",
)
EXPECTED_ROWS = [
    ("action: answer[Alice]", 2, 2),
    ("action: calendar[friday]", 1, 1),
    ("action: answer[Bob]", 1, 0),
]


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake: FakeOpenAI) -> pytest.Pytester:
    pytester.makepyfile(test_react=REACT_SUITE)
    fake.script(*RECORDING)
    result = run_recorded(pytester, fake.base_url, "all")
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert len(fake.requests) == 5
    fake.reset()
    return pytester


@pytest.fixture
def sampled(recorded: pytest.Pytester, fake: FakeOpenAI) -> pytest.Pytester:
    fake.script(*LIVE)
    result = resample(recorded, fake, "once")
    assert result.ret == 0, result.stdout.str()[-3000:]
    return recorded


def test_resampling_step_2_replays_the_prefix_and_samples_the_step_live(
    recorded: pytest.Pytester, fake: FakeOpenAI
) -> None:
    fake.script(*LIVE)
    result = resample(recorded, fake, "once")
    assert result.ret == 0, result.stdout.str()[-3000:]
    # The cost was said before anything was sent: repetition 1 made 1 call of 10 tokens from step 2 on.
    result.stdout.fnmatch_lines(
        [
            f"consistency resample: {TASK}@2, 4 sample(s) from repetition 1's prefix (steps 1..1 replayed)*",
            "consistency resample cost: 4 sample(s) go live: about 4 call(s) and 40 token(s)*",
        ]
    )
    # Not one prefix call went live: every request the server saw already held step 1's reply.
    assert len(fake.requests) == 5
    assert all(len(r["body"]["messages"]) >= 4 for r in fake.requests)
    assert all(r["body"]["messages"][2]["content"] == "Action: mail[invoice]" for r in fake.requests)
    assert rows(recorded) == EXPECTED_ROWS
    section = load_report(recorded)["summary"]["resample"]
    assert (section["task"], section["step"], section["source"], section["samples"]) == (TASK, 2, 1, 4)
    assert (section["live"], section["estimated_calls"], section["estimated_tokens"], section["steps"]) == (4, 4, 40, 2)
    assert section["cassettes"] == str(SAMPLES)
    # Each sample in a cassette of its own that starts with repetition 1's recorded step 1.
    files = sorted((recorded.path / SAMPLES).glob("*.yaml"))
    assert [f.name for f in files] == [f"sample-{i}.yaml" for i in (1, 2, 3, 4)]
    out = result.stdout.str()
    assert (
        f"resample {TASK}@2 from repetition 1: resampling step 2 alone gives 3 distinct decisions in 4 samples; "
        "3/4 passed, which reproduces the inconsistency\n"
        "  steps 1..1 replayed from repetition 1 of 2 steps; 4 sampled live (estimated 4 call(s), 40 token(s)); "
        f"{SAMPLES}\n"
        "  decision at step 2        samples  passed\n"
        "  action: answer[Alice]           2       2\n"
        "  action: calendar[friday]        1       1\n"
        "  action: answer[Bob]             1       0\n"
        "  the samples confirm the cause sampling at step 2: the same request gave 3 distinct decision(s) in 4 "
        "samples\n"
    ) in out
    assert load_report(recorded)["tasks"][0]["why"]["confirmed"] is True
    # The attribution line of the task carries the resampling clause, after where the samples part.
    parts = load_report(recorded)["tasks"][0]["trajectory"]["parts"]
    assert parts[0].startswith("repetitions part at step 2")
    assert parts[1] == "resampling step 2 alone gives 3 distinct decisions in 4 samples"
    # The task's other repetitions and tasks are not run: the session is the four samples.
    task = load_report(recorded)["tasks"]
    assert [t["task_id"] for t in task] == [TASK] and task[0]["n"] == 4


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_committed_samples_replay_offline_with_the_same_distribution(
    sampled: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")
    result = resample(sampled, fake, "none", *workers)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert fake.requests == []
    result.stdout.fnmatch_lines(["consistency resample cost: every sample replays its committed cassette*"])
    assert rows(sampled) == EXPECTED_ROWS
    assert load_report(sampled)["summary"]["resample"]["live"] == 0


def test_markdown_and_html_show_the_table(sampled: pytest.Pytester, fake: FakeOpenAI) -> None:
    resample(sampled, fake, "none", "--consistency-md=out.md", "--consistency-html=out.html")
    markdown = (sampled.path / "out.md").read_text()
    assert "### Resampling step 2" in markdown
    assert "| `action: answer[Alice]` | 2 | 2 |" in markdown
    page = (sampled.path / "out.html").read_text()
    assert '<section id="resample"><h2>Resampling step 2</h2>' in page
    assert "<td><code>action: calendar[friday]</code></td><td class=num>1</td><td class=num>1</td>" in page


def test_one_byte_changed_in_the_prefix_is_an_error_naming_the_step_and_nothing_goes_live(
    recorded: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "argument" -> "argumenT": the agent's step 1 request is no longer the recorded one.
    monkeypatch.setenv("REACT_SYSTEM", "Use tools. Reply: Action: tool[argumenT]")
    fake.script(*LIVE)
    result = resample(recorded, fake, "once")
    assert result.ret == 1
    assert fake.requests == []
    result.stdout.fnmatch_lines(
        [
            f"*resample {TASK}@2, sample 1: the agent's request at step 1 is not the one repetition 1 recorded "
            "(cassettes/test_react/test_react/rep-1.yaml)*"
        ]
    )
    assert load_report(recorded)["summary"]["resample"]["errors"][0].startswith("sample 1: failed")
    # No sample cassette holds more than the prefix: a later run samples them again rather than trusting them.
    for path in (recorded.path / SAMPLES).glob("*.yaml"):
        assert path.read_text().count("- request:") <= 1


def test_a_sample_whose_prefix_is_no_longer_the_recording_is_refused(
    sampled: pytest.Pytester, fake: FakeOpenAI
) -> None:
    source = sampled.path / "cassettes/test_react/test_react/rep-1.yaml"
    source.write_text(source.read_text().replace("Action: mail[invoice]", "Action: mail[invoicE]", 1))
    result = resample(sampled, fake, "none")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [
            "*sample cassette cassettes/test_react/test_react/resample/rep1@2/sample-1.yaml no longer starts with "
            "repetition 1's recording (step 1 differs*"
        ]
    )


def test_going_live_without_a_key_is_refused_naming_the_option_and_the_variable(
    recorded: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    result = resample(recorded, fake, "once")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [
            f"*--consistency-resample={TASK}@2: 4 of 4 sample(s) have no cassette under {SAMPLES} and must be "
            "sampled live, which needs the openai route's key: $OPENAI_API_KEY is not set*"
        ]
    )
    assert fake.requests == []


def test_replay_only_with_missing_samples_says_the_cost_and_the_command(
    recorded: pytest.Pytester, fake: FakeOpenAI
) -> None:
    result = resample(recorded, fake, "none")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [
            "*must be sampled live, but this session replays only (--consistency-record=none). To sample them: "
            "--consistency-record=once with the route's key set; that would spend about 4 call(s) and 40 token(s)*"
        ]
    )
    assert fake.requests == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([f"--consistency-resample={TASK}x@2"], f"no marked task '{TASK}x' was collected*closest task ids: {TASK}"),
        (
            [f"--consistency-resample={TASK}@3"],
            "*step 3 is out of range; repetition 1 of * made 2 model call(s)*STEP is 1 to 2",
        ),
        ([f"--consistency-resample={TASK}@1", "--consistency-resample-from=4"], "*has 3 repetition(s); choose *1 to 3"),
        ([f"--consistency-resample={TASK}@1", "--consistency-resample-n=0"], "*--consistency-resample-n*at least 1*"),
        (["--consistency-resample=test_plain.py::test_plain@1"], "*is not a @pytest.mark.repeat_consistency task*"),
        ([f"--consistency-resample={TASK}"], "*is not TASK@STEP*"),
        (
            [f"--consistency-resample={TASK}@2", "--consistency-rejudge=2"],
            "--consistency-resample and --consistency-rejudge are both set*run them as two sessions",
        ),
    ],
    ids=["unknown-task", "step-range", "rep-range", "m-zero", "unmarked", "no-step", "with-rejudge"],
)
def test_bad_resample_options_are_clear_errors(
    recorded: pytest.Pytester, fake: FakeOpenAI, args: list[str], message: str
) -> None:
    recorded.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = run_recorded(recorded, fake.base_url, "once", *args)
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*{message}*"])
    assert fake.requests == []


def test_no_secret_reaches_the_resample_output_or_the_sample_cassettes(
    recorded: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """The adversary: the model echoes the key as its decision at the resampled step."""
    fake.script(*texts(f"Action: answer[{GOOD_KEY}]", "Action: answer[Alice]", "Action: answer[Bob]", "Action: x[y]"))
    result = resample(recorded, fake, "once", "--consistency-md=out.md", "--consistency-html=out.html", "-v")
    outputs: dict[str, Any] = {
        "stdout": result.stdout.str(),
        "stderr": result.stderr.str(),
        "report": (recorded.path / "report.json").read_text(),
        "md": (recorded.path / "out.md").read_text(),
        "html": (recorded.path / "out.html").read_text(),
    }
    for path in (recorded.path / SAMPLES).glob("*.yaml"):
        outputs[str(path)] = path.read_text()
    leaks = [name for name, text in outputs.items() if GOOD_KEY in text or GOOD_KEY[8:24] in text]
    assert leaks == []
    labels = [row["label"] for row in json.loads(outputs["report"])["summary"]["resample"]["rows"]]
    assert len(labels) == 4  # the decision is still counted, with the key redacted from its label


def bisect_command(
    cwd: Path, fake: FakeOpenAI, mode: str, *args: str, task: str = TASK, options: tuple[str, ...] = ()
) -> Any:
    import subprocess
    import sys

    command = [sys.executable, "-m", "pytest_consistency.resample", task, "-n", "2", *options, "--reports", "probes"]
    command += ["--"]
    command += [f"--consistency-base-url={fake.base_url}", "--consistency-model=fake-model", "-p", "no:randomly"]
    command += [f"--consistency-record={mode}", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_bisection_finds_the_step_whose_resampling_alone_reproduces_it_then_replays_offline(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repetition 1 takes 3 steps (mail, calendar, answer). Resampled from step 1 or 2 the samples pass and fail;
    with step 2 held (resampling step 3) both answer Alice: step 2 is the one, found in 3 probes (1, 2, 3)."""
    pytester.makepyfile(test_react=REACT_SUITE)
    fake.script(*texts("Action: mail[invoice]", "Action: calendar[friday]", "Action: answer[Alice]"))
    run_recorded(pytester, fake.base_url, "all")
    fake.reset()
    fake.script(
        *texts(
            "Action: answer[Alice]",  # step 1, sample 1: passes
            "Action: answer[Bob]",  # step 1, sample 2: fails
            "Action: answer[Alice]",  # step 2, sample 1
            "Action: answer[Carol]",  # step 2, sample 2
            "Action: answer[Alice]",  # step 3, sample 1
            "Action: answer[Alice]",  # step 3, sample 2
        )
    )
    done = bisect_command(pytester.path, fake, "once")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "step 1: reproduces (action: answer[Alice] 1/1, action: answer[Bob] 0/1)",
        "step 2: reproduces (action: answer[Alice] 1/1, action: answer[Carol] 0/1)",
        "step 3: settled (action: answer[Alice] 2/2)",
        "step 2 is the step whose resampling alone reproduces the inconsistency: resampled from step 2 the outcomes "
        "differ, with step 2 held they do not (step 1: reproduces, step 2: reproduces, step 3: settled)",
    ]
    assert len(fake.requests) == 6
    # Every probe's samples are committed: the same bisection replays offline, without a key.
    fake.reset()
    monkeypatch.delenv("OPENAI_API_KEY")
    again = bisect_command(pytester.path, fake, "none")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout == done.stdout
    assert fake.requests == []


def test_bisection_of_a_task_without_inconsistency_says_so(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(*texts("Action: answer[Bob]", "Action: answer[Bob]"))
    done = bisect_command(recorded.path, fake, "once")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no inconsistency to attribute: resampling step 1 (a fresh run) gives one outcome" in done.stdout


def test_bisection_stops_on_a_probe_error(recorded: pytest.Pytester, fake: FakeOpenAI) -> None:
    done = bisect_command(recorded.path, fake, "none")  # no sample cassette yet, and replay only
    assert done.returncode == 2
    assert "step 1: the resample session exited 4" in done.stderr
    assert "must be sampled live, but this session replays only" in done.stderr


def test_an_unknown_task_under_xdist_fails_with_the_same_message_instead_of_crashing_the_workers(
    recorded: pytest.Pytester, fake: FakeOpenAI
) -> None:
    result = run_recorded(recorded, fake.base_url, "none", f"--consistency-resample={TASK}x@1", "-n", "2")
    assert result.ret == 1
    out = result.stdout.str()
    assert "INTERNALERROR" not in out
    assert f"no marked task '{TASK}x' was collected" in out and f"closest task ids: {TASK}" in out
    report = recorded.path / "report.json"
    if report.exists():  # no sample of it exists to count
        assert load_report(recorded)["summary"].get("resample") is None


def test_a_source_recorded_in_the_other_format_is_named_with_the_conversion_not_a_new_recording(
    recorded: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """After a switch to JSON cassettes, the source repetition is in ``rep-1.yaml``: the advice converts it
    (recording it again would pay for what is recorded); nothing is sent."""
    result = resample(recorded, fake, "once", "--consistency-cassette-format=json")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [
            "*has no cassette at cassettes/test_react/test_react/rep-1.json; "
            "cassettes/test_react/test_react/rep-1.yaml is there, in the other format: convert the cassettes with "
            "`pytest-consistency cassettes convert --to json`*"
        ]
    )
    assert fake.requests == []
    done = cli("cassettes", "convert", "--to", "json", cwd=recorded.path)
    assert done.returncode == 0, done.stderr
    fake.script(*LIVE)
    result = resample(recorded, fake, "once", "--consistency-cassette-format=json")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert rows(recorded) == EXPECTED_ROWS


@pytest.mark.parametrize(
    ("task", "options", "message"),
    [
        (
            f"{TASK}x",
            (),
            f"python -m pytest_consistency.resample: TASK: no marked task '{TASK}x' was collected (TASK is the task id "
            f"as the report prints it); the closest task ids: {TASK}",
        ),
        (
            "billing",
            (),
            f"*TASK: no marked task 'billing' was collected*; none is close; the marked tasks collected: {TASK}",
        ),
        (
            TASK,
            ("--from", "4"),
            f"python -m pytest_consistency.resample: --from 4: {TASK} has 3 repetition(s); choose a repetition from 1 "
            "to 3",
        ),
    ],
    ids=["unknown-task", "nothing-close", "rep-beyond-n"],
)
def test_bisection_of_a_task_or_repetition_that_does_not_exist_is_a_usage_error(
    recorded: pytest.Pytester, fake: FakeOpenAI, task: str, options: tuple[str, ...], message: str
) -> None:
    """Exit 2 with one sentence naming the argument, what exists and the fix: no traceback, and no probe report
    claiming 0 samples of a task that does not exist."""
    done = bisect_command(recorded.path, fake, "none", task=task, options=options)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "ValueError" not in done.stderr, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and fnmatch.fnmatch(lines[0], message), done.stderr
    for path in (recorded.path / "probes").glob("*.json"):
        assert json.loads(path.read_text())["summary"].get("resample") is None, path
    assert fake.requests == []


BEYOND_N = [f"--consistency-resample={TASK}@1", "--consistency-resample-from=4"]


#: Under xdist an unknown task is ``test_an_unknown_task_under_xdist_fails_with_the_same_message...`` (which checks
#: the report too).
@pytest.mark.parametrize(
    ("args", "workers"),
    [
        pytest.param([f"--consistency-resample={TASK}x@1"], [], id="unknown-task-serial"),
        pytest.param(BEYOND_N, [], id="rep-beyond-n-serial"),
        pytest.param(BEYOND_N, ["-n", "2"], id="rep-beyond-n-xdist"),
    ],
)
def test_a_resample_session_of_a_task_or_repetition_that_does_not_exist_writes_no_resample_section(
    recorded: pytest.Pytester, fake: FakeOpenAI, args: list[str], workers: list[str]
) -> None:
    """The report of such a session has no ``summary.resample``: none of its samples exists to count."""
    result = run_recorded(recorded, fake.base_url, "none", *args, *workers)
    assert result.ret == (1 if workers else 4), result.stdout.str()[-2000:]
    report = recorded.path / "report.json"
    if report.exists():
        assert load_report(recorded)["summary"].get("resample") is None
    assert fake.requests == []


def test_the_resample_figures_are_in_the_summary_the_hooks_receive_before_any_output_is_written(
    sampled: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """The mode's figures are part of building the summary: a ``pytest_consistency_summary`` hook sees them, and
    sees no output written yet (the report was written before the hooks ran)."""
    sampled.makeconftest(
        """
import json
import pathlib


def pytest_consistency_summary(summary, config):
    rows = [row.label for row in summary.resample.rows] if summary.resample is not None else None
    seen = {"rows": rows, "report": pathlib.Path("report.json").exists()}
    pathlib.Path("seen.json").write_text(json.dumps(seen))
"""
    )
    (sampled.path / "report.json").unlink()
    result = resample(sampled, fake, "none")
    assert result.ret == 0, result.stdout.str()[-3000:]
    seen = json.loads((sampled.path / "seen.json").read_text())
    assert seen == {"rows": [label for label, _, _ in EXPECTED_ROWS], "report": False}, seen
    assert rows(sampled) == EXPECTED_ROWS
