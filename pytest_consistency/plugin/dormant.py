"""The plugin before a session needs it: a session that never uses the plugin pays for its options and little else.

Every pytest start with the plugin installed registers its options (:func:`add_options`), puts the log filter on
Python's last-resort handler (``logs.install``) and, at ``pytest_configure``, registers the marker's line of
``--markers`` and the fixtures (``consistency``, the pinned clients: any test may ask for them). Everything else the
plugin does waits until the session needs it; then the plugin *wakes* (:func:`wake`): it resolves and checks its
settings, resolves the routes and their providers, opens the shared limits and registers its roles
(``configure``), as every session did from its start before issue 42. It wakes:

- at ``pytest_configure``, when one of its options is set (on the command line, in the ini file, with ``-o``; the
  YAML file is one), ``consistency.yaml`` is in rootdir (read without an option naming it), a credential variable
  is set (its value is redacted from every test's text: ``logs.EARLY_VARIABLES``), ``GITHUB_STEP_SUMMARY`` is set
  (the summary is written there), or a plugin or conftest implements one of the plugin's own hooks (``hookspecs``)
  (:func:`needed`);
- during collection, at the first test function that is marked (its repetitions are made at
  ``pytest_generate_tests``); when collection ends, if a test is marked or names ``consistency`` or a route fixture
  (``fixtures.WAKING``), or a conftest collected on the way set a credential variable or implements a hook;
- when a test asks for one of the plugin's fixtures by name (``request.getfixturevalue``);
- in a process that receives reports (xdist's controller above all, which collects nothing): at the first report of
  a repetition or of a test with the handle (``carried``), at the end of a worker that woke, and at a report or
  warning with text while a credential variable is set (a test set it).

Until then :class:`Dormant` (``consistency-dormant``) watches for these and keeps what the roles would have kept of
the session (``carried.Kept``); when the plugin wakes, its roles get what it kept (``configure.catch_up``) and the
hook call that woke it (:meth:`Dormant.wake`), and the dormant role is unregistered. A session the plugin sleeps
through behaves as one it woke for at the start and found nothing to do in: nothing to redact, nothing to
summarise, nothing printed or written; ``tests/support/asleep.py`` lists what it loads. One difference is left: a
credential variable a test itself exports reaches pytest's log handlers unfiltered until that test's first report
with text wakes the plugin (awake from the start, their filter read the variables at its first record, so it missed
such a variable too whenever a record came first; the reports and warnings are redacted either way).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.config.marker import MARKER, MARKER_DOC
from pytest_consistency.config.option import Option
from pytest_consistency.config.options import BY_DEST, CONFIG_FILE, HELP_GROUPS, OPTIONS
from pytest_consistency.config.parse import absolute_path, argparse_type
from pytest_consistency.plugin import carried, fixtures, hookspecs
from pytest_consistency.plugin.defaults import DEFAULTS
from pytest_consistency.plugin.logs import EARLY_VARIABLES

NAME = "consistency-dormant"
#: Set once the plugin woke in this session (``configure`` ran, or is running).
WOKEN: pytest.StashKey[bool] = pytest.StashKey()
#: The plugin's own hooks: an implementation other than the defaults is a reason to wake.
HOOKS = tuple(name for name in vars(hookspecs) if name.startswith("pytest_consistency_"))


def add_options(parser: pytest.Parser) -> None:
    """``pytest_addoption``: every option of the table (``config.options``) registered with pytest, its flag (and
    ``--no-`` twin) and its ini key."""
    for title, options in HELP_GROUPS:
        group = parser.getgroup(
            f"consistency: {title}" if title else "consistency",
            f"repeated-task consistency (pytest-consistency): {title}" if title else "repeated-task consistency",
        )
        add_group(group, parser, options)


def add_group(group: Any, parser: pytest.Parser, options: tuple[Option[Any], ...]) -> None:
    """Register ``options`` in ``group`` of ``pytest --help``: each flag (and ``--no-`` twin) and its ini key."""
    for option in options:
        if option.is_list:
            group.addoption(
                option.flag,
                action="append",
                dest=option.dest,
                default=None,
                type=argparse_type(option.parse, option.metavar),
                metavar=option.metavar,
                help=option.help,
            )
        elif option.is_flag:  # and its --no- twin, when it has one
            forms = [(option.flag, True, option.help)]
            if option.negation is not None:
                forms.append((option.negation, False, f"switch {option.flag} off"))
            for flag, const, words in forms:
                group.addoption(flag, action="store_const", const=const, dest=option.dest, default=None, help=words)
        else:
            group.addoption(
                option.flag,
                dest=option.dest,
                default=None,
                type=argparse_type(option.parse, option.metavar),
                metavar=option.metavar,
                help=option.help,
            )
        parser.addini(option.ini, f"{option.help} (twin of {option.flag})", type="string", default=None)
        if option.old_ini is not None:  # a gate's key before every key had the prefix: still read, with a warning
            parser.addini(option.old_ini, f"deprecated: use {option.ini}", type="string", default=None)


def configure(config: pytest.Config) -> None:
    """``pytest_configure``: the marker's line and the fixtures in every session; the plugin awake at once when the
    session asks for it (:func:`needed`), else the dormant role."""
    config.addinivalue_line("markers", MARKER_DOC)
    config.pluginmanager.register(fixtures.Fixtures.for_config(config, wake), fixtures.NAME)
    if needed(config):
        wake(config)
    else:
        config.pluginmanager.register(Dormant(config), NAME)


def woken(config: pytest.Config) -> bool:
    return config.stash.get(WOKEN, False)


def wake(config: pytest.Config) -> None:
    """Wake the plugin (once): configure the session and register its roles (``configure``), handing them what the
    dormant role kept, and take the dormant role away."""
    if woken(config):
        return
    config.stash[WOKEN] = True
    dormant = config.pluginmanager.get_plugin(NAME)
    kept = None
    if isinstance(dormant, Dormant):  # the session started: every reason to wake after configure comes after it
        config.pluginmanager.unregister(dormant, NAME)
        kept = dormant.kept
        kept.session = config.pluginmanager.get_plugin("session")
    from pytest_consistency.plugin.configure import configure as configure_session

    configure_session(config, kept)


def unconfigure(config: pytest.Config) -> None:
    """``pytest_unconfigure``: the log filter off the last-resort handler; what ``configure`` opened, if it ran."""
    if woken(config):
        from pytest_consistency.plugin.configure import unconfigure as unconfigure_session

        unconfigure_session(config)
    else:
        from pytest_consistency.plugin.logs import uninstall

        uninstall(config)


def needed(config: pytest.Config) -> bool:
    """Whether the session needs the plugin from its start: one of its options set, a credential variable, the
    step summary, or an implementation of one of its hooks (the module docstring says why each)."""
    for option in OPTIONS:
        if config.getoption(option.dest, None) is not None or config.getini(option.ini) not in (None, ""):
            return True
        if option.old_ini is not None and config.getini(option.old_ini) not in (None, ""):
            return True
    if (config.rootpath / CONFIG_FILE).is_file():  # read without an option naming it (``settings.resolve``)
        return True
    return bool(os.environ.get("GITHUB_STEP_SUMMARY")) or found_later(config)


def report_header(config: pytest.Config) -> list[str]:
    """A session the plugin sleeps through read no YAML file (one in rootdir wakes it): said only with ``-v``, as
    ``configure.report_header`` says it when awake."""
    if config.get_verbosity() < 1:
        return []
    return [f"consistency: config none (no --consistency-config, no {CONFIG_FILE} in rootdir)"]


def found_later(config: pytest.Config) -> bool:
    """What a conftest collected after ``pytest_configure`` may bring too: a credential variable it set, an
    implementation of one of the plugin's hooks."""
    if credentials():
        return True
    for name in HOOKS:
        if any(impl.plugin_name != DEFAULTS for impl in getattr(config.hook, name).get_hookimpls()):
            return True
    return False


