"""Unit tests mirror the package: a contributor finds a module's tests by its path, and a module's tests by its name.

The figure: a module ``pytest_consistency/<wing>/<path>/<name>.py`` (not ``__init__``, not ``__main__``) is
*mirrored* when ``tests/unit/<wing>/<path>/test_<name>.py`` exists; the share of mirrored modules must stay at or
above ``FLOOR`` (70 %, issue 45). The other way round, a unit test file ``tests/unit/<wing>/<path>/test_<name>.py`` is
*stale* when the package has neither ``<wing>/<path>/<name>.py`` nor a package ``<wing>/<path>/<name>/`` (whose
``__init__`` is tested in ``test_<name>.py`` beside the package's folder), unless it is in ``ALLOWED``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_consistency"
UNIT = ROOT / "tests" / "unit"
FLOOR = 0.70

# Unit test files named for no one module, on purpose (paths under tests/unit). Keep this list short: a test of one
# module belongs in that module's file.
ALLOWED = {
    # The statistics' validation: coverage and level by exhaustive enumeration or simulation, across binomial,
    # significance, suite, metrics and gap_change; kept apart from the modules' own tests so they can be run alone.
    "stats/test_stats_aa.py",
    "stats/test_stats_binomial_large.py",
    "stats/test_stats_corner_coverage.py",
    "stats/test_stats_coverage.py",
    "stats/test_stats_significance_large.py",
    "stats/test_stats_suite_exact_coverage.py",
    "stats/test_stats_two_rate_coverage.py",
    # The board, the ledger and the throttle together on a platform without fcntl.
    "shared/test_no_fcntl.py",
}


@dataclass(frozen=True)
class Mirror:
    modules: list[str]  # the package's modules, as paths under the package
    unmirrored: list[str]  # of those, the ones without a unit test file of their name
    stale: list[str]  # unit test files (paths under tests/unit) named for no module or package

    @property
    def share(self) -> float:
        return 1 - len(self.unmirrored) / len(self.modules)

    def figure(self) -> str:
        mirrored = len(self.modules) - len(self.unmirrored)
        return f"{mirrored} of {len(self.modules)} modules mirrored ({self.share:.0%})"


def mirror(package: Path, unit: Path) -> Mirror:
    modules = sorted(
        path.relative_to(package)
        for path in package.rglob("*.py")
        if path.stem not in ("__init__", "__main__") and "__pycache__" not in path.parts
    )
    unmirrored = [str(m) for m in modules if not (unit / m.parent / f"test_{m.name}").exists()]
    stale = []
    for test in sorted(unit.rglob("test_*.py")):
        where = test.relative_to(unit)
        name = where.name.removeprefix("test_").removesuffix(".py")
        subject = package / where.parent / name
        if not subject.with_suffix(".py").exists() and not (subject / "__init__.py").exists():
            stale.append(str(where))
    return Mirror([str(m) for m in modules], unmirrored, stale)


def test_the_share_of_mirrored_modules_stays_at_or_above_the_floor() -> None:
    found = mirror(PACKAGE, UNIT)
    listed = "\n  ".join(found.unmirrored)
    assert found.share >= FLOOR, (
        f"{found.figure()}, below the floor of {FLOOR:.0%}. Modules without tests/unit/<wing>/<path>/test_<name>.py:"
        f"\n  {listed}"
    )


def test_no_unit_test_file_is_named_for_a_module_that_is_not_there() -> None:
    """A test file left behind by a renamed module, or named for a topic: move its tests to their module's file."""
    stale = [path for path in mirror(PACKAGE, UNIT).stale if path not in ALLOWED]
    assert not stale, f"tests/unit files named for no module of pytest_consistency/ (nor in ALLOWED): {stale}"


def test_every_allowed_file_exists() -> None:
    assert sorted(path for path in ALLOWED if not (UNIT / path).exists()) == []


def test_the_check_counts_what_the_definition_says(tmp_path: Path) -> None:
    """A small package and its tests: which modules count, which file is a mirror, which is stale."""
    package, unit = tmp_path / "pkg", tmp_path / "unit"
    for path in [
        "__init__.py",
        "wing/__init__.py",
        "wing/__main__.py",
        "wing/kept.py",
        "wing/bare.py",
        "wing/deep/__init__.py",
        "wing/deep/inner.py",
        "wing/group/__init__.py",
        "__pycache__/ignored.py",
    ]:
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).write_text("")
    for path in [
        "wing/test_kept.py",  # the mirror of wing/kept.py
        "wing/test_inner.py",  # not the mirror of wing/deep/inner.py, and inner.py is not in wing/: stale
        "wing/deep/test_inner.py",
        "wing/test_group.py",  # the package wing/group/ (its __init__): not stale, counts for no module
        "wing/test_topic.py",  # stale
        "wing/helpers.py",  # not a test file
    ]:
        (unit / path).parent.mkdir(parents=True, exist_ok=True)
        (unit / path).write_text("")

    found = mirror(package, unit)

    assert found.modules == ["wing/bare.py", "wing/deep/inner.py", "wing/kept.py"]
    assert found.unmirrored == ["wing/bare.py"]
    assert found.stale == ["wing/test_inner.py", "wing/test_topic.py"]
    assert found.figure() == "2 of 3 modules mirrored (67%)"
