from __future__ import annotations

import pytest

from pytest_consistency.analysis.answers import (
    MISSING,
    check_answer,
    default_equivalent,
    default_normalize,
    distinct_classes,
)


def test_strings_are_stripped_and_whitespace_collapsed() -> None:
    assert default_normalize("  widget,\n  gadget\t ") == "widget, gadget"


def test_dicts_compare_canonically_and_nested_values_normalise() -> None:
    left = default_normalize({"b": [" x "], "a": 1})
    right = default_normalize({"a": 1, "b": ["x"]})
    assert default_equivalent(left, right)
    assert not default_equivalent(left, {"a": 1, "b": ["y"]})


def test_classes_group_equivalent_answers_and_missing_ones() -> None:
    answers = [(True, "a"), (True, "b"), (True, "a"), (False, MISSING), (False, MISSING)]
    assert distinct_classes(answers, default_equivalent) == [[0, 2], [1], [3, 4]]


def test_missing_answer_never_equals_a_recorded_one_even_with_the_same_text() -> None:
    assert len(distinct_classes([(True, MISSING), (False, MISSING)], default_equivalent)) == 2


def test_custom_tolerance_is_used() -> None:
    def close(a: float, b: float) -> bool:
        return abs(a - b) <= 0.1

    assert distinct_classes([(True, 1.0), (True, 1.05), (True, 2.0)], close) == [[0, 1], [2]]


@pytest.mark.parametrize("value", ["x", "", "\ud800", 0, -(2**63), 2**63 - 1, 1.5, -0.0, True, False, None])
def test_a_plain_scalar_is_one_the_full_checks_accept(value: object) -> None:
    import json

    from pytest_consistency.analysis.answers import plain_scalar

    assert plain_scalar(value)
    check_answer(value)
    json.dumps(value, allow_nan=False)


class _Text(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        -float("inf"),
        2**63,
        -(2**63) - 1,
        pytest.param(10**5000, id="10**5000"),
        _Text("x"),
        [],
        {},
        ("x",),
        b"x",
        1j,
    ],
)
def test_anything_else_is_left_to_the_full_checks(value: object) -> None:
    from pytest_consistency.analysis.answers import plain_scalar

    assert not plain_scalar(value)
