"""What an inner session (pytester's, a subprocess pytest, an example replay) loads of the test venv's plugins.

The test extra installs other test tools beside the plugin, each with a pytest entry point that every session loads.
An inner session leaves them out unless its test asks for one by name (``-p rerunfailures``, ``-p flaky``):

- flaky runs every test's protocol itself, which takes the place of pytest-rerunfailures' for every test;
- langsmith's plugin imports httpx at collection, which would hide whether the plugin itself imports an HTTP library;
- pytest-rerunfailures, with xdist installed, starts a listening socket and a thread in every session's configure and
  never closes them: one worker's hundreds of in-process sessions passed 1,024 open descriptors;
- respx, llmock, Hypothesis and anyio cost a session that does not use them 0.6 s of its 1.1 s at start (imports),
  and that again in each of its xdist workers. (The tests that use respx or llmock import them, not their plugins.)
"""

from __future__ import annotations

import forkserver

#: The entry-point names (``-p no:NAME``) an inner session leaves out.
LEFT_OUT = ("flaky", "langsmith_plugin", "rerunfailures", "respx", "llmock", "hypothesispytest", "anyio")


def addopts(existing: str = "") -> str:
    """``PYTEST_ADDOPTS`` for an inner session: ``existing`` and the test tools' plugins left out; while a fork
    server runs (tests/support/forkserver.py), the plugin that starts the session's xdist workers from it."""
    left_out = (f"-p no:{name}" for name in LEFT_OUT)
    return " ".join([existing.strip(), *left_out, *forkserver.worker_options()]).strip()
