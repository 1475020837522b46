"""An answer the fixture accepts but UTF-8 cannot encode never costs an output, with or without xdist.

``os.fsdecode`` turns a file name's bytes that are not UTF-8 into lone surrogates, and an agent that lists files
records them. The JSON report keeps them exactly (as ``\\udcXX`` escapes); the Markdown summary, the HTML page and
the GitHub step summary show each as the same escape, so every output is written and says where the bytes were.
"""

from __future__ import annotations

import json

import pytest

TASK = """
import os
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_listing(consistency):
    name = os.fsdecode(b"caf\\xff.txt") if consistency.repeat != 2 else "cafe.txt"
    consistency.record({"files": [name]})
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_every_output_is_written_with_the_surrogate_escaped(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]
) -> None:
    step = pytester.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    pytester.makepyfile(test_agent=TASK)
    result = pytester.runpytest(
        "--consistency-report=r.json", "--consistency-md=r.md", "--consistency-html=r.html", *xdist
    )
    report = json.loads((pytester.path / "r.json").read_text())
    assert report["summary"]["errors"] == [], report["summary"]["errors"]
    assert result.ret == report["summary"]["exit_status"] == 0, result.stdout.str()
    answers = [r["answer"] for r in report["tasks"][0]["repetitions"]]
    assert answers == [{"files": ["caf\udcff.txt"]}, {"files": ["cafe.txt"]}, {"files": ["caf\udcff.txt"]}]
    for name in ("r.md", "r.html", "step-summary.md"):
        text = (pytester.path / name).read_text(encoding="utf-8")
        assert "caf\\udcff.txt" in text and "bytes that are not UTF-8" in text, name  # and says so
    assert "wrote markdown:" in result.stdout.str() and "wrote html:" in result.stdout.str()
