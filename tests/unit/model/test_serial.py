"""``serial.check_values``: what JSON holds but the report model cannot use, refused by the field's path."""

from __future__ import annotations

import json

import pytest

from pytest_consistency.model.serial import ReportFormatError, check_values


def test_a_number_beyond_a_float_is_named_by_its_path() -> None:
    data = json.loads('{"tasks": [{"gap_pp": 1.5}, {"gap_pp": 1e400}]}')
    with pytest.raises(ReportFormatError, match=r"^r\.json\.tasks\[1\]\.gap_pp: a number beyond the range of a float"):
        check_values(data, "r.json", 10)
    with pytest.raises(ReportFormatError, match=r"^r\.json\.x\[0\]: .*\(read as -inf\)"):
        check_values(json.loads('{"x": [-1e999]}'), "r.json", 10)


def test_nesting_is_counted_from_the_top_and_refused_past_the_limit() -> None:
    value: object = 0
    for _ in range(3):
        value = [value]
    check_values({"a": value}, "r", 4)  # the object, then three lists: 4 levels
    with pytest.raises(ReportFormatError, match=r"^r\.a\[0\]\[0\]: nested more than 3 levels deep"):
        check_values({"a": value}, "r", 3)


def test_a_value_deeper_than_the_recursion_limit_is_refused_without_recursion() -> None:
    value: object = []
    for _ in range(50_000):
        value = [value]
    with pytest.raises(ReportFormatError, match=r"^r(\[0\]){12}\.\.\.: nested more than 105 levels deep"):
        check_values(value, "r", 105)


def test_finite_numbers_strings_and_flat_data_pass() -> None:
    check_values({"a": [1, 2.5, "caf\udcff", None, True, {"b": -0.0}]}, "r", 3)
