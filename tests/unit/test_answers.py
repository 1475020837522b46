from __future__ import annotations

from pytest_consistency.answers import MISSING, default_equivalent, default_normalize, distinct_classes


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
