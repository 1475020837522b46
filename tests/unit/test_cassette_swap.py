"""``cassettes.Swap`` has ``mock.patch.object``'s effect: the same attributes in place and put back."""

from __future__ import annotations

import types
from unittest import mock

import pytest

from pytest_consistency.cassettes import Swap


class Base:
    inherited = "base"


class Child(Base):
    local = "child"


def state(target: object) -> tuple[object, ...]:
    names = ("local", "inherited", "missing")
    return tuple(vars(target).get(n, "<absent>") for n in names) + tuple(getattr(target, n, "<none>") for n in names)


@pytest.mark.parametrize("attribute", ["local", "inherited"])
def test_swap_puts_the_same_attributes_in_place_and_back_as_mock(attribute: str) -> None:
    seen = []
    for patcher in (mock.patch.object(Child, attribute, "new"), Swap(mock.patch.object(Child, attribute, "new"))):
        before = state(Child)
        with patcher as new:
            seen.append((new, state(Child)))
        assert state(Child) == before
    assert seen[0] == seen[1]
    assert "inherited" not in vars(Child)  # an inherited attribute is deleted again, not copied onto the class


def test_swap_on_a_module_attribute_and_a_missing_one() -> None:
    module = types.ModuleType("m")
    module.value = 1  # type: ignore[attr-defined]
    with Swap(mock.patch.object(module, "value", 2)):
        assert module.value == 2  # type: ignore[attr-defined]
    assert module.value == 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError), Swap(mock.patch.object(Child, "missing", 3)):
        pass
    assert "missing" not in vars(Child)


def test_swap_can_be_entered_again_after_leaving() -> None:
    swap = Swap(mock.patch.object(Child, "local", "new"))
    for _ in range(3):
        with swap:
            assert Child.local == "new"
        assert Child.local == "child"
