"""pytest-consistency: repeat agent tasks, measure the consistency gap and route drift, gate CI on them.

The plugin itself registers through the ``pytest11`` entry point (``pytest_consistency.plugin``); these are the
names a test or conftest may want to import. They load on first use, so the ``pytest-consistency`` command (which
reads reports) imports neither pytest nor the HTTP stack.

PYTEST_DONT_REWRITE: none of the plugin's modules has an assertion for pytest to rewrite (see below).
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_consistency.capture.active import Consistency, ConsistencyWarning
    from pytest_consistency.capture.network import NetworkBlocked
    from pytest_consistency.cassette.messages import SecretInCassetteError
    from pytest_consistency.model.records import CallRecord
    from pytest_consistency.model.result import SessionSummary
    from pytest_consistency.route.route import Route
    from pytest_consistency.shared.ledger import CostBudgetExceeded, TokenBudgetExceeded

__version__ = "0.1.0"


# pytest marks every top-level package of an installed plugin's distribution for assertion rewriting
# (``Config._mark_plugins_for_rewrite``; for an editable install too; ``-p`` marks the module it names) and imports
# each of its modules through its import hook, which keeps a rewritten ``.pyc`` of its own beside pip's: about 2.3 M
# instructions a module with that cache, and a parse and compile of every module in every run where nothing may write
# one (``PYTHONDONTWRITEBYTECODE=1``, as many Docker images set). The plugin's modules hold no assertion meant for a
# test's report, so this package takes its names off the hook's marks here and its modules are imported as any other
# package's are. (``PYTEST_DONT_REWRITE`` in each module's docstring would only skip the rewriting itself, not the
# hook's parse and compile.) This ``__init__`` is the one module the hook still loads, pytest importing it before any
# of the plugin's code runs: so it is kept short (the hook compiles it in every such run), and its docstring's marker
# keeps a later session in the same process (pytester's in-process runs) from warning that it was imported before it
# could be rewritten. The marks are not public API (``_must_rewrite`` and its cache, pytest 6 to 9): where they are
# missing nothing happens and the modules are rewritten as before; ``tests/integration/costs/test_startup_costs.py``
# checks that none is.
_finder = _marked = _name = None
for _finder in sys.meta_path:
    _marked = getattr(_finder, "_must_rewrite", None)
    if isinstance(_marked, set):
        for _name in [*_marked]:
            if _name == __name__ or _name.startswith(__name__ + "."):
                _marked.discard(_name)
                getattr(_finder, "_marked_for_rewrite_cache", {}).clear()
del _finder, _marked, _name

_HOMES = {
    "CallRecord": "model.records",
    "Consistency": "capture.active",
    "CostBudgetExceeded": "shared.ledger",
    "ConsistencyWarning": "capture.active",
    "NetworkBlocked": "capture.network",
    "Route": "route.route",
    "SecretInCassetteError": "cassette.messages",
    "SessionSummary": "model.result",
    "TokenBudgetExceeded": "shared.ledger",
}

__all__ = [
    "CallRecord",
    "Consistency",
    "ConsistencyWarning",
    "CostBudgetExceeded",
    "NetworkBlocked",
    "Route",
    "SecretInCassetteError",
    "SessionSummary",
    "TokenBudgetExceeded",
    "__version__",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pytest_consistency' has no attribute {name!r}")
    return getattr(import_module(f".{home}", __name__), name)
