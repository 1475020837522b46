"""Cassette file names from test ids (cassette.paths): safe on every file system, and two ids never share a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_consistency.cassette.paths import cassette_path


@pytest.mark.parametrize(
    ("task_id", "expected"),
    [
        ("tests/test_a.py::test_x", "tests/test_a/test_x/rep-2.yaml"),
        ("test_a.py::TestC::test_m[a b]", "test_a/TestC_test_m_a_b-"),
        ("test_a.py::test_x[a/b]", "test_a/test_x_a_b-"),
    ],
)
def test_cassette_paths_are_file_safe_and_collision_free(task_id: str, expected: str) -> None:
    path = cassette_path(Path("c"), task_id, 2).as_posix()
    assert path.startswith("c/" + expected)
    assert cassette_path(Path("c"), "t.py::f[a/b]", 1) != cassette_path(Path("c"), "t.py::f[a_b]", 1)
