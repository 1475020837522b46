"""The house's one rule, as CI runs it: each wing imports only the wings below it, and no modules import each other.

The contract is in pyproject.toml ([tool.importlinter]); import-linter reads every import of the package, also
those inside functions and under TYPE_CHECKING. These tests keep the contract itself honest: it names every wing
(a module added outside it would be checked by nothing), and it catches an upward import hidden in a function.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_consistency"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def contract() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def wings_in_contract() -> list[str]:
    layers = next(c for c in contract()["contracts"] if c["type"] == "layers")["layers"]
    return [name.strip() for layer in layers for name in layer.split("|")]


def test_every_wing_of_the_package_is_a_layer_of_the_contract() -> None:
    """A new folder or a new module at the top of the package must be placed in the order (pyproject.toml), or
    nothing checks what it imports and what imports it."""
    tops = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    tops |= {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    missing = sorted(tops - set(wings_in_contract()))
    assert not missing, f"not in [tool.importlinter] layers of pyproject.toml: {missing}"
    assert len(wings_in_contract()) == len(set(wings_in_contract()))


def run_lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True, env={"PYTHONPATH": str(root)}
    )


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is in the test extra")
def test_the_package_keeps_the_contract() -> None:
    result = run_lint(ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "2 kept, 0 broken" in result.stdout


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is in the test extra")
@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # an upward import hidden in a function: the bottom wing reaching the command line
        ("stats/choices.py", "def _late():\n    from pytest_consistency.cli import main\n", "wings"),
        # a type-only import up the layers counts too
        (
            "model/records.py",
            "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pytest_consistency.plugin import state\n",
            "wings",
        ),
        # a circle inside one wing: a module the other already imports
        ("stats/binomial.py", "def _back():\n    from pytest_consistency.stats import suite\n", "circles"),
    ],
)
def test_the_contract_catches_what_it_forbids(tmp_path: Path, module: str, line: str, broken: str) -> None:
    """A copy of the package with one forbidden import added: import-linter must report the contract broken."""
    shutil.copytree(PACKAGE, tmp_path / "pytest_consistency", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "pytest_consistency" / module
    target.write_text(target.read_text() + "\n\n" + line)
    result = run_lint(tmp_path)
    assert result.returncode != 0, result.stdout[-2000:]
    name = {"wings": "each wing imports only the wings below it", "circles": "no import circle"}[broken]
    assert name in result.stdout and "BROKEN" in result.stdout, result.stdout[-2000:]


def test_no_module_is_a_house_of_its_own() -> None:
    """No module over 600 lines (a module that grows past it holds more than one concern: split it by concern), and
    the entry point, a table of contents, under 400."""
    sizes = {p.relative_to(PACKAGE).as_posix(): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert not {name: size for name, size in sizes.items() if size > 600}
    assert sizes["plugin/__init__.py"] < 400
