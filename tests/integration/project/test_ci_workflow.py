"""The CI path as users copy it: the GitHub Actions workflows lint clean, and the same steps run locally.

``examples/ci/`` holds the workflows; ``scripts/ci_local.sh`` runs their steps (shards, merge, baseline comparison,
gates, the step summary, HTML and JUnit outputs) on the example suite, replayed offline from the committed
cassettes. A degraded agent is a copy of the example suite with one expectation made stricter (the committed
cassettes are never edited): the recorded answers stay, the agent's verdicts get worse, as a regression would.
docs/ci.md's two commands (a run, then an unchanged run against it under ``-n 2``) carry ``by=`` this file: they run
here as the page shows them, in a copy of the example suite (tests/docs/run.py), and are the first runs checked.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import inner
import pytest
from docs.run import claimed, command_env, prepare, script, shell
from suites import ROOT, replay_examples, validate_junit

EXPECTED = json.loads((ROOT / "examples" / "expected.json").read_text())
WORKFLOWS = sorted((ROOT / "examples" / "ci").glob("*.yml"))
SCRIPT = ROOT / "scripts" / "ci_local.sh"
ACTIONLINT = Path(sys.executable).parent / "actionlint"
#: docs/ci.md's block: ``ci_local.sh --out ci-main``, then ``--out ci-pr --baseline ci-main/consistency.json -- -n 2``.
(PAGE_BLOCK,) = claimed("docs/ci.md", "tests/integration/project/test_ci_workflow.py")


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


# --- the workflow's steps, run locally ---------------------------------------------------------------------------


def ci_local(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``scripts/ci_local.sh ARGS`` with this venv's Python, at 80 columns."""
    environment = {**os.environ, "PYTHON": sys.executable, "COLUMNS": "80", "PYTHONIOENCODING": "utf-8"}
    environment.pop("GITHUB_STEP_SUMMARY", None)
    environment["PYTEST_ADDOPTS"] = inner.addopts(environment.get("PYTEST_ADDOPTS", ""))  # as the CI job's venv
    environment.update(env or {})
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=environment, timeout=900)


def degraded(tmp_path: Path) -> Path:
    """The example suite with an agent that got worse at one task: the invoice's sender must now be named in
    full, which no recorded answer does, so the pinned task that passed 5/5 on both routes fails every time."""
    copy = example_copy(tmp_path, "degraded")
    tests = copy / "examples" / "test_agent_tasks.py"
    text = tests.read_text()
    assert '"mail", "alice")' in text
    tests.write_text(text.replace('"mail", "alice")', '"mail", "alice liddell")'))
    return copy


@pytest.fixture(scope="module")
def page_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """docs/ci.md's block as written, in a copy of the example suite: ``ci-main`` (two shards and the merge, no
    baseline) is the next runs' baseline, ``ci-pr`` an unchanged run against it under ``-n 2``."""
    session = tmp_path_factory.mktemp("ci") / "session"
    session.mkdir()
    prepare(PAGE_BLOCK, session)
    before = files_in(session / "examples")
    result = shell(script(PAGE_BLOCK), session, command_env(PAGE_BLOCK, {}))
    assert files_in(session / "examples") == before  # every file went into --out
    return session, result


