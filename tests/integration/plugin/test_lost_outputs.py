"""An output the user asked for that cannot be written fails the run, in the terminal, the report and the exit.

The other outputs are written after the JSON report, so a lost one used to be one ``error:`` line in the terminal
while the exit status was 0 and the report said ``errors: []``; ``pytest-consistency merge`` of a report that
names the error fails it, so the session must too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from suites import pattern_suite

COMMAND = str(Path(sys.executable).parent / "pytest-consistency")


#: Both outputs serially; under xdist the Markdown one (the controller writes every output the same way).
@pytest.mark.parametrize(
    ("lost", "xdist"),
    [
        pytest.param("--consistency-md", [], id="--consistency-md-serial"),
        pytest.param("--consistency-md", ["-n", "2"], id="--consistency-md-xdist"),
        pytest.param("--consistency-html", [], id="--consistency-html-serial"),
    ],
)
def test_an_unwritable_output_fails_the_run_and_the_report_names_it(
    pytester: pytest.Pytester, xdist: list[str], lost: str
) -> None:
    (pytester.path / "afile").write_text("a file, not a directory")
    pytester.makepyfile(test_task=pattern_suite({"a": "PPP"}))
    result = pytester.runpytest("--consistency-report=r.json", f"{lost}=afile/out", *xdist)
    summary = json.loads((pytester.path / "r.json").read_text())["summary"]
    assert result.ret == summary["exit_status"] == 1 and summary["passed"] is False
    (error,) = summary["errors"]
    assert error.startswith(f"{lost}: cannot write the ") and "afile/out" in error
    result.stdout.fnmatch_lines([f"error: {lost}: cannot write the *"])
    merged = pytester.run(COMMAND, "merge", "r.json", "-o", "m.json")
    assert merged.ret == result.ret  # the same story from the report alone
