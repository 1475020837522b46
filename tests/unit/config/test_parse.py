"""The parsers of one option value: what they accept, and a refusal that says how to write the value."""

from __future__ import annotations

import pytest

from pytest_consistency.config.parse import SettingError, Target, cause_limits, parse_rule, parse_target

TASK = "examples/test_react_tasks.py::test_react[invoice-sender]"


@pytest.mark.parametrize("bad", ["", "messages..content", "re:", "re:("])
def test_a_bad_rule_says_how_to_write_one(bad: str) -> None:
    with pytest.raises(SettingError):
        parse_rule(bad)


def test_task_at_step() -> None:
    assert parse_target(f"{TASK}@2") == Target(TASK, 2)
    assert str(parse_target(f" {TASK} @ 3 ")) == f"{TASK}@3"
    # The last "@" separates them: an id may hold one.
    assert parse_target("t.py::f[a@b]@4") == Target("t.py::f[a@b]", 4)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (TASK, "is not TASK@STEP"),
        ("@2", "is not TASK@STEP"),
        (f"{TASK}@", "must be a whole number of at least 1, not ''"),
        (f"{TASK}@0", "must be a whole number of at least 1, not '0'"),
        (f"{TASK}@two", "not 'two'"),
        (f"{TASK}@-1", "not '-1'"),
    ],
)
def test_bad_targets(raw: str, message: str) -> None:
    with pytest.raises(SettingError, match=message):
        parse_target(raw)


@pytest.mark.parametrize(
    ("raw", "limits"),
    [
        ("input=0", (("input", 0.0),)),
        (["route=0", "sampling=12.5"], (("route", 0.0), ("sampling", 12.5))),
        ({"input": 0, "outside_the_model": 3}, (("input", 0.0), ("outside the model", 3.0))),
        ("outside the model=3\nenvironment=1", (("outside the model", 3.0), ("environment", 1.0))),
    ],
)
def test_cause_limits_read_every_form(raw: object, limits: tuple[tuple[str, float], ...]) -> None:
    assert cause_limits(raw) == limits


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("inpt=0", "'inpt' is not a cause; the causes are route, input, environment, sampling, outside the model"),
        ("input", "is not CAUSE=PP"),
        ("input=120", "input=120: "),
        (["sampling=x"], "sampling=x: "),
        (5, "is not CAUSE=PP"),
    ],
)
def test_cause_limits_name_what_is_wrong(raw: object, says: str) -> None:
    with pytest.raises(SettingError, match=None) as error:
        cause_limits(raw)
    assert says in str(error.value)
