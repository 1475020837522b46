"""The wheel ships every module: setuptools finds the package's subpackages (``pyproject.toml``), and finds only
folders that are packages, so every folder of Python files under ``pytest_consistency`` must have its
``__init__.py``. A wheel without a new subpackage once passed every test run from the editable install and failed
on the first import of a real install."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytest_consistency"


def test_every_folder_of_modules_is_a_package() -> None:
    folders = {path.parent for path in PACKAGE.rglob("*.py")}
    assert [f for f in sorted(folders) if not (f / "__init__.py").is_file()] == []


def test_the_packages_are_found_not_listed() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" not in setuptools or "find" in setuptools["packages"], "list no packages by hand: find them"
    assert setuptools["packages"]["find"]["include"] == ["pytest_consistency", "pytest_consistency.*"]
