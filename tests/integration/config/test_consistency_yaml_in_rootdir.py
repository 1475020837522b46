"""``consistency.yaml`` in rootdir is read without an option, and the header says which file was read.

Issue 42: a project had to pass ``--consistency-config=consistency.yaml`` on every command line, and nothing said
whether a session had read it. Rule: ``--consistency-config`` (or ini ``consistency_config``) wins; else rootdir's
``consistency.yaml`` when it exists; the header line ``consistency: config ...`` names the file, relative to rootdir,
and why it was read, or says that none was. ``pytest-consistency merge`` and ``compare`` look in the directory they
run in the same way.
"""

from __future__ import annotations

import pytest
from suites import cli, load_report, pattern_suite

TASK = """
import pytest


@pytest.mark.repeat_consistency(n=5)
def test_answer(consistency):
    consistency.record("42")
"""


def header(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if line.startswith("consistency: config")]


def test_rootdirs_consistency_yaml_is_read_without_an_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_answer=TASK)
    pytester.makefile(".yaml", consistency="repeat: 3\nreport: out/r.json\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=3)  # the YAML's repeat, not the marker's n=5
    assert header(result) == ["consistency: config consistency.yaml (found in rootdir)"]
    assert load_report(pytester, "out/r.json")["summary"]["task_count"] == 1


def test_rootdir_not_the_current_directory(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a subdirectory: rootdir's file is read (paths in it relative to it), the one beside you is not."""
    pytester.makepyfile(test_answer=TASK)
    pytester.makefile(".yaml", consistency="repeat: 2\nreport: r.json\n")
    sub = pytester.mkdir("sub")
    (sub / "consistency.yaml").write_text("repeat: 4\n")
    monkeypatch.chdir(sub)
    result = pytester.runpytest(str(pytester.path))
    result.assert_outcomes(passed=2)
    assert header(result) == ["consistency: config consistency.yaml (found in rootdir)"]
    assert (pytester.path / "r.json").is_file() and not (sub / "r.json").exists()


def test_an_explicit_file_wins_over_rootdirs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_answer=TASK)
    pytester.makefile(".yaml", consistency="repeat: 3\n")
    (pytester.mkdir("ci") / "c.yaml").write_text("repeat: 2\n")
    result = pytester.runpytest("--consistency-config=ci/c.yaml")
    result.assert_outcomes(passed=2)
    assert header(result) == ["consistency: config ci/c.yaml (--consistency-config)"]
    pytester.makeini("[pytest]\nconsistency_config = ci/c.yaml\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)
    assert header(result) == ["consistency: config ci/c.yaml (consistency_config in tox.ini)"]


def test_without_a_file_the_header_says_none_was_read(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_answer=TASK)
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=5)
    assert header(result) == ["consistency: config none (no --consistency-config, no consistency.yaml in rootdir)"]
    assert header(pytester.runpytest()) == []  # a session that read no file: nothing to say unless -v


def test_a_broken_file_in_rootdir_is_a_usage_error_that_says_why_it_was_read(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_answer=TASK)
    pytester.makefile(".yaml", consistency="repeat: [\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*consistency.yaml:1: malformed YAML (*); fix the file (read because it is in rootdir)"]
    )
    pytester.makefile(".yaml", consistency="gates:\n  consistency_gap_mx: 3\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*consistency.yaml:2: unknown setting 'gates.consistency_gap_mx'*"])


PATTERNS = {"a": "PPFPP", "b": "PPPPP"}  # a gap of 40 pp over the two tasks


def test_merge_reads_consistency_yaml_in_the_current_directory(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, marker="min_pass=0"))
    pytester.runpytest("--consistency-report=s1.json", "-k", "rep1 or rep2 or rep3")
    pytester.runpytest("--consistency-report=s2.json", "-k", "rep4 or rep5")
    merge = ("merge", "s1.json", "s2.json", "-o", "m.json")
    assert cli(*merge, cwd=pytester.path).returncode == 0  # no gate: passes
    pytester.makefile(".yaml", consistency="gates:\n  consistency_gap_max: 5\n  on: point\noutputs:\n  html: m.html\n")
    result = cli(*merge, cwd=pytester.path)
    assert result.returncode == 1, result.stdout + result.stderr  # the YAML's gate
    assert "gate --consistency-gap-max: consistency gap" in result.stdout
    assert (pytester.path / "m.html").is_file()  # and its outputs
    assert result.stdout.splitlines()[-1] == "config: consistency.yaml (found in the current directory)"
    (pytester.path / "loose.yaml").write_text("gates:\n  consistency_gap_max: 50\n  on: point\n")
    result = cli(*merge, "--consistency-config=loose.yaml", cwd=pytester.path)
    assert result.returncode == 0, result.stdout + result.stderr  # the named file wins
    assert result.stdout.splitlines()[-1] == "config: loose.yaml (--consistency-config)"
    compare = cli("compare", "m.json", "s1.json", "--format", "json", cwd=pytester.path)
    assert compare.returncode == 0 and compare.stdout.lstrip().startswith("{")  # stdout is the table alone
    assert "compare: config: consistency.yaml (found in the current directory)" in compare.stderr
