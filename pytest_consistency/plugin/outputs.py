"""The session's outputs, each written once from the finished summary: the JSON report (``--consistency-report``),
Markdown, HTML, ``--consistency-output NAME=FILE``, the GitHub step summary; then pytest's ``--junitxml`` file
annotated, and the traces exported.

Two steps, so that an output that cannot be written is known before any is (:func:`prepare`): every format is found,
every destination checked (its folder made, not a folder itself, a file can be created in it) and every text rendered
from the redacted summary, at the exit status the run has so far; an output that fails there is an error naming
itself, which fails the run, and the others are rendered again saying so. Then :func:`write` writes each text once.
What fails only while a checked file is written (a full disk) is an error too, in the exit status, the terminal and
the outputs written after it (the JSON report is the last file written, the step summary, appended to, after it).
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.config.options import CoreOptions
from pytest_consistency.config.parse import absolute_path
from pytest_consistency.config.settings import Settings
from pytest_consistency.model.result import SessionSummary
from pytest_consistency.plugin.redaction import known_secrets
from pytest_consistency.plugin.state import STATE, PluginState
from pytest_consistency.report import BUILTIN, UnknownFormat
from pytest_consistency.secrets.literals import redact_text
from pytest_consistency.secrets.structures import redact_strings

#: Where the GitHub step summary goes (appended to: other steps of the job write there too).
STEP_SUMMARY = "$GITHUB_STEP_SUMMARY"
#: The option of the JSON report, which the outputs tell from a ``--consistency-output json=FILE``.
REPORT = CoreOptions.report.flag


@dataclass(slots=True)
class Output:
    """One output asked for: its format, the option that asked, its file, and its text once rendered."""

    name: str
    option: str
    path: Path
    text: str | None = None


def outputs(settings: Settings) -> list[Output]:
    """Every output asked for, in the order they are written: the other formats, the JSON report, the step summary."""
    wanted = []
    for option, name in ((CoreOptions.md, "markdown"), (CoreOptions.html, "html")):
        path = settings.path(option.name)
        if path is not None:
            wanted.append(Output(name, option.flag, path))
    other = settings.output
    if other is not None:
        name, _, file = other.partition("=")
        path = absolute_path(file, settings.bases.get("output"))
        wanted.append(Output(name, "--consistency-output", path))
    report = settings.path("report")
    if report is not None:
        wanted.append(Output("json", REPORT, report))
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary and not settings.no_md:
        wanted.append(Output("markdown", STEP_SUMMARY, Path(step_summary)))
    return wanted


def prepare(
    config: pytest.Config, summary: SessionSummary, state: PluginState, decide: Callable[[], None]
) -> list[Output]:
    """Every output asked for that can be written, rendered: its format found, its destination checked, its text
    rendered at the exit status the summary has. An output that fails is an error (and is left out); then ``decide``
    gives the summary its exit status again and the others are rendered again, so that each says so."""
    pending = outputs(state.settings)
    while True:
        before = len(summary.errors)
        # One redacted copy for every format of the round, made when one asks: at 10,000 tasks it is not cheap.
        redacted = functools.cache(lambda: SessionSummary.from_dict(redacted_report(summary, state)))
        pending = [output for output in pending if render(config, summary, state, output, redacted)]
        if len(summary.errors) == before:
            return pending
        decide()  # an output that failed fails the run: the others are rendered again, saying so


def render(
    config: pytest.Config,
    summary: SessionSummary,
    state: PluginState,
    output: Output,
    redacted: Callable[[], SessionSummary],
) -> bool:
    """Render ``output`` from the redacted summary, its destination checked; False (and an error) when it cannot be
    written."""
    try:
        check_destination(output)
        if output.option == REPORT:
            output.text = report_text(summary, state)
        else:
            # From a redacted copy, so each format escapes the redaction marker like any other text; then the text is
            # redacted again, for whatever a format added of its own.
            fmt = config.hook.pytest_consistency_report_format(name=output.name, config=config)
            if fmt is None:
                raise UnknownFormat(
                    f"no report format {output.name!r} (built in: {', '.join(BUILTIN)}; others come from a "
                    "pytest_consistency_report_format hook)"
                )
            output.text = redact_text(fmt.render(redacted()), known_secrets(state))
    except Exception as exc:
        failed(summary, state, output, exc)
        return False
    return True


def check_destination(output: Output) -> None:
    """Raise what writing ``output`` would raise for its place: its folder cannot be made, it is a folder, no file
    can be created beside it (the atomic write's temporary file), or the step summary cannot be appended to."""
    path = output.path
    if output.option == STEP_SUMMARY:
        with path.open("a", encoding="utf-8"):
            return
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.unlink(probe)


def write(summary: SessionSummary, state: PluginState, pending: list[Output], decide: Callable[[], None]) -> None:
    """Write each rendered output once. A write that fails now (its destination passed the check) is an error: the
    exit status is decided again, and the JSON report, written after the other files, is rendered again with it."""
    if not pending:  # the writer loads only for a session that writes
        return
    from pytest_consistency.report.json_report import write_text_atomic

    stale = False
    for output in pending:
        try:
            if stale and output.option == REPORT:
                output.text = report_text(summary, state)
            if output.option == STEP_SUMMARY:  # appended: other steps of the job write there too
                with output.path.open("a", encoding="utf-8") as handle:
                    handle.write(output.text or "")
            else:
                write_text_atomic(output.path, output.text or "")
        except Exception as exc:
            failed(summary, state, output, exc)
            decide()
            stale = True
        else:
            if output.option == REPORT:
                state.report_path = str(output.path)
            else:
                state.written.append(f"{output.name}: {output.path}")


def report_text(summary: SessionSummary, state: PluginState) -> str:
    """The JSON report's text: the redacted report data, laid out."""
    from pytest_consistency.report.json_layout import layout  # only for a session that writes its report

    return layout(redacted_report(summary, state)) + "\n"


def failed(summary: SessionSummary, state: PluginState, output: Output, exc: Exception) -> None:
    """``output`` cannot be written: an error naming the option, the file and why."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
    if output.option == REPORT:
        if isinstance(exc, (ValueError, TypeError)):
            reason = str(exc)
        error = f"cannot write the report to {output.path} ({reason}); choose a writable path with --consistency-report"
        state.report_path = None
    else:
        error = f"{output.option}: cannot write the {output.name} output to {output.path} ({reason})"
    if error not in summary.errors:
        summary.errors.append(error)


def redacted_report(summary: SessionSummary, state: PluginState) -> dict[str, Any]:
    """The report's data with every secret redacted, computed once for the JSON report and every other output.

    Only ``errors`` and the exit status change once the verdict is decided (an output that cannot be written, a hook
    that raised), so the data is computed again only when they did; at 10,000 tasks x 10 redaction is the costliest
    step of the end.
    """
    errors = tuple(summary.errors)
    key = (*errors, f"exit status {summary.exit_status}")  # errors and the status they settle change together
    if state.redacted is None or state.redacted[0] != key:
        state.redacted = (key, redact_strings(summary.to_dict(), known_secrets(state)))
    return state.redacted[1]


def export_traces(summary: SessionSummary, state: PluginState) -> None:
    """``--consistency-otel``: the session's spans to the collector, from the redacted result every output renders;
    whatever happens is one line, never a change of the verdict (the collector is not part of the run)."""
    from pytest_consistency.report.otlp import export_session

    try:
        redacted = SessionSummary.from_dict(redacted_report(summary, state))
        line = export_session(redacted, known_secrets(state), state.settings.otel_content)
    except Exception as exc:  # an SDK that cannot encode a span: say so, as for a collector that is down
        line = f"otel: the spans could not be exported ({type(exc).__name__}: {exc})"
    state.otel_line = redact_text(line, known_secrets(state))


def annotate_junit(config: pytest.Config) -> None:
    """Rewrite pytest's ``--junitxml`` file with the consistency properties; a failure is an error naming itself."""
    state = config.stash[STATE]
    xmlpath = getattr(config.option, "xmlpath", None)
    summary = state.summary
    if not xmlpath or summary is None or not summary.tasks:
        return
    path = Path(xmlpath).expanduser().absolute()
    try:
        from pytest_consistency.report import junit

        junit.annotate(path, summary, known_secrets(state))
    except Exception as exc:
        summary.errors.append(
            f"--junitxml: cannot add the consistency properties to {path} ({type(exc).__name__}: {exc})"
        )
