"""The CI path as users copy it: the GitHub Actions workflows lint clean, and the same steps run locally.

``examples/ci/`` holds the workflows; ``scripts/ci_local.sh`` runs their steps (shards, merge, baseline comparison,
gates, the step summary, HTML and JUnit outputs) on the example suite, replayed offline from the committed
cassettes. A degraded agent is a copy of the example suite with one expectation made stricter (the committed
cassettes are never edited): the recorded answers stay, the agent's verdicts get worse, as a regression would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from suites import ROOT, replay_examples, validate_junit

EXPECTED = json.loads((ROOT / "examples" / "expected.json").read_text())
WORKFLOWS = sorted((ROOT / "examples" / "ci").glob("*.yml"))
SCRIPT = ROOT / "scripts" / "ci_local.sh"
ACTIONLINT = Path(sys.executable).parent / "actionlint"


def example_copy(tmp_path: Path, name: str = "suite") -> Path:
    """A copy of the example suite and its conftest (not its cassettes: the runs read the repository's)."""
    copy = tmp_path / name
    shutil.copytree(ROOT / "examples", copy / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "conftest_example.py", copy)
    return copy


def files_in(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


# --- the two README commands stay apart ------------------------------------------------------------------------


def test_a_test_replay_of_the_examples_writes_nothing_beside_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``examples/consistency.yaml`` asks for a Markdown summary and an HTML page beside it (the main job's
    outputs); a test's replay must write its own into a temporary directory, and never into a CI step summary."""
    copy = example_copy(tmp_path)
    before = files_in(copy / "examples")
    step_summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    out = tmp_path / "out"
    out.mkdir()
    result = replay_examples(out / "report.json", "-k", "test_seeded", root=copy)
    assert result.returncode == 0, result.stdout[-3000:]
    assert files_in(copy / "examples") == before
    assert not step_summary.exists()
    assert (out / "report.json").is_file()
