"""The resample session's role object (``--consistency-resample=TASK@STEP``), registered as ``consistency-resample``.

Why one object: resampling changes how many items the target task gets and which items run (collection), which
cassette a sample runs on and how it is held to its prefix (each sample's setup), what a replay mismatch means, and
what the session end adds; all of it is asked here, registered only when the mode is on (as the rejudge mode's
``plugin.rejudge``). The plugin's modules ask :attr:`~.state.PluginState.mode` (the :class:`~.state.SessionMode`
protocol), never whether this mode is on. The plan itself, read and checked at configure (so that its cost is said
in the header before any call), is the resample wing's :class:`~pytest_consistency.resample.session.ResampleSession`.

Only the target task runs, as M samples; every other item is deselected, so what the mode answers for a task it does
not cover (the marker's spec, the task's own cassette) is what the plugin does without a mode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.capture.active import ActiveRepetition
from pytest_consistency.config.marker import PARAM, MarkerSpec, repetition_id, task_id_of
from pytest_consistency.model.result import SessionSummary
from pytest_consistency.plugin.state import PluginState, Stop, is_worker, marker_of
from pytest_consistency.resample.plan import ResampleError
from pytest_consistency.resample.session import ResampleSession, attribute, configure

NAME = "consistency-resample"


class Resample:
    """The resample mode: its items and selection, each sample's cassette and prefix guard, its messages, its
    header and its distribution."""

    def __init__(self, config: pytest.Config, state: PluginState) -> None:
        self.state = state
        try:
            session = configure(state, config.rootpath)
        except ResampleError as exc:
            raise pytest.UsageError(str(exc)) from None
        assert session is not None  # registered only when --consistency-resample is given
        self.session: ResampleSession = session
        state.mode = self

    # --- the SessionMode protocol ----------------------------------------------------------------------------

    def repetitions(self, nodeid: str, n: int) -> int:
        return self.session.repetitions(nodeid, n)

    def repetition_id(self, index: int) -> str:
        return repetition_id(index)

    def spec(self, task_id: str, spec: MarkerSpec) -> MarkerSpec:
        return self.session.spec(spec) if self.session.covers(task_id) else spec

    def select(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Only the target task's samples run; a session that cannot run is refused before any call."""
        kept, dropped, problem = self.session.select(items, self.task_and_n)
        if problem is not None and not is_worker(config):
            raise pytest.UsageError(problem)
        if problem is not None:  # an xdist worker cannot stop the session: one item fails with the message
            kept, dropped = items[:1], items[1:]
            for item in kept:
                self.state.track(item).stop = ("fail", problem)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    def cassette(self, task_id: str, repeat: int, directory: Path) -> tuple[Path, str, Stop | None] | None:
        if not self.session.covers(task_id):
            return None
        path, mode = self.session.sample_scope(repeat)  # this repetition is sample ``repeat``
        return path, mode, None

    def replays_task_folder(self, task_id: str) -> bool:
        return not self.session.covers(task_id)

    def entered(self, active: ActiveRepetition) -> None:
        if self.session.covers(active.task_id):
            self.session.guard(active)

    def mismatch(self, active: ActiveRepetition) -> str | None:
        if not self.session.covers(active.task_id):
            return None
        return self.session.mismatch_message(active.repeat, active.calls)

    def fold(self, repetitions: list[Any]) -> list[Any]:
        return repetitions  # each sample is a repetition of the resampled step

    def summarise(self, summary: SessionSummary, repetitions: list[Any]) -> None:
        summary.resample = self.session.summarise(repetitions)
        attribute(summary.tasks, summary.resample)

    def task_and_n(self, item: pytest.Item) -> tuple[str, int, int] | None:
        """(task id, repetition, the n its marker asks for) of a marked repetition item; None for any other item."""
        callspec = getattr(item, "callspec", None)
        marker = marker_of(item)
        if marker is None or callspec is None or PARAM not in callspec.params:
            return None
        repeat = int(callspec.params[PARAM])
        return task_id_of(item.nodeid, repeat), repeat, self.state.spec(marker).n

    # --- pytest's hooks ----------------------------------------------------------------------------------------

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        """What is resampled, and what the live samples will cost, before anything is sent."""
        return self.session.header()


def register(config: pytest.Config, state: PluginState) -> None:
    """Register the resample role when ``--consistency-resample`` is given."""
    if state.settings.resample is not None:
        config.pluginmanager.register(Resample(config, state), NAME)
