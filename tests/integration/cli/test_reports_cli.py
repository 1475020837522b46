"""The ``pytest-consistency`` command on reports written by real sessions: merge, show, compare.

The command is run as installed (the console script beside this interpreter), in a subprocess, as CI runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from suites import cli, consistency_section, load_report, pattern_suite, session_only

PATTERNS = {"a": "PPFPP", "b": "PPPPP", "c": "FPFPF", "d": "PPPPF", "e": "FFFFF"}
ANSWERS = {"a": ["x", "x", "y", "x", "x"], "c": ["1", "2", "1", "1", "1"]}


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """What a merge must reproduce: every figure and per-task result, not the wall-clock or the shard's warnings."""
    summary = {k: v for k, v in report["summary"].items() if k not in ("warnings", "exit_status", "passed", "gates")}
    summary["run"] = {k: v for k, v in summary.get("run", {}).items() if k != "run_id"}
    tasks = []
    for task in report["tasks"]:
        wall = {"duration": 0, "started": None, "stopped": None}
        task = {**task, "repetitions": [{**r, **wall, "nodeid": r["nodeid"]} for r in task["repetitions"]]}
        tasks.append(task)
    return {"summary": summary, "tasks": tasks}


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_three_shards_that_split_each_tasks_repetitions_merge_into_the_full_run(
    pytester: pytest.Pytester, xdist: list[str]
) -> None:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, ANSWERS, marker="min_pass=0.6"))
    pytester.runpytest("--consistency-report=full.json", "--consistency-gap-max=30", *xdist)
    for name, selection in (("s1", "rep1 or rep2"), ("s2", "rep3 or rep4"), ("s3", "rep5")):
        pytester.runpytest(f"--consistency-report={name}.json", "-k", selection, *xdist)
        assert load_report(pytester, f"{name}.json")["summary"]["task_count"] == 0  # every task incomplete alone
    merged = cli(
        "merge", "s1.json", "s2.json", "s3.json", "-o", "merged.json", "--consistency-gap-max=30", cwd=pytester.path
    )
    full = load_report(pytester, "full.json")
    assert merged.returncode == full["summary"]["exit_status"], merged.stderr
    assert figures(load_report(pytester, "merged.json")) == figures(full)
    assert load_report(pytester, "merged.json")["summary"]["gates"] == full["summary"]["gates"]
    assert "report: merged.json" in merged.stdout


def test_merge_applies_the_gates_of_the_yaml_config_and_decides_the_exit_status(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_pass=0"))
    pytester.runpytest("--consistency-report=s1.json", "-k", "rep1 or rep2 or rep3")
    pytester.runpytest("--consistency-report=s2.json", "-k", "rep4 or rep5")
    (pytester.path / "gates.yaml").write_text("gates:\n  consistency_gap_max: 5\n")
    result = cli("merge", "s1.json", "s2.json", "-o", "m.json", "--consistency-config=gates.yaml", cwd=pytester.path)
    assert result.returncode == 1
    line = next(text for text in result.stdout.splitlines() if text.startswith("gate --consistency-gap-max:"))
    assert line.startswith("gate --consistency-gap-max: consistency gap 40.0 pp, one-sided bounds [")
    assert "] > 5.0 pp  FAILED (level 0.05)" in line
    report = load_report(pytester, "m.json")["summary"]
    assert report["exit_status"] == 1 and report["passed"] is False
    result = cli("merge", "s1.json", "s2.json", "-o", "m.json", "--consistency-gap-max=45", cwd=pytester.path)
    assert result.returncode == 0, result.stdout


def test_merge_refuses_overlapping_and_unreadable_reports_by_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS))
    pytester.runpytest("--consistency-report=a.json")
    result = cli("merge", "a.json", "a.json", "-o", "m.json", cwd=pytester.path)
    assert result.returncode == 2 and "ran in both a.json and a.json" in result.stderr
    (pytester.path / "cut.json").write_text(load_report(pytester, "a.json").__repr__()[:50])
    result = cli("merge", "a.json", "cut.json", "-o", "m.json", cwd=pytester.path)
    assert result.returncode == 2 and "cut.json:1: not valid JSON" in result.stderr
    result = cli("merge", "nothing.json", "-o", "m.json", cwd=pytester.path)
    assert result.returncode == 2 and "nothing.json does not exist" in result.stderr
    result = cli("merge", "a.json", "-o", "m.json", "--consistency-gap-max=200", cwd=pytester.path)
    assert result.returncode == 2 and "must be within 0..100" in result.stderr
    assert not (pytester.path / "m.json").exists()


def test_show_prints_exactly_what_the_session_printed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, ANSWERS, marker="min_pass=0.6"))
    result = pytester.runpytest(
        "--consistency-report=r.json", "--consistency-gap-max=10", "--consistency-gate-on=bound"
    )
    shown = cli("show", "r.json", cwd=pytester.path)
    assert shown.returncode == 0, shown.stderr
    session = [line for line in consistency_section(result) if not session_only(line)]
    assert shown.stdout.splitlines() == session


