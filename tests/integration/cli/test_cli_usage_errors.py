"""The CLI never prints a traceback and never writes a partial output: a malformed report to merge and bad command
lines are named usage errors (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from suites import cli, pattern_suite


def session(pytester: pytest.Pytester, patterns: dict[str, str], *args: str, report: str = "report.json", **kw: Any):  # type: ignore[no-untyped-def]
    pytester.makepyfile(test_task=pattern_suite(patterns, kw.get("answers"), marker=kw.get("marker", "min_pass=0")))
    return pytester.runpytest(f"--consistency-report={report}", *args)


def mutate(path: Path, target: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    target.write_text(json.dumps(data))  # json.dumps writes NaN and Infinity as Python does


def _rep(d: dict[str, Any]) -> dict[str, Any]:
    return d["tasks"][0]["repetitions"][0]


CLI_BAD = [
    pytest.param(lambda d: _rep(d).update(min_pass=float("nan")), id="nan-min-pass"),
    pytest.param(lambda d: _rep(d).update(duration=float("inf")), id="infinite-duration"),
    pytest.param(lambda d: _rep(d).update(k=0), id="k-zero"),
    pytest.param(lambda d: d["summary"]["analysis"].update(confidence=2.0), id="confidence-2"),
    pytest.param(lambda d: d["tasks"][0].update(verdict="great"), id="bad-verdict"),
    pytest.param(lambda d: d.update(extra=1), id="unknown-key"),
    pytest.param(lambda d: d["summary"].pop("tasks", None) or d.pop("tasks"), id="no-tasks-key"),
]


@pytest.mark.parametrize("change", CLI_BAD)
def test_merge_of_a_malformed_report_is_a_usage_error_without_traceback(pytester: pytest.Pytester, change: Any) -> None:
    session(pytester, {"a": "PPFPP", "b": "PPPPP"}, report="good.json")
    mutate(pytester.path / "good.json", pytester.path / "bad.json", change)
    result = cli("merge", "bad.json", "-o", "out.json", cwd=pytester.path)
    assert "Traceback" not in result.stderr, result.stderr[-600:]
    assert result.returncode == 2 and "bad.json" in result.stderr, result.stderr
    assert not (pytester.path / "out.json").exists()
    assert not list(pytester.path.glob(".out.json.*"))


@pytest.mark.parametrize(
    "args",
    [
        ["show", "missing.json"],
        ["show", "."],
        ["compare", "r.json", "nowhere.json"],
        ["compare", "r.json", "r.json", "--labels", "one"],
        ["merge", "r.json", "-o", "out.json", "--consistency-config=nowhere.yaml"],
        ["merge", "r.json", "-o", "out.json", "--consistency-config=bad.yaml"],
        ["merge", "r.json", "-o", "out.json", "--consistency-confidence=1.5"],
        ["merge", "r.json", "-o", "out.json", "--consistency-gate-on=middle"],
        ["merge", "r.json", "-o", "sub"],
        ["merge", "r.json", "-o", "r.json/inside.json"],
    ],
    ids=lambda a: " ".join(a),
)
def test_bad_command_lines_are_named_usage_errors(pytester: pytest.Pytester, args: list[str]) -> None:
    session(pytester, {"a": "PPFPP"}, report="r.json")
    (pytester.path / "bad.yaml").write_text("gates:\n  consistency_gap_max: [1\n")
    (pytester.path / "sub").mkdir()
    before = (pytester.path / "r.json").read_text()
    result = cli(*args, cwd=pytester.path)
    assert "Traceback" not in result.stderr, result.stderr[-600:]
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "error:" in result.stderr
    assert not (pytester.path / "out.json").exists() and (pytester.path / "r.json").read_text() == before
    assert not list(pytester.path.rglob(".*.tmp"))
