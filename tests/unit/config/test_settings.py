"""The typed settings: one attribute per option of the table, declared there once, named without the prefix.

Nothing is declared twice any more, so nothing is kept in step; what can still go wrong is checked here: two options
of one name (the second would hide the first on ``Settings``), a name that is not the ``dest`` without its prefix, a
gate without its option, an option without a type or with a default its type does not allow, a choice typed with
other words than it accepts.
"""

from __future__ import annotations

import types
import typing
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from pytest_consistency.analysis.gates import GATES
from pytest_consistency.config import options as options_module
from pytest_consistency.config import parse
from pytest_consistency.config.option import PREFIX, Option, options_of
from pytest_consistency.config.options import BY_NAME, OPTIONS, GateOptions, Options
from pytest_consistency.config.settings import Settings, ini_entry
from pytest_consistency.model import result

#: What the annotations name (imported by the table for mypy only).
NAMESPACE = {**vars(typing), **vars(result), **vars(options_module), "ResampleTarget": parse.Target, "Path": Path}


def hints() -> dict[str, typing.Any]:
    """Each option's value type, read from its annotation ``Option[T]`` in its group."""
    found: dict[str, typing.Any] = {}
    for group in Options.__bases__:
        for name, hint in typing.get_type_hints(group, NAMESPACE).items():
            assert typing.get_origin(hint) is Option, f"{group.__name__}.{name}: {hint} is not Option[...]"
            (found[name],) = typing.get_args(hint)
    return found


def test_every_option_is_an_attribute_named_as_its_dest_without_the_prefix() -> None:
    assert len(BY_NAME) == len(OPTIONS), "two options share a name: the later group's would hide the earlier's"
    for option in OPTIONS:
        assert option.name == option.dest.removeprefix(PREFIX), option
        assert getattr(Settings, option.name) is option


def test_every_gate_has_its_option() -> None:
    gated = {option.dest for option in options_of(GateOptions)}
    assert [gate.dest for gate in GATES if gate.dest not in gated] == []


def test_every_option_is_typed_and_its_default_fits_its_type() -> None:
    """mypy reads an option's type from its annotation, never from its default (``default: Any``): so a default the
    type does not allow (None where it is not optional, a word outside a choice) would pass mypy; not this test."""
    typed = hints()
    assert set(typed) == set(BY_NAME)
    for option in OPTIONS:
        hint = typed[option.name]
        assert fits(option.unset, hint), f"{option.name}: default {option.unset!r} is not {hint}"


def fits(value: object, hint: typing.Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, arm) for arm in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is type(None):
        return value is None
    if origin is tuple:
        return isinstance(value, tuple)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, origin or hint)


def test_a_choice_is_typed_with_exactly_its_choices() -> None:
    """mypy checks a comparison with a choice's value: its Literal lists the choices the option accepts."""
    typed = hints()
    checked = 0
    for option in OPTIONS:
        name = option.parse.__name__  # choice() names its parser "one of a/b/c"
        if option.is_flag or not name.startswith("one of "):
            continue
        words = {arg for arm in [typed[option.name]] for arg in typing.get_args(arm)}
        assert words == set(name.removeprefix("one of ").split("/")), option.name
        checked += 1
    assert checked >= 6  # interval target, gate on, inconclusive, test, cassette format, record


def test_each_default_is_the_tables() -> None:
    settings = Settings()
    for option in OPTIONS:
        expected = option.default in (True, "true") if option.is_flag else option.default
        if option.negation is not None:  # a flag that can be switched off stays None until set (on by default where
            expected = option.default  # the session says: the suite-level test with a baseline)
        assert settings.value(option.name) == expected, option.name


def test_a_given_value_is_read_by_its_name_and_kept() -> None:
    settings = Settings(concurrency=3, record="all", gap_max=5.0, sources={"concurrency": "--consistency-concurrency"})
    assert (settings.concurrency, settings.record, settings.gap_max, settings.confidence) == (3, "all", 5.0, 0.95)
    assert settings.value("gap_max") == 5.0
    assert settings.sources == {"concurrency": "--consistency-concurrency"}
    with pytest.raises(FrozenInstanceError):
        settings.concurrency = 4  # type: ignore[misc]
    assert settings == settings and settings != Settings(concurrency=3)  # by identity


def test_an_unknown_option_is_refused_by_name() -> None:
    with pytest.raises(KeyError, match="gap_maximum"):
        Settings().value("gap_maximum")
    old = {"gap": "consistency_gap_max", "record": "consistency_record"}  # the old names are gone
    with pytest.raises(KeyError, match=old["gap"]):
        Settings().value(old["gap"])
    with pytest.raises(TypeError, match=old["record"]):
        Settings(**{old["record"]: "all"})


def test_every_ini_key_has_the_prefix_and_the_gates_keep_their_old_one() -> None:
    assert [option.ini for option in OPTIONS if not option.ini.startswith(PREFIX)] == []
    old = {option.old_ini: option.ini for option in OPTIONS if option.old_ini is not None}
    assert old == {
        "answer_disagreement_max": "consistency_answer_disagreement_max",
        "pass_hat_k_min": "consistency_pass_hat_k_min",
        "route_drift_max": "consistency_route_drift_max",
        "gap_increase_max": "consistency_gap_increase_max",
        "judge_flip_max": "consistency_judge_flip_max",
        "mcnemar_p_min": "consistency_mcnemar_p_min",
    }
    assert not set(old) & {option.ini for option in OPTIONS}


@pytest.mark.parametrize(
    ("ini", "expected"),
    [
        ({}, ("consistency_route_drift_max", None, None)),
        ({"consistency_route_drift_max": "2"}, ("consistency_route_drift_max", "2", None)),
        (
            {"route_drift_max": "3"},
            ("route_drift_max", "3", "the ini key route_drift_max is deprecated: use consistency_route_drift_max"),
        ),
        (
            {"consistency_route_drift_max": "2", "route_drift_max": "3"},
            (
                "consistency_route_drift_max",
                "2",
                "the ini keys consistency_route_drift_max and route_drift_max are both set: "
                "consistency_route_drift_max wins (route_drift_max is its deprecated spelling: remove it)",
            ),
        ),
        ({"consistency_route_drift_max": "2", "route_drift_max": ""}, ("consistency_route_drift_max", "2", None)),
    ],
)
def test_an_old_gate_ini_key_is_read_when_the_new_one_is_not_set(
    ini: dict[str, str], expected: tuple[str, str | None, str | None]
) -> None:
    key, raw, warning = ini_entry(BY_NAME["route_drift_max"], ini.get)
    assert (key, raw, warning) == expected


def test_an_option_without_an_old_key_reads_its_own_only() -> None:
    read: list[str] = []
    assert ini_entry(BY_NAME["gap_max"], lambda key: read.append(key)) == ("consistency_gap_max", None, None)
    assert read == ["consistency_gap_max"]
