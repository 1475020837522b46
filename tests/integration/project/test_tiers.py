"""The tiers of the test suite (issue 45, docs/testing.md): each marker selects the tests it says, a test that needs
what is missing skips saying what makes it, CI deselects none of them, and tests/conftest.py loads without the test
extra's SDKs."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import forkserver
import pytest
from tiers import ROOT, TIER_MARKERS, tiers

#: Prints each collected item with the tier markers tests/conftest.py gave it, and whether it skips.
DUMP = """
import json


import os


def pytest_collection_finish(session):
    tiers = ("stats_validation", "extra_venv", "browser", "xdist_copy")
    rows = {
        item.nodeid: sorted({m.name for m in item.iter_markers() if m.name in tiers})
        for item in session.items
    }
    with open(os.environ["TIERDUMP"], "w") as handle:
        json.dump(rows, handle)
"""


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The whole suite as one collection sees it: node id -> its tier markers."""
    tmp = tmp_path_factory.mktemp("tiers")
    (tmp / "tierdump.py").write_text(DUMP)
    pythonpath = os.pathsep.join([str(tmp), str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": pythonpath, "TIERDUMP": str(tmp / "tiers.json")}
    command = [
        forkserver.interpreter(),
        "-m",
        "pytest",
        "--collect-only",
        "-q",
        "-p",
        "tierdump",
        "-p",
        "no:cacheprovider",
    ]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return dict(json.loads((tmp / "tiers.json").read_text()))


def with_marker(collected: dict[str, list[str]], marker: str) -> list[str]:
    return [node for node, markers in collected.items() if marker in markers]


def test_the_statistics_validation_is_the_coverage_and_error_rate_checks(collected: dict[str, list[str]]) -> None:
    marked = with_marker(collected, "stats_validation")
    assert len(marked) >= 150, len(marked)
    assert all("/stats/" in node or "alpha" in node or "rarely" in node for node in marked), marked
    unit_stats = [node for node in collected if node.startswith("tests/unit/") and "/stats/" in node]
    assert len(marked) < len(unit_stats)  # the reference values, edges and refusals stay in the fast tier
    assert any("coverage" in node for node in marked) and any("at_most_alpha" in node for node in marked)


def test_each_extra_venv_and_chromium_has_its_tests_marked(collected: dict[str, list[str]]) -> None:
    venvs = with_marker(collected, "extra_venv")
    for where in ("test_gateway.py", "test_gateway_anthropic.py", "test_traces_in_phoenix.py", "test_recipes.py"):
        assert any(where in node for node in venvs), where
    assert any("[test_llama_index.py]" in node for node in venvs)
    assert not any("[test_openai_sdk.py]" in node for node in venvs)
    browser = with_marker(collected, "browser")
    assert any("test_html_report.py" in node for node in browser)
    assert any("test_phoenix_draws_the_trace_of_a_task" in node for node in browser)


def test_an_xdist_copy_is_the_xdist_case_of_a_serial_one(collected: dict[str, list[str]]) -> None:
    copies = with_marker(collected, "xdist_copy")
    assert len(copies) >= 40, len(copies)
    for node in copies:
        function, _, case = node.partition("[")
        assert "xdist" in case, node
        serial = [n for n in collected if n.startswith(function + "[") and "xdist_copy" not in collected[n]]
        assert serial, f"{node} repeats no serial case"
    # a test that compares xdist with the serial run itself is the point of crossing workers, not a copy
    assert not [n for n in copies if "test_xdist_gives_the_same" in n]
    # a list of bad arguments that holds -n is no copy
    assert not [n for n in copies if "test_bad_input_to_the_script_names_the_option" in n]


def test_the_fast_tier_holds_no_test_that_needs_an_extra_venv_or_chromium(collected: dict[str, list[str]]) -> None:
    fast = {node: markers for node, markers in collected.items() if node.startswith("tests/unit/")}
    needs = [node for node, markers in fast.items() if {"extra_venv", "browser"} & set(markers)]
    assert needs == ["tests/unit/model/test_prices.py::test_every_shipped_price_is_litellms"], needs


def readme_copy(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "README.md", root / "README.md")
    return root


@pytest.mark.parametrize(
    ("fixtures", "params", "venv"),
    [
        (["phoenix"], {}, ".venv-phoenix"),
        ([], {"block": type("Block", (), {"options": {"venv": ".venv-openai2"}})()}, ".venv-openai2"),
    ],
    ids=["phoenix", "docs-block"],
)
def test_a_test_needing_a_missing_venv_skips_naming_it_and_the_readme_command(
    tmp_path: Path, fixtures: list[str], params: dict[str, object], venv: str
) -> None:
    root = readme_copy(tmp_path / "clone")
    path = root / "tests" / "integration" / "test_x.py"
    (tier,) = tiers(path, "test_x", fixtures, params, {}, root)
    assert (tier.marker, tier.arg) == ("extra_venv", venv)
    assert tier.skip is not None and str(root / venv) in tier.skip
    assert f"python3 -m venv {venv} && {venv}/bin/pip install" in tier.skip  # the README's own command
    (root / venv / "bin").mkdir(parents=True)
    (root / venv / "bin" / "python").write_text("")
    (tier,) = tiers(path, "test_x", fixtures, params, {}, root)
    assert tier.skip is None


def test_a_gateway_test_runs_with_the_litellm_proxy_found_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = readme_copy(tmp_path / "clone")
    path = root / "tests" / "integration" / "route" / "test_gateway.py"
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    monkeypatch.delenv("CONSISTENCY_LITELLM", raising=False)
    (tier,) = tiers(path, "test_x", ["proxy"], {}, {}, root)
    assert tier.skip is not None and "litellm[proxy]" in tier.skip
    binary = tmp_path / "litellm"
    binary.write_text("")
    monkeypatch.setenv("CONSISTENCY_LITELLM", str(binary))
    (tier,) = tiers(path, "test_x", ["proxy"], {}, {}, root)
    assert tier.skip is None


def test_every_tier_is_declared_and_documented_and_ci_deselects_none(pytestconfig: pytest.Config) -> None:
    declared = [re.split(r"[(:]", line)[0] for line in pytestconfig.getini("markers")]
    assert set(TIER_MARKERS) <= set(declared), declared
    assert not {"-m", "-k", "--deselect"} & set(pytestconfig.getini("addopts"))
    runs = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if "bin/pytest" in line]
    selecting = [line for line in runs if re.search(r"\s(-m|-k|--deselect)\s", line.partition("bin/pytest")[2])]
    assert runs and not selecting, runs
    page = (ROOT / "docs" / "testing.md").read_text()
    for marker in TIER_MARKERS:
        assert f"`{marker}`" in page, marker


#: Runs pytest with the SDKs, HTTP stacks and xdist the test extra installs made impossible to import.
WITHOUT_SDKS = """
import sys, pytest

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"anthropic", "httpcore", "httpcore2", "httpx", "httpx2", "openai", "vcr", "xdist"}:
            raise ImportError(f"No module named {name!r}")

sys.meta_path.insert(0, Absent())
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "tests/unit/stats/test_metrics.py"]))
"""


def test_the_conftest_loads_without_the_test_extras_sdks() -> None:
    # as in a venv without the test extra: no plugin of the extra (respx imports httpx) is loaded
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_SDKS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "tests collected" in result.stdout


@pytest.mark.parametrize(
    ("dist", "scheduler"), [((), "WorkStealingScheduling"), (("--dist", "load"), "LoadScheduling")], ids=repr
)
def test_the_suites_workers_steal_work_unless_a_dist_is_given(dist: tuple[str, ...], scheduler: str) -> None:
    """``-n 2`` alone schedules by work-stealing (tests/conftest.py), so that no worker idles while the other still
    holds a queue of slow tests; a ``--dist`` given is kept."""
    command = [forkserver.interpreter(), "-m", "pytest", "-n", "2", *dist, "-v", "-p", "no:cacheprovider"]
    command += ["-p", "no:randomly", *forkserver.worker_options()]
    command.append("tests/unit/shared/test_doorbell.py")
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"scheduling tests via {scheduler}" in result.stdout, result.stdout[-3000:]
