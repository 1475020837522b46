"""The public names (``pytest_consistency.__all__``) load from wherever their wing keeps them, in a fresh
interpreter (the package loads each on first use, from a table that a move of modules must keep up to date)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, pytest_consistency
print(json.dumps({name: repr(getattr(pytest_consistency, name)) for name in pytest_consistency.__all__}))
"""

PUBLIC = {
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
}


def test_every_public_name_loads(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    loaded = json.loads(out.stdout)
    assert set(loaded) == PUBLIC  # the public names do not change with the layout
    for name, shown in loaded.items():
        assert name == "__version__" or f".{name}'>" in shown, (name, shown)


def test_an_unknown_name_is_an_attribute_error() -> None:
    import pytest

    import pytest_consistency

    with pytest.raises(AttributeError, match="no_such_name"):
        pytest_consistency.no_such_name  # noqa: B018


def test_the_command_also_runs_as_a_module(tmp_path: Path) -> None:
    """``python -m pytest_consistency.cli`` (scripts/ci_local.sh, an environment without the console script) is the
    ``pytest-consistency`` command, as before the CLI became a package."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest_consistency.cli", "--help"], capture_output=True, text=True, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("usage: pytest-consistency")
