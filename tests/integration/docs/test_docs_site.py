"""The documentation as a whole: the site builds strict, the README's commands are CI's, the shell scripts lint,
and the figures the docs quote are the example suite's.

Why tests and not only a CI step: a broken link, a README command that CI no longer runs, or a screenshot of an
older suite is drift the reader meets first; the test suite is what every change runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from suites import ROOT

BIN = Path(sys.executable).parent
MKDOCS = BIN / "mkdocs"
EXPECTED = json.loads((ROOT / "examples" / "expected.json").read_text())


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [str(MKDOCS), "build", "--strict", "--site-dir", str(site), "-f", str(root / "mkdocs.yml")]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)


def site_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy)
    shutil.copy(ROOT / "README.md", copy)
    shutil.copytree(ROOT / "docs", copy / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    result = mkdocs_build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stderr[-4000:]
    home = (tmp_path / "site" / "index.html").read_text()
    assert "Your agent: record, replay, gate" in home  # the README is the home page
    assert 'href="metrics/' in home  # its docs/ links made relative to the site


@pytest.mark.parametrize(
    "change",
    ["README.md", "docs/ci.md", "mkdocs.yml"],
    ids=["README link", "page link", "nav entry"],
)
def test_a_broken_link_or_nav_entry_fails_the_build(tmp_path: Path, change: str) -> None:
    copy = site_copy(tmp_path)
    target = copy / change
    if change == "mkdocs.yml":
        target.write_text(target.read_text().replace("xdist: xdist.md", "xdist: no-such-page.md"))
    else:
        target.write_text(target.read_text() + "\nSee [nowhere](docs/no-such-page.md) and [x](no-such-page.md).\n")
    result = mkdocs_build(copy, tmp_path / "site")
    assert result.returncode != 0
    assert "no-such-page.md" in result.stderr


def readme_commands() -> list[str]:
    """The two commands of "Fresh machine: the two commands", as the README shows them (a command may go on over
    several lines, each ending in a backslash but the last)."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Fresh machine: the two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, re.S)


def test_ci_runs_the_readme_commands_verbatim() -> None:
    commands = readme_commands()
    assert len(commands) == 2, commands
    ci = "\n" + (ROOT / ".ci" / "run").read_text()
    for command in commands:
        lines = command.splitlines()
        assert all(line.endswith(" \\") for line in lines[:-1]), f"not one command:\n{command}"
        assert f"\n{command}\n" in ci, f".ci/run does not run the README's command (whole lines, verbatim):\n{command}"
    assert commands[1].endswith(".venv/bin/pytest -n 2")


def test_the_readme_says_how_long_the_test_command_takes() -> None:
    text = (ROOT / "README.md").read_text()
    assert re.search(r"about \d+ minutes on a 2-core machine with `-n 2`", text)


def test_the_readme_stays_a_front_door() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f": {page.name}" in nav, f"{page.name} is not in mkdocs.yml's nav"


SHELLCHECK = shutil.which("shellcheck")


@pytest.mark.skipif(SHELLCHECK is None and not os.environ.get("CI"), reason="shellcheck is not installed")
def test_the_shell_scripts_pass_shellcheck() -> None:
    assert SHELLCHECK is not None, "CI must have shellcheck (.ci/run installs Debian's package)"
    scripts = [*sorted((ROOT / "scripts").glob("*.sh")), ROOT / ".ci" / "run"]
    result = subprocess.run([SHELLCHECK, *map(str, scripts)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-4000:]


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed")
def test_shellcheck_would_catch_a_mistake(tmp_path: Path) -> None:
    """The check can fail: an unquoted variable in a copy of a script is reported."""
    script = tmp_path / "bad.sh"
    script.write_text("#!/usr/bin/env bash\nrm -rf $1/build\n")
    result = subprocess.run([str(SHELLCHECK), str(script)], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "SC2086" in result.stdout


# --- figures the docs quote are the example suite's -------------------------------------------------------------


def example_figures() -> tuple[int, float]:
    return len(EXPECTED["tasks"]), round(EXPECTED["consistency_gap_pp"], 1)


def test_the_example_suite_page_quotes_the_recorded_figures() -> None:
    """docs/example-suite.md prints the replayed summary; its task count and gap are examples/expected.json's."""
    tasks, gap = example_figures()
    text = (ROOT / "docs" / "example-suite.md").read_text()
    assert f"tasks {tasks}, repetitions" in text
    assert f"consistency gap {gap} pp" in text
    assert f"{tasks} × 5" in (ROOT / "docs" / "outputs.md").read_text()  # the browser test's grid, as described


def test_the_screenshot_source_shows_the_recorded_figures(tmp_path: Path) -> None:
    """The page scripts/screenshot_html.py photographs is rendered from a replay of the example suite: its task
    count and gap are those of examples/expected.json, so a picture regenerated now cannot show another suite; and
    the replay writes nothing into the clone (the main job's outputs beside examples/ stay as they were)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import screenshot_html
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    before = {p: p.stat().st_mtime_ns for p in (ROOT / "examples").rglob("*") if p.is_file()}
    html = screenshot_html.replay_html(tmp_path).read_text()
    after = {p: p.stat().st_mtime_ns for p in (ROOT / "examples").rglob("*") if p.is_file()}
    tasks, gap = example_figures()
    assert f"<title>pytest-consistency: passed, gap {gap} pp" in html
    assert f"{tasks} scored task(s)" in html
    assert len(re.findall(r'<tr id="row-\d+"', html)) == tasks
    assert after == before
