"""The suite-level regression gate in real sessions: an agent that got a little worse on every task fails the run.

A 20-task suite passes 5/5 everywhere in the baseline and 4/5 everywhere now. No single task is a significant
regression (5/5 -> 4/5 has Boschloo p = 0.5), so ``--consistency-regressions-max=0`` passes it; the exact stratified
test over all tasks gives p = 2^-20, and ``--consistency-suite-regression`` fails the run and says so in the
terminal, the JSON report, JUnit, Markdown and HTML, and through ``merge`` of shards; ``-n 2`` gives the same
suite-level result and gates (``test_serial_and_xdist_give_the_same_suite_level_result``). It
runs whenever a baseline is given (``--no-consistency-suite-regression`` switches it off). Two replays of the same
cassettes (recorded from the loopback server) pass it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from fake_openai import FakeOpenAI, Step
from suites import consistency_section, junit_props, load_report, pattern_suite, run_recorded

COMMAND = str(Path(sys.executable).parent / "pytest-consistency")
TASKS = [f"t{i:02d}" for i in range(20)]
BASELINE = dict.fromkeys(TASKS, "PPPPP")
WORSE = dict.fromkeys(TASKS, "PPPPF")
P_VALUE = 2.0**-20  # each task: given its 9 passes, the baseline holds 5 of them with probability 1/2
LINE = (
    "suite-level change: task-averaged pass rate 100.0 % -> 80.0 %, -20.0 pp [[]-*, -*[]]; exact stratified test "
    "over 20 informative of 20 tasks p = 9.54e-07: a significant DROP (p <= 0.05)"
)
GATE = "gate --consistency-suite-regression: suite regression p 9.54e-07 <= 0.05  FAILED (level 0.05)"


def session(pytester: pytest.Pytester, patterns: dict[str, str], *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_task=pattern_suite(patterns, marker="min_pass=0"))
    return pytester.runpytest(*args)


def baseline(pytester: pytest.Pytester) -> None:
    assert session(pytester, BASELINE, "--consistency-report=base.json").ret == 0


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([COMMAND, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


def suite_change(report: dict[str, Any]) -> dict[str, Any]:
    return report["summary"]["comparison"]["suite_change"]


def test_the_per_task_gate_alone_lets_a_uniformly_worse_agent_pass(pytester: pytest.Pytester) -> None:
    """The gap the suite-level gate closes: no task regressed significantly, so the per-task gate alone passes; the
    suite-level test, on by default with a baseline, fails the run (on 6925489 it had to be asked for)."""
    baseline(pytester)
    by_default = session(
        pytester, WORSE, "--consistency-report=report.json", "--consistency-baseline=base.json",
        "--consistency-regressions-max=0",
    )  # fmt: skip
    assert by_default.ret == 1
    by_default.stdout.fnmatch_lines(
        ["gate --consistency-suite-regression: suite regression p 9.54e-07 <= 0.025  FAILED (level 0.025 = 0.05 / 2*"]
    )
    result = session(
        pytester, WORSE, "--consistency-report=report.json", "--consistency-baseline=base.json",
        "--consistency-regressions-max=0", "--no-consistency-suite-regression",
    )  # fmt: skip
    assert result.ret == 0
    report = load_report(pytester)
    assert report["summary"]["comparison"]["regressions"] == 0
    # the suite-level figures are still computed and shown, so the run says what it saw
    assert suite_change(report)["p_value"] == pytest.approx(P_VALUE, rel=1e-12)
    result.stdout.fnmatch_lines([LINE])


def test_a_uniformly_worse_agent_fails_the_suite_regression_gate_in_every_output(pytester: pytest.Pytester) -> None:
    baseline(pytester)
    result = session(
        pytester, WORSE, "--consistency-report=report.json", "--consistency-baseline=base.json",
        "--consistency-suite-regression", "--consistency-md=summary.md", "--consistency-html=page.html",
        "--junitxml=junit.xml",
    )  # fmt: skip
    assert result.ret == 1, result.stdout.str()
    section = consistency_section(result)
    assert any(line.startswith("suite-level change: task-averaged pass rate 100.0 % -> 80.0 %") for line in section)
    result.stdout.fnmatch_lines([LINE, GATE])

    report = load_report(pytester)
    summary = report["summary"]
    assert summary["passed"] is False and summary["exit_status"] == 1
    change = suite_change(report)
    assert change["p_value"] == pytest.approx(P_VALUE, rel=1e-12)
    assert (change["baseline_rate"], change["current_rate"]) == (1.0, 0.8)
    assert change["change_pp"] == pytest.approx(-20.0)
    assert change["change_interval"]["low"] < -20 < change["change_interval"]["high"] < 0
    assert summary["comparison"]["suite_regression"] is True
    assert summary["analysis"]["suite_regression"] is True
    gate = summary["gates"][-1]
    assert (gate["option"], gate["state"], gate["passed"]) == ("--consistency-suite-regression", "fail", False)
    assert gate["value"] == pytest.approx(P_VALUE, rel=1e-12) and gate["threshold"] == 0.05

    props = junit_props(ET.parse(pytester.path / "junit.xml").getroot().find("testsuite"))
    assert float(props["consistency.baseline.suite_p_value"]) == pytest.approx(P_VALUE, rel=1e-6)
    assert props["consistency.baseline.suite_regression"] == "true"
    assert float(props["consistency.baseline.suite_change_pp"]) == pytest.approx(-20.0)
    assert props["consistency.gate.suite_regression_p.state"] == "fail"

    markdown = (pytester.path / "summary.md").read_text()
    assert "**suite-level change: task-averaged pass rate 100.0 % → 80.0 %, -20.0 pp" in markdown
    assert "p = 9.54e-07: a significant DROP" in markdown
    assert "--consistency-suite-regression" in markdown
    page = (pytester.path / "page.html").read_text()
    assert "suite-level change" in page and "p = 9.54e-07: a significant DROP" in page


def test_serial_and_xdist_give_the_same_suite_level_result(pytester: pytest.Pytester) -> None:
    baseline(pytester)
    args = ("--consistency-baseline=base.json", "--consistency-suite-regression")
    session(pytester, WORSE, "--consistency-report=serial.json", *args)
    session(pytester, WORSE, "--consistency-report=xdist.json", "-n", "2", *args)
    serial, xdist = load_report(pytester, "serial.json"), load_report(pytester, "xdist.json")
    assert suite_change(serial) == suite_change(xdist)
    assert serial["summary"]["gates"] == xdist["summary"]["gates"]


def test_mcnemar_on_pass_n_flips_is_a_gate_too(pytester: pytest.Pytester) -> None:
    """All 20 tasks left the all-pass state and none entered it: McNemar p = 2^-20."""
    baseline(pytester)
    result = session(
        pytester, WORSE, "--consistency-report=report.json", "--consistency-baseline=base.json",
        "--mcnemar-p-min=0.05",
    )  # fmt: skip
    assert result.ret == 1
    # beside the suite-level test (on with a baseline): two statistical gates, McNemar at 0.05 / 2
    result.stdout.fnmatch_lines(
        ["gate --mcnemar-p-min: mcnemar p 9.54e-07 < 0.025  FAILED (level 0.025 = 0.05 / 2 gates (Bonferroni))"]
    )
    gate = load_report(pytester)["summary"]["gates"][0]
    assert (gate["name"], gate["state"]) == ("mcnemar_p", "fail")
    # the same agent twice: nothing flipped, so there is no evidence of a change and the gate passes
    result = session(
        pytester, BASELINE, "--consistency-report=report.json", "--consistency-baseline=base.json",
        "--mcnemar-p-min=0.05",
    )  # fmt: skip
    assert result.ret == 0
    result.stdout.fnmatch_lines(["gate --mcnemar-p-min: mcnemar p 1 >= 0.025  ok*"])


def test_adaptive_mode_refuses_the_suite_level_gate(pytester: pytest.Pytester) -> None:
    """Curtailed counts are not binomial (a task stops at its first failure): the exact test would not be exact."""
    result = session(pytester, WORSE, "--consistency-adaptive", "--consistency-suite-regression")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--consistency-adaptive*--consistency-suite-regression would gate on them*"])


def test_the_switch_is_also_a_yaml_setting(pytester: pytest.Pytester) -> None:
    baseline(pytester)
    pytester.makefile(".yaml", consistency="baseline:\n  report: base.json\n  suite_regression: true\n")
    result = session(pytester, WORSE, "--consistency-config=consistency.yaml", "--consistency-report=report.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines([GATE])


def test_without_a_baseline_the_gate_fails_as_not_measurable(pytester: pytest.Pytester) -> None:
    result = session(pytester, WORSE, "--consistency-suite-regression", "--consistency-report=report.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["gate --consistency-suite-regression: suite regression p: not measurable*FAILED*"])


def test_merge_of_shards_against_the_baseline_fails_the_same_way(pytester: pytest.Pytester) -> None:
    baseline(pytester)
    args = ("--consistency-baseline=base.json", "--consistency-suite-regression")
    session(pytester, WORSE, "--consistency-report=s1.json", "-k", "rep1 or rep2 or rep3", *args)
    session(pytester, WORSE, "--consistency-report=s2.json", "-k", "rep4 or rep5", *args)
    merged = cli("merge", "s1.json", "s2.json", "-o", "merged.json", "--consistency-baseline=base.json",
                 cwd=pytester.path)  # fmt: skip
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert "p = 9.54e-07: a significant DROP (p <= 0.05)" in merged.stdout
    assert GATE in merged.stdout
    report = json.loads((pytester.path / "merged.json").read_text())
    assert suite_change(report)["p_value"] == pytest.approx(P_VALUE, rel=1e-12)
    assert report["summary"]["passed"] is False

    # Without the baseline the merge cannot compare (a shard's comparison covers only its tasks): it says so and
    # the switch, carried in the shards' analysis, fails as not measurable rather than passing by accident.
    alone = cli("merge", "s1.json", "s2.json", "-o", "alone.json", cwd=pytester.path)
    assert alone.returncode == 1
    assert "pass --consistency-baseline=FILE to merge" in alone.stdout
    assert "suite regression p: not measurable" in alone.stdout


AGENT = """
import pytest

