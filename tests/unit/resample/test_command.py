"""The bisection command's reading of a probe session's usage error: said in the command's terms (TASK, --from)."""

from __future__ import annotations

from pytest_consistency.resample.command import refusal

TASK = "t.py::test_react"


def test_an_unknown_task_is_named_as_the_commands_task_argument() -> None:
    stderr = (
        "some warning\n"
        f"ERROR: --consistency-resample={TASK}x@1: no marked task '{TASK}x' was collected (TASK is the task id as "
        f"the report prints it); the closest task ids: {TASK}\n"
    )
    assert refusal(stderr, f"{TASK}x", 1, 1) == (
        f"TASK: no marked task '{TASK}x' was collected (TASK is the task id as the report prints it); the closest "
        f"task ids: {TASK}"
    )


def test_an_unmarked_test_is_about_task_too() -> None:
    stderr = (
        "ERROR: --consistency-resample=t.py::plain@1: t.py::plain is not a @pytest.mark.repeat_consistency task (x)"
    )
    assert refusal(stderr, "t.py::plain", 1, 1) == "TASK: t.py::plain is not a @pytest.mark.repeat_consistency task (x)"


def test_a_repetition_beyond_n_is_named_as_from() -> None:
    stderr = f"ERROR: --consistency-resample-from=4: {TASK} has 3 repetition(s); choose a repetition from 1 to 3"
    assert refusal(stderr, TASK, 1, 4) == f"--from 4: {TASK} has 3 repetition(s); choose a repetition from 1 to 3"


def test_any_other_usage_error_is_said_as_the_probe_s() -> None:
    stderr = f"ERROR: --consistency-resample={TASK}@2: 2 of 2 sample(s) have no cassette under c and must be sampled"
    assert refusal(stderr, TASK, 2, 1) == (
        f"step 2: the resample session exited 4 (a usage error): --consistency-resample={TASK}@2: 2 of 2 sample(s) "
        "have no cassette under c and must be sampled"
    )
    assert refusal("ERROR: file or directory not found: nowhere", TASK, 1, 1) == (
        "step 1: the resample session exited 4 (a usage error): file or directory not found: nowhere"
    )
    assert refusal("no error line at all", TASK, 1, 1) is None
