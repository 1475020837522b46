"""An inner session's plugin (tests/support/forkserver.py): its ``-n N`` xdist workers start through the fork
server's client, as its own process did, rather than each importing pytest, the SDKs and the plugin anew.

Loaded by ``-p forked_sessions`` (tests/support/inner.py) from this directory, which the test run puts on
``PYTHONPATH`` while its fork server runs. Only for workers of the interpreter the server is for: a session run by
another venv's interpreter keeps its own.
"""

from __future__ import annotations

import os
import sys

import pytest

#: The fork server's client, and the interpreter it stands for (tests/support/forkserver.py sets both).
CLIENT_VARIABLE = "FORKSERVER_CLIENT"
PYTHON_VARIABLE = "FORKSERVER_PYTHON"


def pytest_cmdline_main(config: pytest.Config) -> None:
    """After xdist's own (``tryfirst``), which turns ``-n N`` into N ``popen`` specs; before the session runs."""
    client = os.environ.get(CLIENT_VARIABLE)
    if not client or os.environ.get(PYTHON_VARIABLE) != sys.executable or os.environ.get("FORKSERVER_OFF"):
        return
    specs = getattr(config.option, "tx", None)
    if specs:
        config.option.tx = [f"popen//python={client}" if spec == "popen" else spec for spec in specs]
