"""What a session that never uses the plugin loads of it (issue 42), for the guards of ``tests/integration/costs``.

The plugin installed in a suite that does not use it (no option set, no credential variable, no step summary, no
hook of its own implemented, no test marked or naming its fixtures) sleeps (``plugin/dormant.py``): it loads its
entry point and hook declarations, the option table (the gates it declares options for, the value parsers, the
marker's limits, the statistics' names), the log filter, the fixtures and the role that waits for a reason to wake it;
and pytest's assertion rewriter compiles none of them but the package's ``__init__``, which pytest imports before any
of the plugin's code runs (its docstring says ``PYTEST_DONT_REWRITE``).
"""

from __future__ import annotations

import pytest

#: Every module of the plugin a sleeping session has loaded when it ends.
ASLEEP = [
    "pytest_consistency",
    "pytest_consistency.analysis",
    "pytest_consistency.analysis.gates",
    "pytest_consistency.config",
    "pytest_consistency.config.marker",
    "pytest_consistency.config.option",
    "pytest_consistency.config.options",
    "pytest_consistency.config.options_cost",
    "pytest_consistency.config.options_sequential",
    "pytest_consistency.config.parse",
    "pytest_consistency.plugin",
    "pytest_consistency.plugin.carried",
    "pytest_consistency.plugin.defaults",
    "pytest_consistency.plugin.dormant",
    "pytest_consistency.plugin.fixtures",
    "pytest_consistency.plugin.hookspecs",
    "pytest_consistency.plugin.logs",
    "pytest_consistency.stats",
    "pytest_consistency.stats.choices",
]
#: Its roles (the defaults of its own hooks, the fixtures, the dormant role).
ASLEEP_ROLES = ["consistency-defaults", "consistency-dormant", "consistency-fixtures"]
#: The one module pytest's assertion rewriter may load: the package's ``__init__`` when the plugin is installed from
#: a wheel (pytest marks an installed distribution's packages for rewriting); an editable install's is not marked.
REWRITTEN = frozenset({"pytest_consistency"})

#: A conftest: every process of the session (xdist's controller and each worker) writes, last, what of the plugin it
#: loaded, which of those modules pytest's assertion rewriter loaded, and which roles it registered.
PROBE = """
import json
import sys

import pytest
from _pytest.assertion.rewrite import AssertionRewritingHook


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    name = getattr(config, "workerinput", {}).get("workerid", "controller")
    modules = sorted(m for m in sys.modules if m.split(".")[0] == "pytest_consistency")
    rewritten = [m for m in modules if isinstance(getattr(sys.modules[m], "__loader__", None), AssertionRewritingHook)]
    roles = sorted(n for n, _ in config.pluginmanager.list_name_plugin() if n and n.startswith("consistency-"))
    with open(f"loaded-{name}.json", "w") as handle:
        json.dump({"modules": modules, "rewritten": rewritten, "roles": roles}, handle)
"""


def without_reasons_to_wake(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment of a user who exported no credential variable and writes no step summary."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
