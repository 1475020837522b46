"""The scripts of ``benchmarks/`` loaded as modules, for the fast versions of their measurements in the tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as the module ``<name>_benchmark``."""
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        # The script puts the checkout on sys.path (to run without an install); left there, pytester's later sessions
        # find the checkout's egg-info as a second pytest_consistency distribution and warn that it cannot be rewritten.
        sys.path[:] = path
    return module
