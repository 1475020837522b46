"""A repetition's report: the payload each phase carries to the controller (:class:`Outcome`), with why it
failed: an infrastructure reason (the setup's failure, never the agent's) or the failure's first line, redacted.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Generator
from typing import Any, Literal

import pytest

from pytest_consistency.analysis.infrastructure import (
    STAND_IN_REASON,
    UNREACHABLE_ADVICE,
    call_reason,
    exception_reason,
    unreachable_reason,
)
from pytest_consistency.capture.active import ActiveRepetition, refusals, take_refusals
from pytest_consistency.cassette import paths
from pytest_consistency.plugin.carried import ATTRIBUTE, HANDLE, MARKED
from pytest_consistency.plugin.lifecycle import cassette_folder, display_path, replayed_folder
from pytest_consistency.plugin.payload import adds_nothing, payload, phase_outcome, sent
from pytest_consistency.plugin.redaction import remember
from pytest_consistency.plugin.state import PluginState, Tracked, is_worker
from pytest_consistency.secrets.literals import redact_text


class Outcome:
    """What a repetition's report carries to the controller: its outcome, answer, calls and why it failed (the
    setup's failure or the agent's). Registered as ``consistency-outcome``."""

    def __init__(self, state: PluginState) -> None:
        self.state = state
        #: Whether this process is where every report arrives (a payload may then stay a dict: ``payload``).
        self.in_process: bool | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        report = yield
        state = self.state
        tracked = state.items.get(item)
        refused = take_refusals() if refusals else ()  # the stand-in key, refused during this phase
        if tracked is None or tracked.active is None or tracked.spec is None:
            if refused and not report.failed:  # not a repetition: the test phase itself fails, naming the refusal
                report.outcome = "failed"
                report.longrepr = "\n".join(refused)
        if tracked is None or tracked.active is None:
            return report
        active, spec = tracked.active, tracked.spec
        if active.secrets:  # before anything logs the report (``redaction.SecretsHooks`` redacts it there)
            remember(state, active.secrets)
        if spec is None:  # an unmarked test's handle: its text is a repetition's (credential shapes redacted too)
            setattr(report, HANDLE, True)
            return report
        infrastructure = message = None
        failed = report.outcome == "failed"  # (the attribute, not the property: a call less per phase)
        if active.curtailed and state.settings.sequential and isinstance(report.longrepr, tuple):
            message = report.longrepr[2].removeprefix("Skipped: ")  # why it was not needed (or not recorded)
        if report.when == "call" and not failed:
            # A replay mismatch or a refused call the agent caught: the repetition passed on something the setup
            # could not answer, so it is still the setup's failure, never a pass.
            infrastructure = call_reason(active.calls)
        if failed:
            raised = call.excinfo.value if call.excinfo else None
            infrastructure = exception_reason(raised, active.replaying, active.stand_in) or call_reason(active.calls)
            message = failure_message(call, report, state)
            cassettes = sys.modules.get("pytest_consistency.cassette.messages")  # loaded by any cassette's error
            if (
                cassettes is not None
                and call.excinfo is not None
                and call.excinfo.errisinstance(cassettes.CassetteError)
            ):
                if item.config.get_verbosity() <= 0:  # its message names the file and the fix: the plugin's frames
                    report.longrepr = f"{call.excinfo.typename}: {call.excinfo.value}\n(-v shows the traceback)"
            if infrastructure is None and not active.replaying:
                infrastructure = unreachable_reason(active.calls)  # the route, not the agent: no figure
                if infrastructure is not None and item.config.get_verbosity() <= 0:  # the SDK's tracebacks, folded
                    report.longrepr = f"{infrastructure}; {UNREACHABLE_ADVICE} (-v shows the traceback)"
            expected = call.excinfo is not None and call.excinfo.errisinstance((AssertionError, pytest.fail.Exception))
            if not expected and not state.settings.record_on_exception:
                active.broken = True  # an unfinished trajectory: its recording is dropped
            mismatched = active.cassette and any(c.error == "replay_mismatch" for c in active.calls)
            if mismatched:  # only a replay loaded the cassette modules
                messages = importlib.import_module("pytest_consistency.cassette.messages")
                mismatched = call.excinfo is None or not call.excinfo.errisinstance(messages.CassetteError)
            if mismatched and first_recording(state, tracked, active, item):
                message = unrecorded(state, item, active, report, messages)
                infrastructure = message if report.failed else None
            elif mismatched:
                report.longrepr = messages.mismatch_message(
                    item.nodeid,
                    active.repeat,
                    active.cassette,
                    tracked.existed,
                    active.calls,
                    other_format_shown(item, tracked, active),
                ) + (f"\n\nThe test then failed with: {_first_line(call.excinfo)}" if call.excinfo else "")
                if state.mode is not None:
                    prefix = state.mode.mismatch(active)
                    report.longrepr = report.longrepr if prefix is None else f"{prefix}\n\n{report.longrepr}"
        if report.when == "call" and not failed and spec.score_min is not None:
            short = score_short(active.score, spec.score_min)
            if short is not None:  # graded: the score decides, as an assertion would (the recording is kept)
                report.outcome, report.longrepr, message = "failed", short, short
        if refused and not (infrastructure or "").startswith(STAND_IN_REASON):
            # The stand-in key refused (a request, a child), whatever the agent did with the error.
            infrastructure = f"{STAND_IN_REASON}: {refused[0].splitlines()[0][:300]}"
        if state.board is not None and active.marked:
            outcome = board_outcome(report, active.curtailed)
            if outcome is not None:
                state.board.record(active.task_id, item.nodeid, outcome, active.repeat)
        if state.equivalence_plugins is None:  # conftests register before the first test runs
            hook = item.config.hook.pytest_consistency_answers_equivalent
            state.equivalence_plugins = [impl.plugin_name for impl in hook.get_hookimpls()]
        if report.when == "call":
            note_attempt(tracked, active, report, message)
        if adds_nothing(report, active):
            setattr(report, MARKED, True)
        else:
            # The hook's implementers travel once per process (the controller keeps every worker's), the collected
            # totals with them.
            first = not state.equivalence_sent
            plugins, state.equivalence_sent = (state.equivalence_plugins if first else []), True
            if self.in_process is None:
                self.in_process = not is_worker(item.config)
            totals = state.totals if first else None
            data = payload(active, spec, tracked.order, plugins, infrastructure, message, self.in_process, totals)
            setattr(report, ATTRIBUTE, data)
            if report.when == "call":
                sent(active)
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(self, config: pytest.Config, report: Any) -> Generator[None, Any, Any]:
        """A report serialised in the process that made it (pytest-reportlog, a CI uploader: xdist's workers send
        JSON text already) carries the payload as its JSON text, not the object a serial session keeps."""
        data = yield
        if isinstance(data, dict):
            kept = data.get(ATTRIBUTE)
            if kept is not None and not isinstance(kept, str):
                data[ATTRIBUTE] = kept.to_json()
        return data


def score_short(score: float | None, score_min: float) -> str | None:
    """Why a repetition that passed its assertions fails its marker's ``score_min``; None when its score reaches it."""
    if score is None:
        return (
            f"no score: the marker's score_min={score_min:g} decides by consistency.score(x), which this repetition "
            "never called"
        )
    if score < score_min:
        return f"score {score:g} < score_min {score_min:g}"
    return None


