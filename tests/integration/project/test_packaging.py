"""The wheel ships every module: setuptools finds the package's subpackages (``pyproject.toml``), and finds only
folders that are packages, so every folder of Python files under ``pytest_consistency`` must have its
``__init__.py``. A wheel without a new subpackage once passed every test run from the editable install and failed
on the first import of a real install. The files that are not Python (the HTML page's CSS and JS) ship only
because package-data names them: a built sdist and wheel are opened to check."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "pytest_consistency"


def test_every_folder_of_modules_is_a_package() -> None:
    folders = {path.parent for path in PACKAGE.rglob("*.py")}
    assert [f for f in sorted(folders) if not (f / "__init__.py").is_file()] == []


def test_the_packages_are_found_not_listed() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" not in setuptools or "find" in setuptools["packages"], "list no packages by hand: find them"
    assert setuptools["packages"]["find"]["include"] == ["pytest_consistency", "pytest_consistency.*"]


#: Files the package reads at run time that are not Python: they ship only if package-data names them.
ASSETS = ("pytest_consistency/report/html/page.css", "pytest_consistency/report/html/page.js")


def test_the_sdist_and_the_wheel_carry_the_html_page_assets(tmp_path: Path) -> None:
    """The HTML page's stylesheet and script are package files, read with importlib.resources: a wheel without them
    renders no page. Built as ``.ci/run`` builds (the sdist, then the wheel from the sdist), so both are checked."""
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = tmp_path.glob("*.whl")
    (sdist,) = tmp_path.glob("*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        for name in ASSETS:
            assert archive.read(name) == (ROOT / name).read_bytes(), name
    with tarfile.open(sdist) as archive:
        top = sdist.name.removesuffix(".tar.gz")
        names = set(archive.getnames())
        assert [name for name in ASSETS if f"{top}/{name}" not in names] == []
