"""A gate never passes by accident, and the exit status, the summary and the report tell one story: a regressions
gate with nothing compared, a gap gate with no common task, a bound gate with nothing scored, an inconclusive
gate, an interrupted session, and a baseline that cannot be used (a named error, never a pass).

Real inner sessions (pytester) and the installed pytest-consistency console script; nothing patched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from suites import load_report, pattern_suite

STEADY = {f"steady{i}": "PPPPP" for i in range(4)}


BASELINE = {**STEADY, "target": "PPPPP", "flaky": "PFPPF"}


DEGRADED = {**STEADY, "target": "FFFFF", "flaky": "PFPPF"}


def session(pytester: pytest.Pytester, patterns: dict[str, str], *args: str, report: str = "report.json", **kw: Any):  # type: ignore[no-untyped-def]
    pytester.makepyfile(test_task=pattern_suite(patterns, kw.get("answers"), marker=kw.get("marker", "min_pass=0")))
    return pytester.runpytest(f"--consistency-report={report}", *args)


def one_story(ret: int, report: dict[str, Any]) -> None:
    """Exit status, ``summary.passed`` and ``summary.exit_status`` tell one story."""
    summary = report["summary"]
    assert summary["exit_status"] == int(ret), (summary["exit_status"], ret)
    assert summary["passed"] is (int(ret) == 0), (summary["passed"], ret)


def mutate(path: Path, target: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    target.write_text(json.dumps(data))  # json.dumps writes NaN and Infinity as Python does


def _baseline_other_ids(pytester: pytest.Pytester) -> None:
    session(pytester, {"other1": "PPPPP", "other2": "PPPPP"}, report="base.json")


def _baseline_no_tasks(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task="def test_plain():\n    pass\n")
    pytester.runpytest("--consistency-report=base.json")


def _baseline_incomplete(pytester: pytest.Pytester) -> None:
    session(pytester, BASELINE, "-k", "rep1", report="base.json")


@pytest.mark.parametrize(
    "make_baseline",
    [
        pytest.param(
            _baseline_other_ids,
            id="different-task-ids",
        ),
        pytest.param(
            _baseline_no_tasks,
            id="baseline-without-tasks",
        ),
        pytest.param(
            _baseline_incomplete,
            id="baseline-all-incomplete",
        ),
    ],
)
def test_a_regressions_gate_with_nothing_compared_does_not_pass(pytester: pytest.Pytester, make_baseline: Any) -> None:
    make_baseline(pytester)
    result = session(pytester, DEGRADED, "--consistency-baseline=base.json", "--consistency-regressions-max=0")
    report = load_report(pytester)
    one_story(result.ret, report)
    assert report["summary"]["comparison"]["common_tasks"] == 0
    gate = report["summary"]["gates"][0]
    assert gate["state"] != "pass" and result.ret != 0, result.stdout.str()


def test_a_gap_increase_gate_with_no_common_tasks_fails(pytester: pytest.Pytester) -> None:
    _baseline_other_ids(pytester)
    result = session(pytester, BASELINE, "--consistency-baseline=base.json", "--gap-increase-max=100")
    report = load_report(pytester)
    one_story(result.ret, report)
    assert result.ret == 1
    assert report["summary"]["gates"][0]["state"] == "fail" and report["summary"]["gates"][0]["value"] is None


@pytest.mark.parametrize("gate", ["--consistency-gap-max=100", "--pass-hat-k-min=0", "--answer-disagreement-max=100"])
def test_a_bound_gate_with_nothing_scored_fails(pytester: pytest.Pytester, gate: str) -> None:
    result = session(
        pytester, BASELINE, "-k", "rep1 or rep2", gate, "--consistency-gate-on=bound", "--consistency-inconclusive=pass"
    )
    report = load_report(pytester)
    one_story(result.ret, report)
    assert result.ret == 1 and report["summary"]["gates"][0]["state"] == "fail"


def test_an_undecided_pass_hat_k_gate_is_no_failure_by_default_and_agrees_everywhere(pytester: pytest.Pytester) -> None:
    """Undecided is no evidence against the agent: by default it does not fail the run (a run fails only on evidence),
    and with --consistency-inconclusive=fail it does; every output says the same either way."""
    patterns = {**STEADY, "flaky": "PFPPF"}
    result = session(pytester, patterns, "--pass-hat-k-min=70")
    report = load_report(pytester)
    one_story(result.ret, report)
    gate = report["summary"]["gates"][0]
    assert (gate["state"], gate["passed"], result.ret) == ("undecided", True, 0)
    result = session(pytester, patterns, "--pass-hat-k-min=70", "--consistency-inconclusive=fail")
    report = load_report(pytester)
    one_story(result.ret, report)
    gate = report["summary"]["gates"][0]
    assert (gate["state"], gate["passed"], result.ret) == ("undecided", False, 1)


@pytest.mark.parametrize("stop", [["-x"], ["--maxfail=1"]], ids=["x", "maxfail"])
def test_an_interrupted_session_never_passes_even_with_tolerated_failures(
    pytester: pytest.Pytester, stop: list[str]
) -> None:
    patterns = {"a": "PFPPP", "b": "PPPPP"}
    result = session(pytester, patterns, *stop, "--consistency-gap-max=100", marker="min_pass=0.6")
    report = load_report(pytester)
    one_story(result.ret, report)
    assert result.ret != 0 and report["summary"]["run"]["interrupted"] is True


def test_pytest_exit_inside_a_repetition_never_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_task="""
import pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_task(consistency):
    if consistency.repeat == 2:
        pytest.exit("stop here", returncode=0)