def first_recording(state: PluginState, tracked: Tracked, active: ActiveRepetition, item: pytest.Item) -> bool:
    """Whether a replay mismatch is a task's first run: replaying, and its task has no cassette at all (no folder, or
    none in it); a cassette missing among recorded ones stays the infrastructure error it is."""
    folder = None if tracked.existed else replayed_folder(state, active.task_id, item)
    if folder is None:
        return False
    return not folder.present or not any(paths.cassette_exists(path) for path in folder.directory.glob("rep-*"))


def unrecorded(
    state: PluginState, item: pytest.Item, active: ActiveRepetition, report: pytest.TestReport, messages: Any
) -> str:
    """A first run's repetition: one line saying how to record its task, with the key variable its route reads, in
    place of the mismatch and the SDK's traceback. Off CI (as pytest tells, ``CI`` or ``BUILD_NUMBER``) the
    repetition is skipped, which is no failure and no figure; on CI the missing recording is the setup's failure.
    Returns the line."""
    first = next(c for c in active.calls if c.error == "replay_mismatch")
    route = next((r for r in state.routes.values() if r.provider == first.provider), None)
    key_env = route.key_env if route is not None else "OPENAI_API_KEY"
    folder = cassette_folder(state, active.task_id, item).prefix
    line: str = messages.not_recorded_message(active.task_id, folder, key_env)
    if any(os.environ.get(name) for name in ("CI", "BUILD_NUMBER")):  # pytest's own test (``running_on_ci``)
        report.longrepr = line
        return line
    report.outcome = "skipped"
    lineno = item.location[1]
    report.longrepr = (str(item.path), 0 if lineno is None else lineno + 1, f"Skipped: {line}")
    return line


