"""The session end (``plugin.finish``): the cyclic collector paused around its work (``gc_paused``)."""

from __future__ import annotations

import gc

import pytest

from pytest_consistency.plugin.finish import gc_paused


def test_the_collector_is_off_inside_and_as_it_was_after() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the user's choice is kept
    finally:
        gc.enable()
    with pytest.raises(KeyError), gc_paused():
        raise KeyError("x")
    assert gc.isenabled()
