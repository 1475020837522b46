"""A session's shared scratch directories (throttle slots, token ledger, adaptive board) leave nothing in $TMPDIR.

The controller makes them in ``pytest_configure`` and hands them to its xdist workers; it removes them at its
``pytest_unconfigure``, after every worker has finished, also when the session stops at a usage error. Inner
sessions run in a subprocess, because ``tempfile`` reads ``$TMPDIR`` once per process.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from suites import pattern_suite

SHARED = ["--consistency-concurrency=1", "--consistency-rpm=6000", "--consistency-token-budget=1000"]


def leftovers(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("consistency-"))


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize("options", [SHARED, ["--consistency-adaptive"]], ids=["throttle-budget", "adaptive"])
def test_no_consistency_directory_is_left_in_tmpdir(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str], options: list[str]
) -> None:
    tmp = pytester.path / "tmpdir"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    pytester.makepyfile(test_task=pattern_suite({"a": "PPPPP", "b": "PFPPP"}, marker="min_pass=0.6"))
    result = pytester.runpytest_subprocess("--consistency-report=r.json", *options, *xdist)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert (pytester.path / "r.json").is_file()
    assert leftovers(tmp) == []


def test_a_session_refused_at_configure_leaves_nothing_either(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adaptive mode refuses a figure gate in ``pytest_configure``, after the throttle and ledger were made."""
    tmp = pytester.path / "tmpdir"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    pytester.makepyfile(test_task=pattern_suite({"a": "PPPPP"}))
    result = pytester.runpytest_subprocess(*SHARED, "--consistency-adaptive", "--consistency-gap-max=10")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--consistency-adaptive stops a task*"])
    assert leftovers(tmp) == []
