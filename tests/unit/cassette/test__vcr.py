"""``_vcr.Swap`` has ``mock.patch.object``'s effect: the same attributes in place and put back."""

from __future__ import annotations

import types
from unittest import mock

import pytest

from pytest_consistency.cassette._vcr import Swap


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


class _Manager:
    """A context manager that logs its entry and exit, and may fail either."""

    def __init__(self, name: str, log: list[str], fail_enter: bool = False, fail_exit: bool = False) -> None:
        self.name, self.log, self.fail_enter, self.fail_exit = name, log, fail_enter, fail_exit

    def __enter__(self) -> None:
        if self.fail_enter:
            raise OSError(f"enter {self.name}")
        self.log.append(f"+{self.name}")

    def __exit__(self, *exc_info: object) -> None:
        self.log.append(f"-{self.name}")
        if self.fail_exit:
            raise OSError(f"exit {self.name}")


def _patches(managers: list[_Manager]) -> object:
    from pytest_consistency.cassette._vcr import Patches

    patches = Patches.__new__(Patches)  # the scope's logic alone, on managers that log instead of patching
    patches.switch = types.SimpleNamespace(__dict__={})
    patches.entered = patches.managers = managers
    return patches


def test_the_patches_are_left_last_first_even_when_one_cannot_be_entered() -> None:
    log: list[str] = []
    patches = _patches([_Manager("a", log), _Manager("b", log), _Manager("c", log, fail_enter=True)])
    with pytest.raises(OSError, match="enter c"), patches.applied(None):  # type: ignore[attr-defined]
        pytest.fail("the body must not run")
    assert log == ["+a", "+b", "-b", "-a"]


def test_every_patch_is_left_when_one_fails_to_leave_and_the_first_error_is_raised() -> None:
    log: list[str] = []
    patches = _patches([_Manager("a", log, fail_exit=True), _Manager("b", log), _Manager("c", log, fail_exit=True)])
    with pytest.raises(OSError, match="exit c"), patches.applied(None):  # type: ignore[attr-defined]
        log.append("body")
    assert log == ["+a", "+b", "+c", "body", "-c", "-b", "-a"]


def test_an_error_in_the_body_leaves_every_patch_and_is_the_one_raised() -> None:
    log: list[str] = []
    patches = _patches([_Manager("a", log), _Manager("b", log)])
    with pytest.raises(KeyError, match="body"), patches.applied(None):  # type: ignore[attr-defined]
        raise KeyError("body")
    assert log == ["+a", "+b", "-b", "-a"]


def test_prepared_patches_go_stale_when_another_library_patches_what_they_replace(tmp_path: object) -> None:
    """``Patches.fresh`` compares each patched attribute with what it was at build time (targets read once)."""
    import httpx2
    from vcr.cassette import Cassette

    from pytest_consistency.cassette._vcr import Patches

    patches = Patches(Cassette(str(tmp_path) + "/rep-1.yaml", record_mode="none"))
    assert patches.fresh()
    targets = [(t, a) for t, a, _ in patches.checks if t is httpx2.HTTPTransport]
    assert targets, "vcrpy patches httpx2's transport"
    target, attribute = targets[0]
    original = getattr(target, attribute)
    setattr(target, attribute, lambda self, request: None)  # another library's patch, put in between
    try:
        assert not patches.fresh()
    finally:
        setattr(target, attribute, original)
    assert patches.fresh()
