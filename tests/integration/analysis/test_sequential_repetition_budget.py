"""``--consistency-repetition-budget=R``: a sequential session starts at most R repetitions in all, counted across
xdist workers on the shared board; what was decided before the budget ran out stays decided, the rest is undecided
(``decided_by: cap``), and the session says so in one line.
"""

from __future__ import annotations

from typing import Any

import pytest
from suites import load_report, pattern_suite

#: As in test_sequential_verdicts.py (n = 40, min_rate 0.8, alpha 0.05): solid passes at 16, broken fails at 3, late
#: fails at 12, edge is undecided at the cap after 29.
PATTERNS = {"solid": "P" * 40, "broken": "F" * 40, "late": "P" * 5 + "F" * 35, "edge": "PPPPF" * 8}
DECIDED = {"solid": ("pass", "evidence", 16), "broken": ("fail", "evidence", 3), "late": ("fail", "evidence", 12)}


def tasks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["task_id"].split("[")[1].rstrip("]"): t for t in report["tasks"]}


def test_a_serial_session_starts_exactly_the_budget_and_keeps_what_was_decided(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_rate=0.8"))
    result = pytester.runpytest(
        "--consistency-report=s.json", "--consistency-sequential", "--consistency-repetition-budget=30", "-rs"
    )
    report = load_report(pytester, "s.json")
    found = tasks(report)
    assert sum(t["scored"] for t in found.values()) == 30
    # Repetition-major (every task's repetition 1, then 2, ...): broken is decided at 3 (12 repetitions run by then),
    # the other three share the rest up to repetition 9 and are undecided for the budget (late would fail at 12,
    # solid pass at 16).
    assert {name: (t["verdict"], t["decided_by"], t["scored"]) for name, t in found.items()} == {
        "solid": ("undecided", "cap", 9),
        "broken": ("fail", "evidence", 3),
        "late": ("undecided", "cap", 9),
        "edge": ("undecided", "cap", 9),
    }
    facts = report["summary"]["sequential"]
    assert facts["repetition_budget"] == 30 and facts["budget_stopped"] == 3 * 31
    assert (facts["at_cap"], facts["undecided_for_budget"], facts["not_needed"]) == (0, 3, 37)
    result.stdout.fnmatch_lines(
        [
            "test_task[[]late[]] *undecided (*), stopped by the repetition budget, stopped after 9 of 40",
            "sequential (alpha 0.05): 30 repetitions run of the cap's fixed run of 160, 37 not needed; 1 task(s) "
            "decided by evidence, 0 undecided at the cap, 0 decided by curtailment (min_pass); repetition budget 30 "
            "reached: 93 repetition(s) not started, 3 task(s) undecided for it",
            "*budget reached (--consistency-repetition-budget): the session has started its 30 repetition(s), so "
            "test_task.py::test_task[[]late[]] repetition 10 is not; the task is undecided unless decided before it",
        ],
        consecutive=False,
    )
    assert result.ret == 1  # broken fails; the undecided tasks follow --consistency-inconclusive (pass)


def test_xdist_workers_share_one_budget(pytester: pytest.Pytester) -> None:
    """Two workers claim from one count under its lock: the session starts exactly R repetitions, not R per worker
    (nor R + a repetition each worker had in hand); the verdicts decided are the serial run's."""
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_rate=0.8"))
    pytester.runpytest(
        "--consistency-report=p.json", "--consistency-sequential", "--consistency-repetition-budget=30", "-n", "2"
    )
    found = tasks(load_report(pytester, "p.json"))
    assert sum(t["scored"] for t in found.values()) == 30
    for name, task in found.items():
        if task["verdict"] != "undecided":
            assert (task["verdict"], task["decided_by"]) == DECIDED[name][:2], name
        else:
            assert task["decided_by"] == "cap", name


def test_a_budget_without_sequential_mode_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite({"solid": "PP"}))
    result = pytester.runpytest("--consistency-repetition-budget=3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--consistency-repetition-budget needs --consistency-sequential*"])


TOKEN_TASKS = """
import pytest

@pytest.mark.parametrize("task", ["a", "b"])
@pytest.mark.repeat_consistency(n=20, min_rate=0.8)
def test_t(task, pinned_client, consistency):
    reply = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": task}])
    consistency.record(reply.choices[0].message.content)
"""


@pytest.mark.parametrize("flag", ["--consistency-token-budget=150", "--consistency-price=fake-model=1000,1000"])
def test_the_token_and_cost_budgets_stop_a_sequential_run_as_the_repetition_budget_does(
    pytester: pytest.Pytester, fake: Any, flag: str
) -> None:
    """Once the shared ledger is over the token (or cost) budget no repetition starts: the tasks end undecided (their
    sequences end there, as at the cap), not in error with every later repetition refused its calls."""
    pytester.makepyfile(test_t=TOKEN_TASKS)
    budget = [flag] if "token" in flag else [flag, "--consistency-cost-budget=0.1"]
    result = pytester.runpytest(
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        "--consistency-record=off",
        "--consistency-sequential",
        "--consistency-report=r.json",
        "-p",
        "no:randomly",
        *budget,
    )
    report = load_report(pytester, "r.json")
    found = tasks(report)
    assert {name: (t["verdict"], t["decided_by"]) for name, t in found.items()} == {
        "a": ("undecided", "cap"),
        "b": ("undecided", "cap"),
    }, result.stdout.str()
    assert all(t["scored"] < 20 and "error" not in t["outcomes"] for t in found.values())
    assert report["summary"]["sequential"]["budget_stopped"] == sum(20 - t["scored"] for t in found.values())
    assert result.ret == 1  # the budget was exceeded: the session fails, as without sequential mode
