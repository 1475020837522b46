"""The live status line: where a session of repeated tasks is, on the terminal, while it runs (issue 42, item 6).

pytest's progress is a letter per test. A session of repeated agent tasks making live calls can run for many minutes
with nothing else said, so while it runs on a terminal the line pytest is filling ends with where the session is::

    test_agent.py .......    task 3/12, repetition 2/5, 14 calls, 5,210 tokens, $0.0312, 1m 02s, about 2m 30s left

after pytest's own text, never in it: drawn when a hook that writes to the terminal has run (a test's start, each of
its reports, its end) and taken away before the next one runs (overwritten with spaces, the cursor moved back to
where pytest left it), with ``write_raw``, so that pytest's count of the line's width is its own; only what fits
before the right edge and pytest's percentage is drawn (the last fields first left out). The counts are the
session's so far (the dollars at the session's price table, once a call was priced or a test added a cost; ``at
least`` while a call used tokens of a model with no price: :mod:`..model.prices`), the estimate of the time left is
the time since the first repetition started / the repetitions done x the repetitions left (``about``: a repetition
takes as long as the ones before it), the totals the selection's as collected (``state.totals``, carried to the
controller by each process's first payload: ``payload.payload``).

Registered as ``consistency-status`` by the controller (``Controller``) at the first report of a marked repetition,
in the process where every report arrives (xdist's controller counts from the reports its workers send), when pytest
writes to a terminal at the default verbosity: not with ``-q``, not with ``-v`` (a line per test, with its own
progress), not when the output is not a TTY, and not with ``-s`` or live logging, which write to the terminal while
a test runs.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_consistency.plugin.carried import marked_repetition

if TYPE_CHECKING:
    from pytest_consistency.plugin.state import PluginState

NAME = "consistency-status"
#: Columns kept free at the right edge: pytest's percentage (`` [100%]``, or `` [123/456]``) and a margin.
RESERVED = 14
#: Columns between pytest's text and the status.
GAP = "    "
#: The fields left out first when the line is short (the task and the repetition stay, or nothing is drawn).
LEFT_OUT = ("tokens", "calls", "dollars", "elapsed", "left")


def wanted(config: pytest.Config) -> bool:
    """Whether this session's terminal shows the status line (see the module docstring)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return (
        reporter is not None
        and bool(reporter.isatty)
        and config.get_verbosity() == 0
        and config.getoption("capture", "fd") != "no"
        and not config.getini("log_cli")
    )


def register(config: pytest.Config, state: PluginState) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not config.pluginmanager.has_plugin(NAME):
        config.pluginmanager.register(StatusLine(state, reporter), NAME)