class Dormant:
    """The plugin's one role until it wakes (see the module docstring): it watches for a reason to wake and keeps
    what the roles would have kept of the session. Registered as ``consistency-dormant``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.kept = carried.Kept()
        self.kept.started = time.time()  # the session starts next (the secrets role's fallback looks 2 s further back)
        self.cassettes: str | None = None

    def wake(self, hook: str, **kwargs: Any) -> None:
        """Wake the plugin during the call of ``hook`` (pluggy called the implementations registered before the
        call), and make the call again to the roles registered since, in pluggy's order."""
        manager = self.config.pluginmanager
        before = manager.get_plugins()
        wake(self.config)
        manager.subset_hook_caller(hook, remove_plugins=before)(**kwargs)

    @pytest.hookimpl(trylast=True)
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """A marked test function: its repetitions are made now (``Collection``). Its keywords name its markers and
        its parents' (no walk up the parents for every function of a session that marks none)."""
        if MARKER in metafunc.definition.keywords:
            self.wake("pytest_generate_tests", metafunc=metafunc)

    @pytest.hookimpl(trylast=True)
    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        """The cassette directories' skip of pytest's walk (``Collection``; ``cassette.folders``), under the default
        cassette root: the module that decides loads only for a path inside it."""
        if self.cassettes is None:
            self.cassettes = str(absolute_path(BY_DEST["consistency_cassettes"].default, config.rootpath))
        if not str(collection_path).startswith(self.cassettes):
            return None
        from pytest_consistency.cassette import folders

        if folders.skip(collection_path, Path(self.cassettes), config, self.kept.cassette_dirs):
            return True
        return None

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.kept.collection_errors.add(report.nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            if MARKER in item.keywords or fixtures.WAKING.intersection(getattr(item, "fixturenames", ())):
                break
        else:
            if not found_later(self.config):
                return
        self.wake("pytest_collection_finish", session=session)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.outcome == "failed":
            self.kept.failed.add(report.nodeid)
        if carried.from_repetition(report) or (carried.has_text(report) and credentials()):
            self.wake("pytest_runtest_logreport", report=report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_warning_recorded(self, warning_message: Any, when: str, nodeid: str, location: Any) -> None:
        if credentials():
            self.wake(
                "pytest_warning_recorded", warning_message=warning_message, when=when, nodeid=nodeid, location=location
            )

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker that woke hands the controller its secrets and the cassettes it wrote."""
        if carried.WORKER_KEY in (getattr(node, "workeroutput", None) or {}):
            self.wake("pytest_testnodedown", node=node, error=error)


def credentials() -> bool:
    """Whether a variable an SDK reads its key from is set (the awake plugin redacts its value from every text)."""
    return any(os.environ.get(name) for name in EARLY_VARIABLES)