def board_outcome(report: pytest.TestReport, curtailed: bool) -> Literal["pass", "fail", "skip"] | None:
    """A repetition's outcome for the adaptive board, from the phase that decides it (None: not decided here)."""
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.skipped:
            return "fail" if xfail else "skip"
        return "pass" if report.passed else "fail"
    if report.when == "setup" and (report.failed or (report.skipped and xfail)):
        return "fail"
    if report.when == "setup" and report.skipped and not curtailed:
        return "skip"
    return None


def other_format_shown(item: pytest.Item, tracked: Tracked, active: ActiveRepetition) -> str | None:
    """A missing cassette's file in the other format (``--consistency-cassette-format``), as shown, when it is there:
    looked up only when a request found no cassette, not in every repetition's setup."""
    if tracked.existed or not active.cassette:
        return None
    other = paths.other_format(item.config.rootpath / active.cassette)
    return None if other is None else display_path(other, item.config.rootpath)


def failure_message(call: pytest.CallInfo[None], report: pytest.TestReport, state: PluginState) -> str:
    """Why the repetition failed, in one line, with every key this process knows redacted: it travels with the
    repetition into the report, JUnit, Markdown and the HTML page, where a CI reviewer reads it."""
    if call.excinfo is not None:
        text = _first_line(call.excinfo)
    else:
        lines = str(report.longreprtext).strip().splitlines()
        text = lines[-1][:300] if lines else report.when + " failed"
    secrets = [r.api_key for r in state.routes.values() if r.api_key and not r.replay_only]
    return redact_text(text, secrets)


def note_attempt(tracked: Tracked, active: ActiveRepetition, report: pytest.TestReport, message: str | None) -> None:
    """Count the call phases of this repetition: a retry plugin (flaky, pytest-retry, pytest-rerunfailures) runs it
    again in the same protocol. The first attempt's outcome and answer are kept: a failure that passes on retry
    is the inconsistency being measured."""
    tracked.attempts += 1
    attempts = active.attempts = tracked.attempts
    if attempts == 1:
        active.first_attempt = (
            phase_outcome(report),
            active.answer_recorded,
            active.answer,
            active.normalized,
            message,
        )


def _first_line(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """The exception in one line; vcrpy's own message (advice about options that do not exist here) is left out."""
    if type(excinfo.value).__name__ == "CannotOverwriteExistingCassetteException":
        return "no recorded response (vcrpy's CannotOverwriteExistingCassetteException)"
    lines = excinfo.exconly().splitlines()
    return lines[0][:300] if lines else excinfo.typename
