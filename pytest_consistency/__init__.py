"""pytest-consistency: repeat agent tasks, measure the consistency gap and route drift, gate CI on them.

The plugin itself registers through the ``pytest11`` entry point (``pytest_consistency.plugin``); these are the
names a test or conftest may want to import.
"""

from .budget import TokenBudgetExceeded
from .cassettes import SecretInCassetteError
from .network import NetworkBlocked
from .records import CallRecord
from .repetition import Consistency, ConsistencyWarning
from .route import Route

__version__ = "0.1.0"

__all__ = [
    "CallRecord",
    "Consistency",
    "ConsistencyWarning",
    "NetworkBlocked",
    "Route",
    "SecretInCassetteError",
    "TokenBudgetExceeded",
    "__version__",
]