def duration(seconds: float) -> str:
    """``12s``, ``1m 02s``, ``1h 03m``."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"


class StatusLine:
    """The status line of one session (see the module docstring). Registered as ``consistency-status``."""

    def __init__(self, state: PluginState, reporter: Any) -> None:
        self.state = state
        self.reporter = reporter
        #: Columns drawn to the right of pytest's cursor (0: nothing on the screen), and the width pytest counted for
        #: its line then: a line pytest wrote on since (its percentage, filled to the right edge) covered the status.
        self.shown = 0
        self.at = 0
        self.closed = False
        #: Each task's number, in the order tasks first finished a repetition.
        self.tasks: dict[str, int] = {}
        #: The repetitions settled so far (their call phase reported, or a setup that did not pass).
        self.done: set[str] = set()
        #: Calls and tokens counted per repetition (a teardown's payload may add a call), and their sums.
        self.counted: dict[str, tuple[int, int]] = {}
        self.calls = 0
        self.tokens = 0
        #: Per repetition, its dollars so far and its calls with no price (summed exactly when drawn).
        self.dollars: dict[str, tuple[float, int]] = {}
        self.prices: Any = None
        #: When the first repetition started (its setup report's ``start``).
        self.started: float | None = None
        #: The fields of the line by name, in the order shown, once a repetition has finished.
        self.fields: dict[str, str] = {}

    # --- what is shown ---------------------------------------------------------------------------------------

    def note(self, report: pytest.TestReport) -> None:
        """Count a marked repetition's report (its collector record is up to date: the controller adds it first)."""
        if not marked_repetition(report):
            return
        if self.started is None:
            self.started = getattr(report, "start", None) or time.time()
        nodeid = report.nodeid
        rep = self.state.collector.repetitions.get(nodeid)
        if rep is None:  # a setup that passed: its repetition counts once its call phase reports
            return
        number = self.tasks.setdefault(rep.task_id, len(self.tasks) + 1)
        calls, tokens = len(rep.calls), sum(call.total_tokens or 0 for call in rep.calls)
        before = self.counted.get(nodeid, (0, 0))
        self.counted[nodeid] = (calls, tokens)
        self.calls += calls - before[0]
        self.tokens += tokens - before[1]
        if report.when == "call" or report.outcome != "passed":
            self.done.add(nodeid)
        self.dollars[nodeid] = self.priced(rep)
        totals = self.state.collector.totals
        elapsed = time.time() - self.started
        self.fields = {
            "task": f"task {number}/{totals[0]}" if totals else f"task {number}",
            "repetition": f"repetition {rep.repeat}/{rep.n}",
            "calls": f"{self.calls:,} call{'' if self.calls == 1 else 's'}",
            "tokens": f"{self.tokens:,} tokens",
        }
        dollars = self.dollars_text()
        if dollars is not None:
            self.fields["dollars"] = dollars
        self.fields["elapsed"] = duration(elapsed)
        left = totals[1] - len(self.done) if totals else 0
        if left > 0 and self.done:
            self.fields["left"] = f"about {duration(elapsed / len(self.done) * left)} left"

    def priced(self, rep: Any) -> tuple[float, int]:
        """A repetition's dollars so far (its calls at the session's price table, and what its test added) and its
        calls with no price: the figures the summary adds up at the end (:mod:`..analysis.cost`)."""
        from pytest_consistency.model.prices import call_cost, price_table, total

        if self.prices is None:
            self.prices = price_table(self.state.settings.prices)
        costs = [call_cost(call, self.prices) for call in rep.calls]
        usd = total([*(cost for cost in costs if cost is not None), rep.added_cost_usd])
        return usd, sum(1 for cost in costs if cost is None)

    def dollars_text(self) -> str | None:
        """``$0.0312``, ``at least $0.0312`` while a call has no price, or None before anything was priced."""
        from pytest_consistency.model.prices import total, usd_text

        usd = total(usd for usd, _ in self.dollars.values())
        unpriced = sum(missing for _, missing in self.dollars.values())
        if not usd and (unpriced or not any(tokens for _, tokens in self.counted.values())):
            return None
        return f"at least {usd_text(usd)}" if unpriced else usd_text(usd)

    def fitted(self, room: int) -> str:
        """The fields that fit in ``room`` columns, in their order: the tokens left out first, then the calls, the
        dollars, the elapsed time and the time left; the task and the repetition always (or nothing)."""
        fields = dict(self.fields)
        for name in (None, *LEFT_OUT):
            if name is not None:
                fields.pop(name, None)
            text = ", ".join(fields.values())
            if fields and len(GAP) + len(text) <= room:
                return text
        return ""

    # --- the screen ------------------------------------------------------------------------------------------

    def raw(self, text: str) -> None:
        """Write past pytest's bookkeeping of the current line (pytest 9.2's ``write_raw``; the writer's file else)."""
        writer = self.reporter._tw
        write = getattr(writer, "write_raw", None)
        if write is not None:
            write(text, flush=True)
        else:  # pragma: no cover - pytest 8
            writer._file.write(text)
            writer.flush()

    def draw(self) -> None:
        if self.closed or self.shown:
            return
        writer = self.reporter._tw
        text = self.fitted(writer.fullwidth - writer.width_of_current_line - RESERVED)
        if not text:
            return
        shown = GAP + text
        self.raw(writer.markup(shown, cyan=True) + "\b" * len(shown))
        self.shown, self.at = len(shown), writer.width_of_current_line

    def erase(self) -> None:
        if self.shown and self.reporter._tw.width_of_current_line == self.at:
            self.raw(" " * self.shown + "\b" * self.shown)
        self.shown = 0

    # --- around every hook where pytest writes a test's progress -------------------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logstart(self) -> Generator[None, Any, Any]:
        self.erase()
        result = yield
        self.draw()
        return result

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, Any, Any]:
        self.erase()
        result = yield
        self.note(report)
        self.draw()
        return result

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logfinish(self) -> Generator[None, Any, Any]:
        self.erase()
        result = yield
        self.draw()
        return result

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self.erase()
        self.closed = True

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self) -> None:
        self.erase()
        self.closed = True

    @pytest.hookimpl(tryfirst=True)
    def pytest_internalerror(self) -> None:
        self.erase()
        self.closed = True
