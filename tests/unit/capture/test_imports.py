"""The import watcher: subscribers run when a module is first imported, and the module keeps its own loader."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_consistency.capture import imports


@pytest.fixture
def module_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [n for n in sys.modules if n.startswith("watched_")]:
        del sys.modules[name]


def test_a_subscriber_sees_the_module_after_it_ran_and_the_loader_is_the_real_one(module_dir: Path) -> None:
    (module_dir / "watched_a.py").write_text("VALUE = 42\n")
    seen: list[ModuleType] = []
    stop = imports.when_imported("watched_a", seen.append)
    try:
        import watched_a  # type: ignore[import-not-found]
    finally:
        stop()
    assert seen == [watched_a] and watched_a.VALUE == 42
    assert type(watched_a.__loader__).__module__ != imports.__name__
    assert watched_a.__spec__.loader is watched_a.__loader__
    assert imports._FINDER not in sys.meta_path  # the last subscription took the finder away


def test_a_package_is_watched_by_its_top_level_name_and_submodules_import_normally(module_dir: Path) -> None:
    package = module_dir / "watched_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .inner import X\n")
    (package / "inner.py").write_text("X = 'x'\n")
    seen: list[str] = []
    stop = imports.when_imported("watched_pkg", lambda m: seen.append(m.X))
    try:
        importlib.import_module("watched_pkg")
        importlib.import_module("watched_pkg.inner")
    finally:
        stop()
    assert seen == ["x"]


def test_an_ended_subscription_is_not_called_and_others_for_the_same_name_still_are(module_dir: Path) -> None:
    (module_dir / "watched_b.py").write_text("")
    first: list[ModuleType] = []
    second: list[ModuleType] = []
    stop_first = imports.when_imported("watched_b", first.append)
    stop_second = imports.when_imported("watched_b", second.append)
    stop_first()
    try:
        importlib.import_module("watched_b")
    finally:
        stop_second()
    assert first == [] and len(second) == 1


def test_an_absent_module_still_raises_import_error(module_dir: Path) -> None:
    stop = imports.when_imported("watched_absent", lambda m: None)
    try:
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("watched_absent")
    finally:
        stop()
