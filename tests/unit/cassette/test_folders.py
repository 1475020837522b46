"""Which directories pytest's collection may skip: only those that hold nothing but the plugin's cassettes."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_consistency.cassette import folders
from pytest_consistency.cassette.folders import nothing_collects_cassettes, only_cassettes, under


class _Config:
    """What ``nothing_collects_cassettes`` reads of a pytest config: pytest's own collectors, default patterns."""

    def __init__(self, impls: list[Any] | None = None, python_files: list[str] | None = None, globs: Any = None):
        found = SimpleNamespace(get_hookimpls=lambda: list(impls or []))
        self.hook = SimpleNamespace(pytest_collect_file=found, pytest_collect_directory=found)
        self.python_files = python_files or ["test_*.py", "*_test.py"]
        self.globs = globs or []

    def getini(self, name: str) -> list[str]:
        assert name == "python_files"
        return self.python_files

    def getoption(self, name: str, default: Any = None) -> Any:
        assert name == "doctestglob"
        return self.globs


def skip(path: Path, root: Path) -> bool:
    return folders.skip(path, root, _Config())


def _tree(root: Path, files: list[str]) -> Path:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("interactions: []\nversion: 1\n")
    return root


def test_a_task_directory_of_repetitions_and_resamples_is_only_cassettes(tmp_path: Path) -> None:
    root = _tree(
        tmp_path / "cassettes",
        [
            "test_agent/test_task/rep-1.yaml",
            "test_agent/test_task/rep-12.yaml",
            "test_agent/test_task/resample/rep2@3/sample-1.yaml",
            "test_agent/test_task/.rep-3.yaml.abc123.tmp",
            "test_agent/test_other/rep-1.json",
        ],
    )
    assert only_cassettes(str(root))
    assert skip(root, root) and skip(root / "test_agent", root) and skip(root / "test_agent" / "test_task", root)
    (root / "empty").mkdir()
    assert not skip(root / "empty", root)  # a directory collector may make something of an empty directory
    assert not skip(root, root)


@pytest.mark.parametrize(
    "intruder",
    [
        "test_agent/test_task/test_more.py",  # a test module among the cassettes
        "test_agent/conftest.py",
        "test_agent/test_task/test_cases.yaml",  # a file another plugin may collect
        "test_agent/test_task/rep-1.yml",
        "test_agent/test_task/rep-x.yaml",
        "README.md",
        "test_agent/test_task/resample/rep2@3/notes.txt",
        "test_agent/test_task/sample-1.json",  # resample cassettes are YAML: this is somebody's data file
        "test_agent/test_task/.rep-1.yaml",
    ],
)
def test_anything_but_a_cassette_keeps_the_directory_and_its_parents_walked(tmp_path: Path, intruder: str) -> None:
    root = _tree(tmp_path / "cassettes", ["test_agent/test_task/rep-1.yaml", intruder])
    assert not only_cassettes(str(root))
    assert not skip(root, root)
    assert not skip(root / Path(intruder).parent, root)


def test_a_symbolic_link_is_never_followed_nor_skipped(tmp_path: Path) -> None:
    root = _tree(tmp_path / "cassettes", ["test_agent/test_task/rep-1.yaml"])
    outside = _tree(tmp_path / "tests", ["test_real.py"])
    (root / "test_agent" / "linked").symlink_to(outside, target_is_directory=True)
    assert not skip(root / "test_agent", root)
    (root / "test_agent" / "linked").unlink()
    (root / "test_agent" / "loop").symlink_to(root, target_is_directory=True)  # a loop must not recur forever
    assert not skip(root, root)
    (root / "test_agent" / "loop").unlink()
    (tmp_path / "alias").symlink_to(root / "test_agent", target_is_directory=True)
    assert not skip(tmp_path / "alias", tmp_path)  # the link itself is walked by pytest's rules


def test_only_paths_under_the_cassette_root_are_candidates(tmp_path: Path) -> None:
    root = tmp_path / "cassettes"
    lookalike = _tree(tmp_path / "cassettes2", ["t/task/rep-1.yaml"])
    assert not under(lookalike, root) and not skip(lookalike, root)
    assert not skip(tmp_path, root)  # the root's parent holds other things, and is outside anyway
    assert under(root, root) and under(root / "a" / "b", root)
    assert under(root / "a", Path(str(root) + os.sep))  # a root given with a trailing separator
    assert under(root / "a", tmp_path / "x" / ".." / "cassettes")  # ".." folded, as pytest's paths are


def test_a_directory_that_cannot_be_read_is_left_to_pytest(tmp_path: Path) -> None:
    root = tmp_path / "cassettes"
    assert not skip(root / "missing", root)
    assert not skip(_tree(root, ["rep-1.yaml"]) / "rep-1.yaml", root)  # a file is not a directory of cassettes


def test_anything_that_could_collect_a_cassette_turns_the_skip_off(tmp_path: Path) -> None:
    import _pytest.doctest
    import _pytest.python

    root = _tree(tmp_path / "cassettes", ["t/task/rep-1.yaml"])
    own = [SimpleNamespace(plugin=_pytest.python), SimpleNamespace(plugin=_pytest.doctest)]
    assert nothing_collects_cassettes(_Config(own))
    assert folders.skip(root, root, _Config(own))
    foreign = [*own, SimpleNamespace(plugin=SimpleNamespace(__name__="conftest"))]  # a conftest, or a class plugin
    assert not nothing_collects_cassettes(_Config(foreign))
    assert not folders.skip(root, root, _Config(foreign))
    assert not nothing_collects_cassettes(_Config(python_files=["*.yaml"]))
    for glob in ("*.yaml", "rep-*", "*.json", "sample-*.yaml"):
        assert not nothing_collects_cassettes(_Config(globs=[glob])), glob
    assert nothing_collects_cassettes(_Config(globs=["test*.txt", "*.rst"]))


def test_a_deep_tree_is_scanned_once_not_once_per_level(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    depth = 40
    chain = [tmp_path / "cassettes"]
    for _ in range(depth):
        chain.append(chain[-1] / "d")
    _tree(chain[0], [str((chain[i] / "rep-1.yaml").relative_to(chain[0])) for i in range(depth + 1)])
    scans = []
    real = os.scandir
    monkeypatch.setattr(folders.os, "scandir", lambda path: scans.append(path) or real(path))
    memo: dict[str, bool] = {}
    for directory in chain:  # as pytest asks, parent first, when the root is an ancestor of the tests
        assert folders.skip(directory, chain[0], _Config(), memo)
    assert len(scans) == depth + 1