@pytest.fixture(scope="module")
def unchanged(page_run: tuple[Path, subprocess.CompletedProcess[str]]) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The example suite through two shards and the merge, no baseline (the page's first command)."""
    session, result = page_run
    return session / "ci-main", result


def test_shards_and_the_merge_give_the_figures_of_one_run_and_every_output(
    unchanged: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, result = unchanged
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    assert "ci_local.sh: merge exit status 0" in result.stdout
    for shard in (1, 2):
        report = json.loads((out / f"shard-{shard}.json").read_text())
        assert report["summary"]["run"]["shard"] == f"{shard}/2"
        assert all(t["scored"] == 5 for t in report["tasks"])  # whole tasks
    merged = json.loads((out / "consistency.json").read_text())
    summary = merged["summary"]
    for name in ("consistency_gap_pp", "answer_disagreement_pp", "mean_at_k", "pass_hat_k"):
        assert summary[name] == pytest.approx(EXPECTED[name]), name
    tasks = {t["task_id"]: (t["passes"], t["verdict"]) for t in merged["tasks"]}
    assert tasks == {task_id: (t["passes"], t["verdict"]) for task_id, t in EXPECTED["tasks"].items()}
    assert summary["passed"] is True and summary["run"]["shard"] is None
    assert [g["passed"] for g in summary["gates"]] == [True, True]  # the gap and route-drift gates of $GATES
    markdown = (out / "summary.md").read_text()
    assert "CAUTION" not in markdown and f"{EXPECTED['consistency_gap_pp']:.1f} pp" in markdown
    assert (out / "consistency.html").read_text().startswith("<!DOCTYPE html>")
    validate_junit(out / "junit.xml")


def passes_against_its_baseline(stdout: str, out: Path) -> None:
    # four statistical gates ($GATES' gap, $BASELINE_GATES' two, the suite-level test on with a baseline): 0.05 / 4
    level = "level 0.0125 = 0.05 / 4 gates (Bonferroni)"
    assert f"gate --consistency-regressions-max: consistency regressions 0 <= 0  ok ({level})" in stdout
    assert "gate --gap-increase-max: gap increase 0.0 pp, one-sided bounds [" in stdout
    suite = next(line for line in stdout.splitlines() if line.startswith("gate --consistency-suite-regression"))
    assert suite.endswith(f"> 0.0125  ok ({level})"), suite
    comparison = json.loads((out / "consistency.json").read_text())["summary"]["comparison"]
    assert comparison["regressions"] == 0 and comparison["gap_change_pp"] == 0


def test_an_unchanged_replay_under_xdist_passes_against_its_baseline(
    page_run: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    """The page's second command: two shards, each under ``-n 2``, merged and compared with the first's run."""
    session, result = page_run
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    passes_against_its_baseline(result.stdout, session / "ci-pr")


def test_an_unchanged_replay_over_three_shards_passes_against_its_baseline(
    unchanged: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    baseline = unchanged[0] / "consistency.json"
    result = ci_local("--shards", "3", "--out", str(tmp_path), "--baseline", str(baseline))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    passes_against_its_baseline(result.stdout, tmp_path)


def test_a_degraded_replay_fails_the_merge_naming_the_task(
    unchanged: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    baseline = unchanged[0] / "consistency.json"
    step_summary = tmp_path / "step-summary.md"
    out = tmp_path / "out"
    result = ci_local(
        "--root",
        str(degraded(tmp_path)),
        "--out",
        str(out),
        "--baseline",
        str(baseline),
        env={"GITHUB_STEP_SUMMARY": str(step_summary)},
    )
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr
    # Both shards ran to the end and deferred: only the merge failed.
    assert result.stdout.count("verdict deferred to pytest-consistency merge") == 2
    assert "ci_local.sh: merge exit status 1" in result.stdout
    for test in ("test_pinned", "test_anthropic_pinned"):
        assert f"{test}[invoice-sender]: newly failing 5/5 -> 0/5  p = 0.000977, q = 0.00635  REGRESSION" in (
            result.stdout
        )
    assert "gate --consistency-regressions-max: consistency regressions 2 > 0  FAILED" in result.stdout
    merged = json.loads((out / "consistency.json").read_text())["summary"]
    assert merged["passed"] is False and merged["exit_status"] == 1
    # The step summary is the merged run's, written once (the shards wrote none), and names the task.
    markdown = (out / "summary.md").read_text()
    assert step_summary.read_text() == markdown
    assert "[!CAUTION]" in markdown and "test\\_pinned\\[invoice-sender\\]" in markdown
    assert "REGRESSION" in markdown
    validate_junit(out / "junit.xml")
    assert 'name="gates"' in (out / "junit.xml").read_text()


def test_a_shard_that_broke_stops_before_the_merge(tmp_path: Path) -> None:
    copy = example_copy(tmp_path)
    (copy / "examples" / "test_broken.py").write_text("def test_x(:\n")
    result = ci_local("--root", str(copy), "--out", str(tmp_path / "out"), "--shards", "2")
    assert result.returncode not in (0, 1), result.stdout[-3000:]
    assert "ci_local.sh: shard 1/2 broke" in result.stderr and "not merging" in result.stderr
    assert not (tmp_path / "out" / "consistency.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--baseline", "/nonexistent/base.json"], "--baseline '/nonexistent/base.json': no such file"),
        (["--shards", "0"], "--shards '0' is not a whole number of at least 1"),
        (["--shards", "two"], "--shards 'two' is not a whole number of at least 1"),
        (["-n", "2"], "unknown option '-n' (pytest options go after --)"),
        (["--root", "/nonexistent"], "--root '/nonexistent' has no examples/consistency.yaml"),
    ],
)
def test_bad_input_to_the_script_names_the_option(args: list[str], message: str) -> None:
    result = ci_local(*args)
    assert result.returncode == 2
    assert f"ci_local.sh: error: {message}" in result.stderr
    assert result.stdout == ""


# --- the workflow files -----------------------------------------------------------------------------------------


def actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    assert ACTIONLINT.is_file(), f"{ACTIONLINT} is missing: pip install -e '.[test]' installs actionlint"
    return subprocess.run(
        [str(ACTIONLINT), "-no-color", *map(str, paths)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_every_workflow_file_passes_actionlint() -> None:
    assert [p.name for p in WORKFLOWS] == ["consistency-rerecord.yml", "consistency.yml"]
    result = actionlint(*WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_broken_copy_of_the_workflow(tmp_path: Path) -> None:
    """The lint above can fail: a misspelt matrix key in a copy of the workflow is an error actionlint names."""
    text = (ROOT / "examples" / "ci" / "consistency.yml").read_text()
    assert "--consistency-shard=${{ matrix.shard }}/" in text
    broken = tmp_path / "consistency.yml"
    broken.write_text(text.replace("${{ matrix.shard }}/", "${{ matrix.shrad }}/"))
    result = actionlint(broken)
    assert result.returncode == 1
    assert "shrad" in result.stdout


def workflow(name: str) -> dict[str, Any]:
    import yaml

    data: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "ci" / name).read_text())
    return data


def run_steps(job: dict[str, Any]) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_the_pull_request_workflow_shards_merges_against_the_baseline_and_gates_once() -> None:
    flow = workflow("consistency.yml")
    triggers = flow[True]  # YAML 1.1 reads the key `on` as true
    assert "pull_request" in triggers and triggers["push"]["branches"] == ["main"]
    shards = flow["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1)) and flow["env"]["SHARDS"] == str(len(shards))
    shard_run = run_steps(flow["jobs"]["shard"])
    assert "--consistency-shard=${{ matrix.shard }}/${{ env.SHARDS }}" in shard_run
    assert "--consistency-record=none" in shard_run and "--no-consistency-md" in shard_run
    gate = flow["jobs"]["gate"]
    assert gate["needs"] == "shard"
    gate_run = run_steps(gate)
    assert "pytest-consistency merge shard-*.json -o consistency.json" in gate_run
    assert "--consistency-baseline=baseline.json $BASELINE_GATES" in gate_run
    assert "gh run download" in gate_run and "--name consistency-report" in gate_run
    # one command writes every output (the step summary from $GITHUB_STEP_SUMMARY, as a session does)
    assert "--consistency-html=consistency.html --junitxml=consistency-junit.xml" in gate_run
    assert "pytest-consistency show" not in gate_run and "--no-consistency-md" not in gate_run
    upload = next(s for s in gate["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["name"] == "consistency-report" and upload["if"] == "always()"
    assert set(upload["with"]["path"].split()) == {"consistency.json", "consistency.html", "consistency-junit.xml"}
    # The build fails on the merge's exit status alone, after the outputs are written and uploaded.
    last = gate["steps"][-1]
    assert last["if"] == "steps.merge.outputs.status != '0'" and 'exit "$STATUS"' in last["run"]
    assert "permissions" in flow and flow["permissions"]["contents"] == "read"


def test_the_rerecord_workflow_records_live_with_the_secret_and_opens_a_pull_request() -> None:
    flow = workflow("consistency-rerecord.yml")
    assert set(flow[True]) == {"schedule", "workflow_dispatch"}
    job = flow["jobs"]["rerecord"]
    record = next(s for s in job["steps"] if "--consistency-record=all" in s.get("run", ""))
    assert record["env"]["OPENAI_API_KEY"] == "${{ secrets.OPENAI_API_KEY }}"
    replay = next(s for s in job["steps"] if "--consistency-record=none" in s.get("run", ""))
    assert "OPENAI_API_KEY" not in replay.get("env", {})
    steps = run_steps(job)
    assert "gh pr create" in steps and "git add cassettes" in steps
    assert flow["permissions"] == {"contents": "write", "pull-requests": "write"}


# --- ready to publish -------------------------------------------------------------------------------------------


def test_one_version_which_the_changelog_describes() -> None:
    """The installed distribution's version is the package's ``__version__`` (pyproject reads it from there), and
    the changelog's latest release section is that version."""
    import re
    from importlib.metadata import version

    import pytest_consistency

    assert version("pytest-consistency") == pytest_consistency.__version__
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert releases and releases[0] == pytest_consistency.__version__


# --- long commands show progress --------------------------------------------------------------------------------

#: benchmarks/run.py with figures 5 and 7 replaced by stand-ins (their measurements are not what is tested):
#: figure 7 waits for the test to have read figure 5's line, so it can tell whether figure 5 was printed while
#: the run went on. The wait has no time limit that a pass depends on; its cap only ends a run that would hang.
BENCHMARK_STANDIN = """
import os, sys, time
from pathlib import Path
sys.path.insert(0, "benchmarks")
import run

handshake = Path(os.environ["HANDSHAKE"])

def figure(number, title):
    row = {"label": "stand-in", "wall_median_s": 0.0, "wall_spread": 0.0}
    return [{"figure": number, "title": title, "ratio": 1.0, "target": "<= 2", "met": True, "configs": [row]}]

def seven(sizes):
    give_up = time.monotonic() + float(os.environ["GIVE_UP_S"])
    while not handshake.exists():
        if time.monotonic() > give_up:
            return figure("7", "figure 5 was not printed in time")
        time.sleep(0.05)
    return figure("7", "figure 5 was read while the run went on")

run.figure_5 = lambda sizes, repeats: figure("5", "the first figure")
run.figure_7 = seven
sys.exit(run.main(["--only", "5,7", "--repeats", "1"]))
"""


def test_the_benchmark_prints_each_figure_as_it_is_measured(tmp_path: Path) -> None:
    handshake = tmp_path / "read"
    env = {**os.environ, "HANDSHAKE": str(handshake), "GIVE_UP_S": os.environ.get("BENCH_GIVE_UP_S", "600")}
    env.pop("PYTHONUNBUFFERED", None)
    with subprocess.Popen(
        [sys.executable, "-c", BENCHMARK_STANDIN], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "=> the first figure" in line:
                handshake.touch()
        assert proc.wait() == 0, "".join(lines)
    output = "".join(lines)
    assert "=> figure 5 was read while the run went on" in output, output
    assert output.index("pytest-consistency benchmarks") < output.index("=> the first figure")
