"""Which re-judging item is which, and where its cassette lives (``rejudge.plan``); its id (``config.marker``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_consistency.config.marker import judge_sample_id, task_id_of
from pytest_consistency.rejudge.plan import index_of, sample_cassette, source_cassette, split


def test_items_are_judge_samples_of_repetitions() -> None:
    assert [split(i, 3) for i in range(1, 7)] == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]
    assert all(index_of(*split(i, 4), 4) == i for i in range(1, 20))
    with pytest.raises(ValueError):
        split(0, 2)


def test_paths() -> None:
    task = Path("cassettes/test_x/test_x")
    assert sample_cassette(task, 3, 2, ".yaml") == task / "rejudge" / "rep-3" / "judge-2.yaml"
    assert source_cassette(task, 3, ".json") == task / "rep-3.json"
    assert sample_cassette(task, 3, 2, ".yaml", "agent") == task / "rejudge" / "rep-3" / "agent-2.yaml"


@pytest.mark.parametrize(
    ("nodeid", "task"),
    [
        ("t.py::test_x[rep3@judge2]", "t.py::test_x"),
        ("t.py::test_x[a-rep3@judge2]", "t.py::test_x[a]"),
        ("t.py::test_x[a@judge2]", "t.py::test_x[a@judge2]"),
        ("t.py::test_x[repx@judge2]", "t.py::test_x[repx@judge2]"),
        ("t.py::test_x[rep3@agent2]", "t.py::test_x"),
        ("t.py::test_x[a-rep12@agent10]", "t.py::test_x[a]"),
        ("t.py::test_x[rep3@user2]", "t.py::test_x[rep3@user2]"),
    ],
)
def test_a_rejudging_items_task_id(nodeid: str, task: str) -> None:
    assert task_id_of(nodeid, 5) == task
    assert judge_sample_id(3, 2) == "rep3@judge2"
    assert judge_sample_id(3, 2, "agent") == "rep3@agent2"
