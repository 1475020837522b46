"""The simulated user's part as text, JUnit properties and HTML (``report.user``)."""

from __future__ import annotations

from pytest_consistency.model.judge import JudgedRepetition
from pytest_consistency.model.user import TaskUserSplit, UserFigures, UserSplitSummary
from pytest_consistency.report.user import (
    html_section,
    junit_suite_properties,
    junit_task_properties,
    lines,
    markdown_lines,
    terminal_lines,
)
from pytest_consistency.stats.interval import Interval

FIGURES = UserFigures(
    repetitions=2,
    flip_rate=0.0,
    flip_interval=Interval(0.0, 0.84),
    flip_method="clopper-pearson",
    kappa=None,
    observed_gap_pp=50.0,
    user_gap_pp=50.0,
    agent_gap_pp=0.0,
    agent_gap_interval=Interval(-10.0, 10.0),
)
ROWS = [JudgedRepetition(1, 2, 2, True, True, "PP"), JudgedRepetition(2, 2, 0, False, False, "FF")]
SUMMARY = UserSplitSummary(2, [TaskUserSplit("t.py::test_x", 2, FIGURES, ROWS, ["rep3@agent1: why"])], FIGURES)


def test_the_lines_name_the_simulated_user_and_the_agent() -> None:
    assert lines(SUMMARY) == [
        "simulated user t.py::test_x: 2 agent sample(s) per recorded user; agent flip rate 0.0 % [0.0, 84.0] "
        "(clopper-pearson); kappa undefined (every sample gave one outcome)",
        "  passes per repetition: 2/2 0/2; gap 50.0 pp observed = simulated user 50.0 pp (agent majority) + agent "
        "0.0 pp [-10.0, 10.0]",
        "  excluded (not a verdict) rep3@agent1: why",
        "simulated user, suite: 2 repetition(s) x 2 agent sample(s); agent flip rate 0.0 % [0.0, 84.0] "
        "(clopper-pearson); kappa undefined (every sample gave one outcome)",
        "  gap 50.0 pp observed = simulated user 50.0 pp (agent majority) + agent 0.0 pp [-10.0, 10.0]",
    ]
    assert terminal_lines(None, 80) == [] and markdown_lines(None) == [] and html_section(None) == ""
    assert all(len(line) <= 80 for line in terminal_lines(SUMMARY, 80))
    assert markdown_lines(SUMMARY)[0] == "### Sampling the agent on a simulated user's recorded turns"


def test_junit_properties_and_the_html_section() -> None:
    suite = dict(junit_suite_properties(SUMMARY))
    assert suite["consistency.simulated_user.samples"] == "2"
    assert suite["consistency.simulated_user.agent_flip_rate.high"] == "0.84"
    assert suite["consistency.simulated_user.kappa"] == "n/a"
    assert suite["consistency.simulated_user.user_gap_pp"] == "50.0"
    assert dict(junit_task_properties(SUMMARY, "t.py::test_x"))["consistency.task.simulated_user.agent_gap_pp"] == "0.0"
    assert junit_task_properties(SUMMARY, "other") == [] and junit_suite_properties(None) == []
    page = html_section(SUMMARY)
    assert page.startswith('<section id="simulated-user">')
    assert "<td class=num>1</td><td><code>P P</code></td>" in page and "<li class=bad>rep3@agent1: why</li>" in page
