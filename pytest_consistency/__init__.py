"""pytest-consistency: repeat agent tasks, measure the consistency gap and route drift, gate CI on them.

The plugin itself registers through the ``pytest11`` entry point (``pytest_consistency.plugin``); these are the
names a test or conftest may want to import. They load on first use, so the ``pytest-consistency`` command (which
reads reports) imports neither pytest nor the HTTP stack.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_consistency.capture.active import Consistency, ConsistencyWarning
    from pytest_consistency.capture.network import NetworkBlocked
    from pytest_consistency.cassette.messages import SecretInCassetteError
    from pytest_consistency.model.records import CallRecord
    from pytest_consistency.model.result import SessionSummary
    from pytest_consistency.route.route import Route
    from pytest_consistency.shared.ledger import TokenBudgetExceeded

__version__ = "0.1.0"

_HOMES = {
    "CallRecord": "model.records",
    "Consistency": "capture.active",
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
