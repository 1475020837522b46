"""What only a session with repeated tasks needs: a repetition's scope around its fixtures and the refusals it
turns into failures or skips (a role, registered by name), and what each report carries (``state.outcome``). Made
when collection finds a marked test (``Collection.pytest_collection_finish``), so that a session of unmarked tests
never loads the repetition machinery; ``configure.roles`` registers the rest when the session is configured."""

from __future__ import annotations

import pytest

from pytest_consistency.plugin.lifecycle import RepetitionScope
from pytest_consistency.plugin.outcome import Outcome
from pytest_consistency.plugin.state import STATE

NAME = "consistency-repetition-scope"


def register(config: pytest.Config) -> None:
    """Register the repetition's scope once per session (each xdist worker registers its own), and make the
    repetitions' reports carry their payload (``state.outcome``: the reports' wrapper calls it)."""
    manager = config.pluginmanager
    if manager.has_plugin(NAME):
        return
    state = config.stash[STATE]
    state.outcome = Outcome(state)
    manager.register(RepetitionScope(state), NAME)