def test_the_command_needs_neither_pytest_nor_the_http_stack(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite({"a": "PPP"}))
    pytester.runpytest("--consistency-report=r.json")
    probe = (
        "import sys; from pytest_consistency.cli import main; code = main(['show', 'r.json']); "
        "loaded = [m for m in ('pytest', '_pytest', 'openai', 'vcr', 'httpx', 'httpx2', 'yaml') if m in sys.modules]; "
        "print('LOADED', loaded); sys.exit(code)"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=pytester.path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "LOADED ['yaml']" in result.stdout or "LOADED []" in result.stdout


EXPERIMENT = """
import os
import openai
import pytest

KEYS = [os.environ["OPENAI_API_KEY"], os.environ["OPENAI_API_KEY"] + "-second"]
GROUP = os.environ["EXPERIMENT_GROUP"]


def client_for(group, pinned_client, repeat):
    if group == "A":  # the route as the agent builds it: environment key, SDK default retries
        return openai.OpenAI(base_url=os.environ["FAKE_BASE_URL"], api_key=KEYS[0])
    if group == "D":  # keys rotated per repetition on one base URL
        return openai.OpenAI(base_url=os.environ["FAKE_BASE_URL"], api_key=KEYS[repeat % 2], max_retries=1)
    return pinned_client  # B and C: the pinned route


@pytest.mark.parametrize("task", ["cheap-items", "meeting-time"])
@pytest.mark.repeat_consistency(n=5, min_pass=0)
def test_task(task, pinned_client, consistency):
    client = client_for(GROUP, pinned_client, consistency.repeat)
    reply = client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": task}])
    consistency.record(reply.choices[0].message.content)
    assert reply.choices[0].message.content == "OK"
"""


def test_compare_prints_the_experiments_a_to_d_table(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nconsistency_record = off\n")
    pytester.makepyfile(test_experiment=EXPERIMENT)
    monkeypatch.setenv("FAKE_BASE_URL", fake.base_url)
    retries = {"A": 3, "B": 0, "C": 0, "D": 0}
    for group in "ABCD":
        monkeypatch.setenv("EXPERIMENT_GROUP", group)
        fake.script(*[Step(status=429)] * retries[group])  # group A's route meets a rate limit and retries
        pytester.runpytest(
            f"--consistency-base-url={fake.base_url}",
            "--consistency-model=fake-model",
            f"--consistency-report={group}.json",
            "--consistency-max-retries=1",
        )
    result = cli("compare", "A.json", "B.json", "C.json", "D.json", "--labels", "A,B,C,D", cwd=pytester.path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:6] == ["group", "model", "base", "URL", "key", "n"]
    rows = {line.split()[0]: line for line in lines[1:5]}
    assert set(rows) == set("ABCD")
    assert "(reference)" in rows["A"] and "regression(s)" in rows["D"]
    assert "50.0" in rows["A"]  # route drift: group A's retries exceed the pinned one
    assert "100.0" in rows["D"].split("fake-model")[1]  # every task's repetitions used two keys: all drifted
    assert GOOD_KEY not in result.stdout
    markdown = cli("compare", "A.json", "D.json", "--format", "markdown", cwd=pytester.path)
    assert markdown.stdout.startswith("| group | model | base URL |")
    data = json.loads(cli("compare", "A.json", "D.json", "--format", "json", cwd=pytester.path).stdout)
    assert data["rows"][1]["label"] == "D" and data["rows"][1]["route_drift_pp"] == 100.0
    # the fake model has no price: each run's cost is unknown, never $0 (its calls counted unpriced)
    assert all(r["cost_usd"] == 0.0 and r["unpriced_calls"] > 0 for r in data["rows"]), data["rows"]
    assert "unknown  unknown" in rows["B"] and "$0" not in result.stdout


def test_merge_writes_the_outputs_a_session_would_from_the_command_line_the_yaml_and_the_step_summary(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """merge took -o only, so CI needed a show command per output and ignored ``outputs:`` and the step summary."""
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_pass=0"))
    pytester.runpytest("--consistency-report=s1.json", "-k", "rep1 or rep2 or rep3")
    pytester.runpytest("--consistency-report=s2.json", "-k", "rep4 or rep5")
    (pytester.path / "ci").mkdir()
    (pytester.path / "ci" / "c.yaml").write_text("outputs:\n  markdown: out/summary.md\n  html: out/page.html\n")
    step = pytester.path / "step.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    shards = ("merge", "s1.json", "s2.json", "-o", "m.json", "--consistency-gap-max=45")
    result = cli(*shards, "--consistency-config=ci/c.yaml", "--junitxml=j.xml", cwd=pytester.path)
    assert result.returncode == 0, result.stdout + result.stderr
    shown = {
        fmt: cli("show", "m.json", "--format", fmt, cwd=pytester.path).stdout for fmt in ("markdown", "html", "junit")
    }
    assert (pytester.path / "ci" / "out" / "summary.md").read_text() == shown["markdown"]  # relative to the YAML
    assert (pytester.path / "ci" / "out" / "page.html").read_text() == shown["html"]
    assert (pytester.path / "j.xml").read_text() == shown["junit"]
    assert step.read_text() == "earlier step\n" + shown["markdown"]  # appended
    assert "html: ci/out/page.html" in result.stdout and "junit: j.xml" in result.stdout
    # the command line wins over the YAML, --no-consistency-md keeps the step summary as it was
    again = cli(
        *shards, "--consistency-config=ci/c.yaml", "--consistency-md=cli.md", "--no-consistency-md", cwd=pytester.path
    )
    assert again.returncode == 0 and (pytester.path / "cli.md").read_text() == shown["markdown"], again.stderr
    assert step.read_text() == "earlier step\n" + shown["markdown"]


def test_merge_refuses_an_output_it_cannot_write_before_writing_anything(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_pass=0"))
    pytester.runpytest("--consistency-report=s1.json", "-k", "rep1 or rep2 or rep3")
    pytester.runpytest("--consistency-report=s2.json", "-k", "rep4 or rep5")
    result = cli("merge", "s1.json", "s2.json", "-o", "m.json", "--consistency-output=nosuch=x.txt", cwd=pytester.path)
    assert result.returncode == 2 and "--consistency-output: no report format 'nosuch'" in result.stderr
    assert not (pytester.path / "m.json").exists() and result.stdout == ""
