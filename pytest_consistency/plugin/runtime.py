"""The roles only a session with repeated tasks needs: a repetition's scope around its fixtures, the refusals it
turns into failures or skips, and what each report carries. Registered by name when collection finds a marked
test (``Collection.pytest_collection_finish``), so that a session of unmarked tests never loads the repetition
machinery; ``configure.roles`` registers the rest when the session is configured."""

from __future__ import annotations

import pytest

from pytest_consistency.plugin.lifecycle import RepetitionScope
from pytest_consistency.plugin.outcome import Outcome
from pytest_consistency.plugin.state import STATE

NAMES = ("consistency-repetition-scope", "consistency-outcome")


def register(config: pytest.Config) -> None:
    """Register the repetition roles once per session (each xdist worker registers its own)."""
    manager = config.pluginmanager
    if manager.has_plugin(NAMES[0]):
        return
    state = config.stash[STATE]
    for name, role in zip(NAMES, (RepetitionScope(state), Outcome(state)), strict=True):
        manager.register(role, name)
