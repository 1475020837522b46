"""Which directories pytest's collection may skip: only those that hold nothing but the plugin's cassettes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_consistency.cassette_tree import only_cassettes, skip, under


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
        ],
    )
    assert only_cassettes(str(root))
    assert skip(root, root) and skip(root / "test_agent", root) and skip(root / "test_agent" / "test_task", root)
    (root / "empty").mkdir()
    assert skip(root / "empty", root)  # nothing in it to collect either


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
