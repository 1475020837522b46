from __future__ import annotations

from pathlib import Path

from pytest_consistency.config.parse import Target
from pytest_consistency.resample.plan import (
    Plan,
    close_ids,
    known_ids,
    source_problem,
    step_problem,
    unknown_task,
)

TASK = "examples/test_react_tasks.py::test_react[invoice-sender]"


def test_sample_cassettes_sit_beside_the_source() -> None:
    plan = Plan(Target(TASK, 2), samples=4, source=3)
    source = Path("cassettes/examples/test_react_tasks/test_react_invoice-sender-1/rep-3.yaml")
    assert plan.sample_cassette(source, 2) == source.parent / "resample" / "rep3@2" / "sample-2.yaml"


def test_unknown_task_lists_the_close_ids() -> None:
    plan = Plan(Target("examples/test_react_tasks.py::test_react[invoice-sendr]", 2), 4)
    marked = [TASK, "examples/test_agent_tasks.py::test_sampled[invoice-sender]", "x.py::other"]
    problem = unknown_task(plan, marked, [])
    assert problem is not None
    assert "--consistency-resample=examples/test_react_tasks.py::test_react[invoice-sendr]@2" in problem
    assert f"closest task ids: {TASK}" in problem
    assert "x.py::other" not in problem
    assert unknown_task(Plan(Target(TASK, 2), 4), marked, []) is None


def test_an_unmarked_test_is_named_as_such() -> None:
    problem = unknown_task(Plan(Target("t.py::test_plain", 1), 2), ["t.py::test_marked"], ["t.py::test_plain"])
    assert problem is not None and "is not a @pytest.mark.repeat_consistency task" in problem


def test_close_ids_prefer_the_same_function() -> None:
    known = ["t.py::f[a]", "t.py::f[b]", "t.py::g"]
    assert sorted(close_ids("t.py::f[zzzzzz]", known)[:2]) == ["t.py::f[a]", "t.py::f[b]"]


def test_ranges() -> None:
    plan = Plan(Target(TASK, 4), 4, source=6)
    assert source_problem(plan, 6) is None
    problem = source_problem(plan, 5)
    assert problem == (f"--consistency-resample-from=6: {TASK} has 5 repetition(s); choose a repetition from 1 to 5")
    assert step_problem(plan, 4, "c.yaml") is None
    problem = step_problem(plan, 3, "c.yaml")
    assert problem is not None and "step 4 is out of range" in problem and "made 3 model call(s)" in problem
    assert "STEP is 1 to 3" in problem
    problem = step_problem(plan, 0, "c.yaml")
    assert problem is not None and "holds no recorded model call" in problem


def test_an_unknown_task_with_nothing_close_lists_the_marked_tasks_collected() -> None:
    """Not "no marked task was collected" when some were: the ids to choose from, the first five of them."""
    marked = [f"t.py::test_{name}" for name in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta")]
    problem = unknown_task(Plan(Target("billing", 1), 2), marked, [])
    assert problem is not None
    assert problem.endswith(
        "; none is close; the marked tasks collected: t.py::test_alpha, t.py::test_beta, t.py::test_gamma, "
        "t.py::test_delta, t.py::test_epsilon (and 2 more)"
    )
    assert (
        known_ids("billing", marked[:2])
        == "none is close; the marked tasks collected: t.py::test_alpha, t.py::test_beta"
    )
    assert known_ids("billing", []).startswith("no marked task was collected")
