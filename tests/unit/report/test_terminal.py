"""The terminal's task table at CI-log widths: ids are never cut into ambiguity."""

from __future__ import annotations

from suites import records

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.report.terminal import display_ids, render, wrapped

TWO_TESTS = [
    "examples/test_agent_tasks.py::test_pinned[invoice-sender]",
    "examples/test_agent_tasks.py::test_sampled[invoice-sender]",
]


def test_ids_that_fit_are_shown_whole() -> None:
    assert display_ids(["t.py::test_a", "t.py::test_b"], 40) == ["t.py::test_a", "t.py::test_b"]


def test_long_ids_drop_their_common_file_before_anything_else() -> None:
    assert display_ids(TWO_TESTS, 30) == ["test_pinned[invoice-sender]", "test_sampled[invoice-sender]"]


def test_ids_that_do_not_fit_even_shortened_wrap_rather_than_cut() -> None:
    names = display_ids(TWO_TESTS, 10)
    assert names == ["test_pinned[invoice-sender]", "test_sampled[invoice-sender]"]
    assert len(set(names)) == 2 and not any("…" in name for name in names)


def test_a_shortened_form_that_two_files_share_is_never_chosen() -> None:
    ids = ["a/test_x.py::test_task[one]", "b/test_x.py::test_task[one]"]
    assert display_ids(ids, 12) == ids  # only the whole id tells them apart: it wraps


LONG = "TestClass::test_a_task_with_a_really_quite_long_name_indeed[x]"


def test_ids_that_do_not_fit_beside_the_figures_stand_on_lines_of_their_own() -> None:
    reps = records({"x": "PP"})
    for rep in reps:
        rep.task_id = rep.nodeid = f"tests/agent/test_long_module_name.py::{LONG}"
    lines = [line.text for line in render(build_summary(reps), 0, 80)]
    assert lines[0] == "task" and lines[2] == LONG
    assert lines[3].split() == ["2/2", "-", "[15.8,", "100.0]", "pass"]


def test_the_table_at_80_columns_keeps_two_tests_apart() -> None:
    reps = records({"x": "PP", "y": "PP"})
    for rep, task_id in zip(reps, [TWO_TESTS[0]] * 2 + [TWO_TESTS[1]] * 2, strict=True):
        rep.task_id = task_id
        rep.nodeid = task_id
    lines = [line.text for line in render(build_summary(reps), 0, 80)]
    rows = [line for line in lines if "invoice-sender" in line]
    assert any("test_pinned[invoice-sender]" in row for row in rows)
    assert any("test_sampled[invoice-sender]" in row for row in rows)
    assert all(len(line) <= 80 for line in lines if line)


def test_a_wrapped_line_never_breaks_inside_a_command_or_an_id() -> None:
    command = "`pytest-consistency resample 'test_tau_retail.py::test_tau_retail[retail-test-10]@2'`"
    text = f"advice, sampling: 1 task(s), 40.0 pp of the gap; pin sampling, or look where it parts: {command}"
    for width in (40, 60, 80, 100):
        lines = wrapped(text, width)
        assert " ".join(line.strip() for line in lines) == text
        assert any(command in line for line in lines), lines


def test_a_routes_own_clients_are_those_of_its_role() -> None:
    """The agent's route says its own clients keep the SDK's limits only when the agent built one; a judge's own
    client (inside ``consistency.judging()``) is the judge route's."""
    from types import SimpleNamespace

    from pytest_consistency.model.records import CallRecord
    from pytest_consistency.model.result import RouteSettings
    from pytest_consistency.report.terminal import own_clients_called

    judge_call = CallRecord(
        "POST", "http://j/v1/chat/completions", "http://j/v1", None, "m", pinned=False, role="judge"
    )
    tasks = [SimpleNamespace(repetitions=[SimpleNamespace(calls=[judge_call])])]
    agent = RouteSettings("http://a/v1", "m", None, "OPENAI_API_KEY", False, 60.0, 1, None, None, 1)
    judge = RouteSettings("http://j/v1", "m", None, "OPENAI_API_KEY", False, 60.0, 1, None, None, 1, role="judge")
    assert not own_clients_called(agent, tasks)  # type: ignore[arg-type]
    assert own_clients_called(judge, tasks)  # type: ignore[arg-type]
