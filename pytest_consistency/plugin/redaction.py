"""The secrets a session knows, gathered where they are seen and carried to the process that writes the outputs.

Every output (the JSON report, the HTML page, the Markdown summary, the JUnit XML, the terminal, pytest's own
failure text) is redacted with the same list: every route's key and the variables it may come from
(``OPENAI_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, ``ANTHROPIC_API_KEY``, a configured one), and every credential a
repetition sent on the wire (a gateway's ``helicone-auth: Bearer ...``, a basic-auth password, a query key, a form's
``client_secret``). Those are seen by the process that ran the repetition; under xdist that is a worker, so each
worker hands its list to the controller when it finishes (``workeroutput``, in memory: never in a report, where
``pytest-reportlog`` would write it).

A failing repetition's text is redacted in the process that ran it, before pytest prints, serialises or writes it
(see ``failure_text``): the worker knows what it sent, the controller only receives the redacted report.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import pytest_consistency.cassette.rescrub as late_secrets
from pytest_consistency.plugin.carried import WORKER_KEY, from_repetition, has_text
from pytest_consistency.plugin.failure_text import redact_junit, redact_report, redact_stats
from pytest_consistency.plugin.state import STATE, is_worker
from pytest_consistency.secrets.keys import REPLAY_KEY, is_placeholder
from pytest_consistency.secrets.literals import redactor

if TYPE_CHECKING:
    from pytest_consistency.plugin.state import PluginState
    from pytest_consistency.route.providers import Provider
    from pytest_consistency.route.route import Route


def is_secret_value(value: str | None) -> bool:
    """A value worth redacting: not empty, not our own replay placeholder, not a documentation placeholder."""
    return bool(value and value.strip()) and value != REPLAY_KEY and not is_placeholder(str(value))


def route_secrets(routes: Iterable[Route], providers: Mapping[str, Provider], env: Mapping[str, str]) -> list[str]:
    """Every route's key, and the value of every variable a key of its provider may come from (replay-only mode
    uses none of them, but a CI job may still export a real one)."""
    found: list[str] = []
    for route in routes:
        if route.api_key and not route.replay_only:
            found.append(route.api_key)
        provider = providers.get(route.provider)
        names = {route.key_env, *(provider.key_envs if provider is not None else ())}
        for name in sorted(names):
            value = env.get(name)
            if value:
                found += [value, value.strip()]
    return sorted({value for value in found if is_secret_value(value)})


def known_secrets(state: PluginState) -> list[str]:
    """The secrets of this process: the routes' keys and every credential seen on the wire (with xdist, the
    controller's list includes each finished worker's)."""
    return sorted(set(route_secrets(state.routes.values(), state.providers, os.environ)) | state.seen_secrets)


def remember(state: PluginState, secrets: Iterable[str]) -> None:
    state.seen_secrets.update(value for value in secrets if is_secret_value(value))


class SecretsHooks:
    """Gathers the credentials each repetition sent, redacts every report before pytest uses it, carries the
    worker's secrets to the controller, and at the session's end redacts what was written before a secret was
    known (``late_secrets``)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.state = config.stash[STATE]
        self.routes: list[str] | None = None
        #: The list this process first redacted text with (the shortest: it only grows), and, on the controller,
        #: each worker's.
        self.first: frozenset[str] | None = None
        self.workers_first: list[frozenset[str]] = []
        #: The cassettes this session wrote, with what each was scanned for (on the controller, every worker's too).
        self.written: late_secrets.Written | None = None
        #: A worker went down without handing over its list: the repetitions' cassettes are looked at instead.
        self.lost_worker = False
        self.started: float | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Every test's report, redacted before anything reads its text: pytest's terminal and JUnit, xdist's worker
        sending it, a plugin (all plain or later ``logreport`` hooks), and a retry plugin that logs a report itself.

        At ``logreport``, not around ``makereport``: what every ``makereport`` wrapper made of the report is there
        (the replay-mismatch text too), and a plain hook costs pluggy a third of a wrapper (issue 30: three reports a
        repetition). The credentials a repetition sent are remembered before (``outcome.Outcome``). On the
        controller a worker's report is redacted again, with the controller's list."""
        if has_text(report):  # most reports have none: a passing phase with nothing captured
            # A repetition's text gets credential shapes redacted too; any other test's only the session's secrets.
            redact_report(report, self.redactor(shapes=from_repetition(report)))

    @pytest.hookimpl(tryfirst=True)
    def pytest_warning_recorded(self, warning_message: Any) -> None:
        """A warning's text, before the terminal's summary (or xdist, for the controller's) reads it."""
        redact = self.redactor(shapes=False)
        message = warning_message.message
        if isinstance(message, str):
            warning_message.message = redact(message)
        elif isinstance(message, Warning) and any(isinstance(arg, str) for arg in message.args):
            message.args = tuple(redact(arg) if isinstance(arg, str) else arg for arg in message.args)

    def redactor(self, shapes: bool) -> Callable[[str], str]:
        state = self.state
        if self.routes is None:  # the routes never change during a session
            self.routes = route_secrets(state.routes.values(), state.providers, os.environ)
        secrets = [*self.routes, *state.seen_secrets]
        if self.first is None:
            self.first = frozenset(secrets)
        return redactor(secrets, shapes=shapes)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.started = time.time()
        self.written = late_secrets.open_session()

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, Any, Any]:
        """The innermost wrapper: before every implementation (the controller's summary among them), a worker hands
        over its lists and the controller rewrites the cassettes; after them all (pytest's JUnit file and the
        plugin's annotation of it written), but before pytest's terminal summary prints a report, the controller
        redacts pytest's text and JUnit's file with the complete list."""
        state = self.state
        written = self.written
        try:
            if is_worker(self.config):
                output = self.config.workeroutput  # type: ignore[attr-defined]
                output[WORKER_KEY] = sorted(state.seen_secrets)
                output[late_secrets.WRITTEN_KEY] = written.output() if written is not None else None
                output[late_secrets.FIRST_KEY] = None if self.first is None else sorted(self.first)
            else:
                self.rescrub_cassettes(session, state)
            return (yield)
        finally:
            if written is not None:
                late_secrets.close_session(written)
            if not is_worker(self.config):
                self.redact_text(session, state)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        remember(self.state, output.get(WORKER_KEY, ()))
        if WORKER_KEY not in output:
            self.lost_worker = True
        if self.written is not None:
            self.written.merge(output.get(late_secrets.WRITTEN_KEY))
        first = output.get(late_secrets.FIRST_KEY)
        if first is not None:
            self.workers_first.append(frozenset(first))

    def rescrub_cassettes(self, session: pytest.Session, state: PluginState) -> None:
        """Every cassette the session wrote, without the secrets learned after it was written; a file that cannot be
        made clean is removed, and its repetition is an infrastructure error (as a write refused for a secret)."""
        files = dict(self.written.files) if self.written is not None else {}
        if self.lost_worker:  # its list is lost: every repetition's cassette written since the session started
            files = {**self.recent_cassettes(session, state), **files}
        if not files:
            return
        problems = late_secrets.rescrub_cassettes(files, known_secrets(state))
        if not problems:
            return
        by_path = {
            self.cassette_path(rep.cassette): rep for rep in state.collector.repetitions.values() if rep.cassette
        }
        for path, reason in problems.items():
            rep = by_path.get(os.path.abspath(path))
            message = f"{REFUSED}: {path}: {reason}"
            if rep is not None and rep.infrastructure is None:
                rep.infrastructure = message

    def cassette_path(self, shown: str) -> str:
        return os.path.abspath(os.path.join(self.config.rootpath, shown))

    def recent_cassettes(self, session: pytest.Session, state: PluginState) -> dict[str, frozenset[str]]:
        started = self.started
        found: dict[str, frozenset[str]] = {}
        for rep in state.collector.repetitions.values():
            if not rep.cassette:
                continue
            path = self.cassette_path(rep.cassette)
            try:
                modified = os.stat(path).st_mtime
            except OSError:
                continue
            if started is None or modified >= started - 2:  # a coarse file system rounds times down
                found[path] = frozenset()
        return found

    def redact_text(self, session: pytest.Session, state: PluginState) -> None:
        """pytest's reports and warnings, and JUnit's file, without the secrets learned after their text was made."""
        first = [f for f in (self.first, *self.workers_first) if f is not None]
        missing = late_secrets.late(known_secrets(state), first)
        if not missing:
            return
        redact = redactor(missing, shapes=False)
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            redact_stats(reporter.stats, redact)
        junit = junit_path(self.config)
        if junit is not None:
            try:
                redact_junit(junit, redact)
            except OSError as exc:
                error = f"--junitxml: cannot redact {junit} ({exc.strerror or exc}); it may hold a secret: delete it"
                if state.summary is not None:
                    state.summary.errors.append(error)
                if session.exitstatus == pytest.ExitCode.OK:
                    session.exitstatus = pytest.ExitCode.TESTS_FAILED


#: The reason a repetition whose cassette could not be made clean at the session's end is the setup's failure.
REFUSED = "cassette write refused (it still held a secret)"


def junit_path(config: pytest.Config) -> Path | None:
    """The file pytest's ``--junitxml`` writes, as its LogXML resolved it."""
    try:
        from _pytest.junitxml import xml_key

        xml = config.stash.get(xml_key, None)
    except ImportError:  # pragma: no cover - pytest moved it: the option, as pytest resolves it
        xml = None
    logfile = getattr(xml, "logfile", None)
    if logfile:
        return Path(logfile)
    xmlpath = getattr(config.option, "xmlpath", None)
    return Path(xmlpath).expanduser().absolute() if xmlpath else None
