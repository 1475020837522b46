"""pytest-consistency's pytest11 entry point: a table of contents.

Importing it loads only the hook declarations (``hookspecs``). Each hook below delegates. A session that never uses
the plugin registers its options and, at configure, the marker's line, the fixtures and the role that waits for a
reason to wake the plugin (``dormant``): that is all it loads. Everything else the plugin does is a role object
registered by name when the plugin wakes (``configure.roles``, as pytest-xdist registers its own):

- ``consistency-defaults``: the default implementations of the plugin's own hooks (``defaults``), in every session;
- ``consistency-fixtures``: ``consistency`` and the route-pinned clients (``fixtures``), in every session;
- ``consistency-dormant``: until the plugin wakes, what makes it wake (``dormant``);
- ``consistency-collection``: one item per repetition, shards, the routes the tests use (``collection``);
- ``consistency-repetition-scope``: a repetition's cassette, network block and observer around its fixtures, and
  the repetitions it refuses or curtails (``lifecycle``);
- ``consistency-outcome``: what each report carries to the controller (``outcome``);
- ``consistency-secrets``: every credential redacted from pytest's own text and the outputs (``redaction``);
- ``consistency-logs``: the same on every handler of pytest's logging plugin, from the first record (``logs``);
- ``consistency-controller`` and ``consistency-junit``, where every report arrives: collect, summarise, gate,
  print and write (``controller``, ``finish``); ``consistency-tolerance``, registered by the controller at the first
  failed report, tells pytest which failures a task's verdict tolerates (``controller``).
"""

from __future__ import annotations

import pytest

from pytest_consistency.plugin import hookspecs


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_consistency.plugin import defaults

    pluginmanager.add_hookspecs(hookspecs)
    pluginmanager.register(defaults, defaults.DEFAULTS)


def pytest_addoption(parser: pytest.Parser) -> None:
    from pytest_consistency.plugin.dormant import add_options

    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """pytest's logs redacted from the first record of the session, a conftest's import included (``logs``)."""
    from pytest_consistency.plugin.logs import install

    install(early_config)


def pytest_configure(config: pytest.Config) -> None:
    from pytest_consistency.plugin.dormant import configure

    configure(config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    from pytest_consistency.plugin import dormant

    if not dormant.woken(config):  # a resample session sets its option: the plugin woke at configure
        return dormant.report_header(config)
    from pytest_consistency.plugin.configure import report_header

    return report_header(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    from pytest_consistency.plugin.dormant import unconfigure

    unconfigure(config)
