"""An output the user asked for that cannot be written is named in the JSON report, not only in the terminal.

The other outputs are written after the JSON report, so a lost one used to be one ``error:`` line in the terminal
while the report said ``errors: []``. Like a raising summary hook, a lost output is an error that changes no
verdict (``tests/test_verdicts.py``): the terminal, the report and the exit status tell that same story.
"""

from __future__ import annotations

import json

import pytest
from suites import pattern_suite


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize("lost", ["--consistency-md", "--consistency-html"])
def test_an_unwritable_output_is_named_in_the_report(pytester: pytest.Pytester, xdist: list[str], lost: str) -> None:
    (pytester.path / "afile").write_text("a file, not a directory")
    pytester.makepyfile(test_task=pattern_suite({"a": "PPP"}))
    result = pytester.runpytest("--consistency-report=r.json", f"{lost}=afile/out", *xdist)
    summary = json.loads((pytester.path / "r.json").read_text())["summary"]
    assert result.ret == summary["exit_status"] == 0 and summary["passed"] is True
    (error,) = summary["errors"]
    assert error.startswith(f"{lost}: cannot write the ") and "afile/out" in error
    result.stdout.fnmatch_lines([f"error: {lost}: cannot write the *"])
