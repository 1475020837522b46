"""The typed settings: one attribute per option of the table, with the table's defaults."""

from __future__ import annotations

import typing
from dataclasses import fields

import pytest

from pytest_consistency.config import settings as settings_module
from pytest_consistency.config.options import OPTIONS
from pytest_consistency.config.settings import Settings
from pytest_consistency.model import result

META = {"sources", "config_file", "bases"}


def test_one_attribute_per_option() -> None:
    attributes = {f.name for f in fields(Settings)} - META
    assert attributes == {option.dest for option in OPTIONS}


def test_each_default_is_the_tables() -> None:
    settings = Settings()
    for option in OPTIONS:
        expected = option.default in (True, "true") if option.is_flag else option.default
        if option.negation is not None:  # a flag that can be switched off stays None until set (on by default where
            expected = option.default  # the session says: the suite-level test with a baseline)
        assert settings.value(option.dest) == expected, option.dest


def test_a_choice_is_typed_with_exactly_its_choices() -> None:
    """mypy checks a comparison with a choice's value: its Literal lists the choices the option accepts."""
    hints = typing.get_type_hints(Settings, {**vars(result), **vars(settings_module)})
    checked = 0
    for option in OPTIONS:
        name = option.parse.__name__  # choice() names its parser "one of a/b/c"
        if option.is_flag or not name.startswith("one of "):
            continue
        assert set(typing.get_args(hints[option.dest])) == set(name.removeprefix("one of ").split("/")), option.dest
        checked += 1
    assert checked >= 6  # interval target, gate on, inconclusive, test, cassette format, record


def test_an_unknown_option_is_refused_by_name() -> None:
    with pytest.raises(KeyError, match="consistency_gap_maximum"):
        Settings().value("consistency_gap_maximum")
