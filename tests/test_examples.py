"""The example suite replays offline from the repository's cassettes and reproduces what was recorded."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = json.loads((ROOT / "examples" / "expected.json").read_text())


def replay(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run the example suite as CI does: no key in the environment, cassettes only."""
    env = {k: v for k, v in os.environ.items() if k not in ("EXAMPLE_LLM_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    out = tmp_path / "report.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "examples",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "--consistency-config=examples/consistency.yaml",
            f"--consistency-report={out}",
            *args,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return result, json.loads(out.read_text())


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_replay_reproduces_the_recorded_gap_and_verdicts(tmp_path: Path, workers: list[str]) -> None:
    result, report = replay(tmp_path, "--route-drift-max=0", *workers)
    assert result.returncode == 0, result.stdout[-3000:]
    summary = report["summary"]
    for name in ("consistency_gap_pp", "answer_disagreement_pp", "mean_at_k", "pass_hat_k", "total_tokens"):
        assert summary[name] == pytest.approx(EXPECTED[name]), name
    tasks = {
        t["task_id"]: {key: t[key] for key in ("passes", "verdict", "outcomes", "distinct_answers", "attribution")}
        for t in report["tasks"]
    }
    assert tasks == EXPECTED["tasks"]
    assert all(c["replayed"] for t in report["tasks"] for r in t["repetitions"] for c in r["calls"])
    inconsistent = [task_id for task_id, t in tasks.items() if t["attribution"] == "agent"]
    assert inconsistent and all("test_sampled" in task_id for task_id in inconsistent)
    assert f"consistency gap {EXPECTED['consistency_gap_pp']:.1f} pp" in result.stdout


def test_gap_gate_on_the_replayed_suite(tmp_path: Path) -> None:
    below = f"--consistency-gap-max={EXPECTED['consistency_gap_pp'] - 1:.1f}"
    result, report = replay(tmp_path, below)
    assert result.returncode == 1
    assert report["summary"]["gates"][0]["passed"] is False


def test_asking_for_another_model_fails_with_a_replay_mismatch(tmp_path: Path) -> None:
    result, report = replay(tmp_path, "--consistency-model=gpt-4o", "-k", "test_pinned", "--route-drift-max=0")
    assert result.returncode == 1
    assert "replay mismatch in repetition 1: POST http://127.0.0.1:8765/v1/completions (model gpt-4o)" in result.stdout
    assert all("replay_mismatch" in t["route"]["errors"] for t in report["tasks"])


def test_no_cassette_in_the_repository_contains_a_key() -> None:
    files = sorted((ROOT / "cassettes").rglob("*.yaml"))
    assert len(files) == 30
    secret = re.compile(r"(sk-[A-Za-z0-9_-]{8,}|local-[0-9a-f]{8,}|bearer\s|authorization|api-key|set-cookie)", re.I)
    for path in files:
        text = path.read_text()
        assert not secret.search(text), path
        assert "x-consistency-key-fingerprint" in text