"""
    )
    result = pytester.runpytest("--consistency-report=report.json")
    report = load_report(pytester)
    one_story(result.ret, report)
    assert report["summary"]["run"]["interrupted"] is True
    assert report["tasks"][0]["verdict"] == "incomplete"


def _corrupt(path: Path, base: Path) -> None:
    path.write_text(base.read_text()[:120])


def _directory(path: Path, base: Path) -> None:
    path.mkdir()


def _json_list(path: Path, base: Path) -> None:
    path.write_text("[]")


def _empty_object(path: Path, base: Path) -> None:
    path.write_text("{}")


def _other_schema(path: Path, base: Path) -> None:
    mutate(base, path, lambda d: d.update(schema="pytest-consistency/report/99"))


def _empty_file(path: Path, base: Path) -> None:
    path.write_text("")


def _infinite_interval(path: Path, base: Path) -> None:
    mutate(base, path, lambda d: d["tasks"][0]["pass_rate_interval"].update(high=float("inf")))


def _nan_figure(path: Path, base: Path) -> None:
    mutate(base, path, lambda d: d["summary"].update(consistency_gap_pp=float("nan")))


def _k_zero(path: Path, base: Path) -> None:
    mutate(base, path, lambda d: d["tasks"][0].update(k=0))


def _passes_above_scored(path: Path, base: Path) -> None:
    mutate(base, path, lambda d: d["tasks"][0].update(passes=99))


BAD_BASELINES = [
    pytest.param(_corrupt, id="truncated"),
    pytest.param(_directory, id="directory"),
    pytest.param(_json_list, id="json-list"),
    pytest.param(_empty_object, id="empty-object"),
    pytest.param(_other_schema, id="other-schema"),
    pytest.param(_empty_file, id="empty-file"),
    pytest.param(_infinite_interval, id="infinity"),
    pytest.param(
        _nan_figure,
        id="nan",
    ),
    pytest.param(
        _k_zero,
        id="k-zero",
    ),
    pytest.param(
        _passes_above_scored,
        id="passes-above-scored",
    ),
]


@pytest.mark.parametrize("spoil", BAD_BASELINES)
def test_an_unusable_baseline_is_a_named_error_never_a_pass(pytester: pytest.Pytester, spoil: Any) -> None:
    session(pytester, BASELINE, report="good.json")
    spoil(pytester.path / "base.json", pytester.path / "good.json")
    result = session(pytester, BASELINE, "--consistency-baseline=base.json", "--consistency-regressions-max=0")
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    report = load_report(pytester)
    one_story(result.ret, report)
    assert result.ret == 1
    assert report["summary"]["comparison"] is None
    assert any(e.startswith("--consistency-baseline:") and "base.json" in e for e in report["summary"]["errors"])
    result.stdout.fnmatch_lines(["error: --consistency-baseline: *base.json*"])
