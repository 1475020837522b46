"""Sequential verdicts (``--consistency-sequential``): each min_rate task decided by an anytime-valid test and stopped
once decided, the same decisions serially and with ``-n 2``; min_pass tasks stopped by curtailment; undecided at
the cap, never a point verdict.
"""

from __future__ import annotations

from typing import Any

import pytest
from suites import cli, load_report, pattern_suite

#: n = 40, min_rate 0.8, alpha 0.05: solid passes by evidence at repetition 16, broken fails at 3, late (5 passes,
#: then failures) fails at 12; edge (a rate of exactly 0.8) can no longer cross by repetition 29: undecided.
PATTERNS = {"solid": "P" * 40, "broken": "F" * 40, "late": "P" * 5 + "F" * 35, "edge": "PPPPF" * 8}
DECISIONS = {
    "solid": ("pass", "evidence", 16),
    "broken": ("fail", "evidence", 3),
    "late": ("fail", "evidence", 12),
    "edge": ("undecided", "cap", 29),
}


def tasks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["task_id"].split("[")[1].rstrip("]"): t for t in report["tasks"]}


def decisions(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {name: (t["verdict"], t["decided_by"]) for name, t in tasks(report).items()}


def test_each_min_rate_task_stops_once_decided_and_says_how(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_rate=0.8"))
    result = pytester.runpytest("--consistency-report=s.json", "--consistency-sequential", "-p", "no:randomly")
    report = load_report(pytester, "s.json")
    assert result.ret == 1  # broken and late FAIL; edge is undecided (inconclusive=pass)
    found = tasks(report)
    for name, (verdict, how, at) in DECISIONS.items():
        task = found[name]
        assert (task["verdict"], task["decided_by"]) == (verdict, how), name
        assert task["scored"] == at and task["curtailed"] == 40 - at, name  # serially: nothing beyond the decision
        assert task["outcomes"][at:] == ["curtailed"] * (40 - at)
    used = sum(at for _, _, at in DECISIONS.values())
    facts = report["summary"]["sequential"]
    assert facts == {
        "alpha": 0.05,
        "repetitions_used": used,
        "cap_repetitions": 160,
        "not_needed": 160 - used,
        "by_evidence": 3,
        "at_cap": 1,
        "curtailed": 0,
        "repetition_budget": None,
        "budget_stopped": 0,
        "undecided_for_budget": 0,
        "by_rounds": 0,
    }
    result.stdout.fnmatch_lines(
        [
            "*pass (min_rate 0.8*, by evidence, stopped after 16 of 40*",
            # The plan for an undecided task is a cap (none here: its rate seen, 24/29, is too near the bar).
            "*undecided (*holds min_rate 0.8; no cap is likely to decide it), at the cap, stopped after 29 of 40*",
            f"sequential (alpha 0.05): {used} repetitions run of the cap's fixed run of 160, {160 - used} not needed; "
            "3 task(s) decided by evidence, 1 undecided at the cap, 0 decided by curtailment (min_pass)",
        ]
    )
    skipped = pytester.runpytest("--consistency-sequential", "-rs", "-p", "no:randomly")
    skipped.stdout.fnmatch_lines(
        [
            "SKIPPED [[]24[]] *: not needed (--consistency-sequential): test_task.py::test_task[[]solid[]] is pass by "
            "evidence after 16 repetition(s) (min_rate 0.8, alpha 0.05)",
            "SKIPPED [[]11[]] *: not needed (--consistency-sequential): test_task.py::test_task[[]edge[]] is undecided "
            "at the cap: n=40 can no longer be crossed (min_rate 0.8)",
        ],
        consecutive=False,
    )


def test_xdist_gives_the_same_sequential_decisions(pytester: pytest.Pytester) -> None:
    """Outcomes reach the board in any order under -n 2; the decision reads them by repetition number, so it is
    the serial one. A repetition handed out before its task was decided still runs and is reported."""
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_rate=0.8"))
    serial = pytester.runpytest("--consistency-report=s.json", "--consistency-sequential", "-p", "no:randomly")
    parallel = pytester.runpytest(
        "--consistency-report=p.json", "--consistency-sequential", "-n", "2", "-p", "no:randomly"
    )
    s, p = load_report(pytester, "s.json"), load_report(pytester, "p.json")
    assert serial.ret == parallel.ret == 1
    assert decisions(s) == decisions(p) == {name: d[:2] for name, d in DECISIONS.items()}
    for name, task in tasks(p).items():
        assert task["scored"] >= DECISIONS[name][2]  # at least the repetitions the decision read
        assert task["scored"] + task["curtailed"] == 40


def test_min_pass_tasks_are_decided_by_curtailment(pytester: pytest.Pytester) -> None:
    patterns = {"solid": "PPPPP", "broken": "FPPPP", "mixed": "PPFPP"}
    pytester.makepyfile(test_task=pattern_suite(patterns, marker="min_pass=0.6"))
    result = pytester.runpytest("--consistency-report=s.json", "--consistency-sequential", "-p", "no:randomly")
    found = tasks(load_report(pytester, "s.json"))
    assert result.ret == 0
    assert {name: (t["verdict"], t["decided_by"], t["scored"]) for name, t in found.items()} == {
        "solid": ("pass", "curtailed", 3),
        "broken": ("pass", "curtailed", 4),
        "mixed": ("pass", "curtailed", 4),
    }


def test_n_min_repetitions_run_first(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite({"broken": "F" * 40}, marker="min_rate=0.8"))
    pytester.runpytest("--consistency-report=s.json", "--consistency-sequential", "--consistency-n-min=10")
    task = load_report(pytester, "s.json")["tasks"][0]
    assert (task["verdict"], task["decided_by"], task["scored"]) == ("fail", "evidence", 10)


def test_the_sequential_alpha_is_the_level_of_the_test(pytester: pytest.Pytester) -> None:
    """A stricter alpha needs more evidence: the all-pass task decides later."""
    pytester.makepyfile(test_task=pattern_suite({"solid": "P" * 40}, marker="min_rate=0.8"))
    pytester.runpytest("--consistency-report=s.json", "--consistency-sequential", "--consistency-sequential-alpha=0.01")
    report = load_report(pytester, "s.json")
    task = report["tasks"][0]
    assert (task["verdict"], task["decided_by"], task["scored"]) == ("pass", "evidence", 24)
    assert report["summary"]["sequential"]["alpha"] == 0.01


def test_sequential_and_adaptive_together_is_a_usage_error_naming_both(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite({"solid": "PPPPP"}))
    result = pytester.runpytest("--consistency-sequential", "--consistency-adaptive")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--consistency-sequential and --consistency-adaptive cannot be combined*"])


def test_figure_gates_are_refused_with_sequential_mode(pytester: pytest.Pytester) -> None:
    """All but the gap gate, which sequential mode decides in rounds (test_suite_gap_in_rounds.py)."""
    pytester.makepyfile(test_task=pattern_suite({"solid": "PPPPP"}))
    result = pytester.runpytest("--consistency-sequential", "--pass-hat-k-min=80")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--consistency-sequential stops a task once its verdict is decided*Drop --consistency-sequential*"]
    )


def test_the_yaml_file_switches_sequential_mode_on(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", consistency="sequential:\n  enabled: true\n  alpha: 0.01\n")
    pytester.makepyfile(test_task=pattern_suite({"solid": "P" * 40}, marker="min_rate=0.8"))
    pytester.runpytest("--consistency-report=s.json")
    task = load_report(pytester, "s.json")["tasks"][0]
    assert (task["decided_by"], task["scored"]) == ("evidence", 24)


def test_without_sequential_mode_there_is_no_decided_by(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite({"solid": "P" * 20}, marker="min_rate=0.8"))
    pytester.runpytest("--consistency-report=s.json")
    report = load_report(pytester, "s.json")
    assert report["tasks"][0]["decided_by"] is None and report["summary"]["sequential"] is None
    assert report["tasks"][0]["scored"] == 20


def test_a_sequential_report_is_not_a_baseline_for_the_exact_tests(pytester: pytest.Pytester) -> None:
    """A task that ran to its cap did so because it did not cross: its count is selected by the stopping rule,
    whether or not any task was stopped early."""
    pytester.makepyfile(test_task=pattern_suite({"broken": "FFF"}, marker="min_rate=0.8"))
    pytester.runpytest("--consistency-report=base.json", "--consistency-sequential")
    task = load_report(pytester, "base.json")["tasks"][0]
    assert (task["decided_by"], task["scored"], task["curtailed"]) == ("evidence", 3, 0)  # not stopped early
    pytester.runpytest("--consistency-report=now.json", "--consistency-baseline=base.json")
    comparison = load_report(pytester, "now.json")["summary"]["comparison"]
    assert comparison["untested"].startswith("the baseline ran with --consistency-sequential: ")


def test_shards_decide_their_tasks_and_the_merge_keeps_the_decisions_and_refuses_figure_gates(
    pytester: pytest.Pytester,
) -> None:
    patterns = {"solid": "P" * 40, "broken": "F" * 40, "edge": "PPPPF" * 8, "late": "P" * 5 + "F" * 35}
    pytester.makepyfile(test_task=pattern_suite(patterns, marker="min_rate=0.8"))
    pytester.runpytest("--consistency-report=full.json", "--consistency-sequential")
    for i in (1, 2):
        pytester.runpytest(f"--consistency-shard={i}/2", f"--consistency-report=s{i}.json", "--consistency-sequential")
    merged = cli("merge", "s1.json", "s2.json", "-o", "merged.json", cwd=pytester.path)
    assert merged.returncode == 1, merged.stdout + merged.stderr  # broken and late FAIL, as unsharded
    full, joined = load_report(pytester, "full.json"), load_report(pytester, "merged.json")
    assert decisions(joined) == decisions(full)
    assert joined["summary"]["sequential"] == full["summary"]["sequential"]
    refused = cli("merge", "s1.json", "s2.json", "--consistency-gap-max=10", "-o", "m.json", cwd=pytester.path)
    assert refused.returncode == 2
    assert "the reports ran with --consistency-sequential, which stops a task" in refused.stderr
    assert "Drop --consistency-sequential" in refused.stderr


def test_a_cap_too_small_for_a_sequential_pass_is_said_at_collection(pytester: pytest.Pytester) -> None:
    """The fixed-n warning would say n = 14 can PASS; the sequential test needs 16 passes in a row at 0.8."""
    pytester.makepyfile(test_task=pattern_suite({"solid": "P" * 14}, marker="min_rate=0.8"))
    result = pytester.runpytest("--consistency-sequential")
    result.stdout.fnmatch_lines(
        [
            "*repeat_consistency(min_rate=0.8): the cap n = 14 is too small for a sequential PASS at alpha 0.05: a "
            "PASS needs at least 16 repetitions, all passing; it can only FAIL or stay undecided, and a cap of 16 can*"
        ]
    )
    assert "too small" not in pytester.runpytest().stdout.str()  # n = 14 can PASS the fixed-n test


def test_every_output_says_what_sequential_mode_spent_and_decided(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_rate=0.8"))
    pytester.runpytest("--consistency-sequential", "--consistency-md=out.md", "--consistency-html=out.html")
    line = (
        "equential (alpha 0.05): 60 repetitions run of the cap's fixed run of 160, 100 not needed; 3 task(s) decided "
        "by evidence, 1 undecided at the cap, 0 decided by curtailment (min_pass)"
    )
    assert line in (pytester.path / "out.md").read_text()
    assert line.replace("'", "&#x27;") in (pytester.path / "out.html").read_text()


def test_sequential_mode_runs_the_items_repetition_major(pytester: pytest.Pytester) -> None:
    """Every task's repetition 1, then every task's repetition 2, ...: xdist's workers then move through the
    repetition numbers together, and a decision read along them waits less on another worker (docs/sequential.md:
    1.03x the serial repetitions with -n 4, 1.15x in the collection order)."""
    pytester.makepyfile(test_task=pattern_suite({"a": "PPP", "b": "PPP"}, marker="min_rate=0.8"))
    plain = pytester.runpytest("--collect-only", "-q", "-p", "no:randomly").stdout.lines
    ordered = pytester.runpytest("--collect-only", "-q", "-p", "no:randomly", "--consistency-sequential").stdout.lines

    def ids(lines: list[str]) -> list[str]:
        return [line.split("::")[1] for line in lines if line.startswith("test_task.py::")]

    assert ids(ordered) == [f"test_task[{t}-rep{r}]" for r in (1, 2, 3) for t in ("a", "b")]
    assert ids(plain) == [f"test_task[{t}-rep{r}]" for t in ("a", "b") for r in (1, 2, 3)]