@pytest.mark.parametrize("task", [f"t{i:02d}" for i in range(20)])
@pytest.mark.repeat_consistency(n=5, min_pass=0)
def test_task(task, pinned_client, consistency):
    reply = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": f"solve {task}"}])
    answer = reply.choices[0].message.content
    consistency.record(answer)
    assert answer == "solved"
"""


def test_two_replays_of_the_same_cassettes_pass_the_gate(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    # one call in five fails: a flaky agent, recorded once
    fake.script(*[Step(text="solved" if i % 5 else "gave up") for i in range(100)])
    pytester.makepyfile(test_agent=AGENT)
    assert run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly").ret == 0
    fake.reset()
    first = run_recorded(pytester, fake.base_url, "none")
    assert first.ret == 0
    (pytester.path / "report.json").rename(pytester.path / "base.json")
    again = run_recorded(
        pytester, fake.base_url, "none", "--consistency-baseline=base.json", "--consistency-suite-regression", "-n", "2"
    )
    assert again.ret == 0, again.stdout.str()
    assert fake.requests == []
    change = suite_change(load_report(pytester))
    assert change["change_pp"] == 0 and change["p_value"] > 0.5
    again.stdout.fnmatch_lines(["gate --consistency-suite-regression: suite regression p * > 0.05  ok*"])


def test_a_p_value_threshold_out_of_range_is_an_error_naming_the_option(pytester: pytest.Pytester) -> None:
    result = session(pytester, WORSE, "--mcnemar-p-min=5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--mcnemar-p-min*5*must be within 0..1*"])
