"""Extension points of pytest-consistency, implemented from conftest.py or a plugin.

Every hook is ``firstresult``: the first implementation that returns something other than ``None`` wins, and
the plugin's own implementation (registered first, so called last) provides the documented default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_consistency.model.result import SessionSummary
    from pytest_consistency.report.protocol import Format
    from pytest_consistency.route.providers import Provider


@pytest.hookspec(firstresult=True)
def pytest_consistency_normalize_answer(answer: Any, task_id: str) -> Any:
    """Return the normalised form of one recorded answer before answers are compared.

    Runs in the process that ran the repetition (an xdist worker, or the main process), right after the
    test recorded it, so it may live in any conftest.py. The result must be JSON-serialisable. The default
    strips strings and collapses whitespace, recursively through dicts and lists.

    Return ``None`` to defer to the next implementation; to normalise an answer *to* ``None``, return a
    sentinel of your own that your equivalence hook understands.
    """


@pytest.hookspec(firstresult=True)
def pytest_consistency_answers_equivalent(left: Any, right: Any, task_id: str) -> bool | None:
    """Say whether two normalised answers of one task count as the same answer.

    Runs at the end of the session in the controlling process, after all repetitions are in. Under
    pytest-xdist the controller only loads the conftest.py files at or above the paths given on the command
    line (and ``rootdir``), so put this hook there or in a plugin; the plugin warns when a worker sees an
    implementation the controller lacks. The default compares canonical JSON (sorted keys). Examples:
    a numeric tolerance, set semantics for lists, or a semantic comparison with an embedding model.
    """


@pytest.hookspec(firstresult=True)
def pytest_consistency_normalize_request(body: Any, url: str) -> Any:
    """Return the request body as a replay should compare it, or None to leave it as it is.

    Runs on both sides of every comparison (the recorded request and the one sent now), after the
    ``--consistency-match-ignore`` rules, on the body as JSON (or text when it is not JSON), already redacted.
    For what a rule cannot say: drop a tool result that embeds the current time, sort a list whose order is random.
    """


@pytest.hookspec(firstresult=True)
def pytest_consistency_report_format(name: str, config: pytest.Config) -> Format | None:
    """Return the renderer of the report format called ``name`` (a :class:`pytest_consistency.report.protocol.Format`).

    Called in the controlling process for every output the session writes: ``markdown`` (``--consistency-md`` and
    the GitHub step summary), ``html`` (``--consistency-html``) and the NAME of ``--consistency-output NAME=FILE``.
    The plugin's own implementation (trylast) returns the built-in format of that name; return an object with
    ``name``, ``suffix`` and ``render(summary) -> str`` to replace a built-in or to add a format of your own.
    """


@pytest.hookspec()
def pytest_consistency_summary(summary: SessionSummary, config: pytest.Config) -> None:
    """Receive the computed session summary before it is printed and written.

    Called once, in the controlling process, after the gates and verdicts (a session mode's figures included) and
    before any output is written. Use it to push the figures to a dashboard; the summary must not be modified. A
    hook that raises is an error of the run, which fails it and which every output names.
    """


@pytest.hookspec(firstresult=True)
def pytest_consistency_provider(name: str, config: pytest.Config) -> Provider | None:
    """Return the provider called ``name`` (see :class:`pytest_consistency.route.providers.Provider`).

    Called once per route at configuration (``openai``, ``anthropic``), in every process. The plugin's own
    implementation (trylast) returns the built-in provider of that name; return an object with the Provider
    attributes and methods to replace one, e.g. to build the client of another SDK that speaks the same API.
    """
