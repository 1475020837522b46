"""Source of the synthetic suites the benchmark runs as real pytest processes, and of their baselines.

Every figure compares a suite that uses pytest-consistency with a baseline that does the same work without it, so
the two are generated from one test body: only the repetition mechanism (our marker vs pytest-repeat's
``--count``) and the origin of the ``consistency`` / ``pinned_client`` fixtures differ. Each suite lives in its
own directory with a ``pytest.ini`` so that pytest takes it as rootdir and reads none of the project's settings.

Every suite's conftest times ``pytest_runtestloop`` (the repetitions themselves, without interpreter start-up,
collection and the end of session) into the file named by ``BENCH_LOOP_FILE``: the wall time of the process is
what the targets are about, the loop time tells how much of it is per-repetition cost.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

#: Written into every suite's conftest: times the run loop of the controlling process (never an xdist worker).
LOOP_TIMER = """
import os
import time
from pathlib import Path

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    start = time.perf_counter()
    try:
        return (yield)
    finally:
        target = os.environ.get("BENCH_LOOP_FILE")
        if target and not hasattr(session.config, "workerinput"):
            Path(target).write_text(repr(time.perf_counter() - start))
"""

#: The baseline's stand-in for the ``consistency`` fixture: keeps the answer, as cheaply as a test helper would.
RECORDER = """

class Recorder:
    def __init__(self):
        self.answers = []

    def record(self, answer):
        self.answers.append(answer)


@pytest.fixture
def consistency():
    return Recorder()
"""

#: The baseline's ``pinned_client``: the same SDK call, answered in memory with the bytes of a recorded cassette.
MOCK_CLIENT = """

import openai
import {http} as http_library

STATUS = {status}
HEADERS = {headers}
BODY = {body}


def handler(request):
    request.read()
    return http_library.Response(STATUS, headers=HEADERS, content=BODY)


@pytest.fixture
def pinned_client():
    client = openai.OpenAI(
        api_key="sk-benchmark",
        base_url={base_url},
        max_retries=0,
        http_client=openai.DefaultHttpxClient(transport=http_library.MockTransport(handler)),
    )
    yield client
    client.close()
"""

#: Figure 8's baseline ``pinned_client``: the same SDK call over real HTTP to the same loopback server, from a plain
#: client (key and base URL from the environment), built once a session: the cheapest way a suite without the plugin
#: makes the call (a client built for every test measured slower than the plugin's pinned client).
LIVE_CLIENT = """

import os

import openai


@pytest.fixture(scope="session")
def pinned_client():
    client = openai.OpenAI(api_key=os.environ["OPENAI_API_KEY"], base_url=os.environ["BENCH_BASE_URL"], max_retries=0)
    yield client
    client.close()
"""

CALL = (
    'reply = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": '
    'f"task {task}"}])\n    consistency.record(reply.choices[0].message.content)'
)
RECORD = 'consistency.record("x")'


def test_module(tasks: int, n: int | None, body: str, fixtures: str) -> str:
    """One parametrized test, ``tasks`` tasks; marked ``repeat_consistency(n=n)`` unless ``n`` is None."""
    marker = f"@pytest.mark.repeat_consistency(n={n})\n" if n is not None else ""
    return (
        "import pytest\n\n\n"
        f'@pytest.mark.parametrize("task", range({tasks}))\n'
        f"{marker}def test_task(task, {fixtures}):\n    {body}\n"
    )


def write_suite(root: Path, tasks: int, n: int | None, body: str, fixtures: str, conftest_extra: str = "") -> Path:
    """A suite directory: ``pytest.ini``, ``conftest.py`` (loop timer and ``conftest_extra``), ``test_tasks.py``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "conftest.py").write_text(LOOP_TIMER + conftest_extra)
    (root / "test_tasks.py").write_text(test_module(tasks, n, body, fixtures))
    return root


def record_suite(root: Path, tasks: int, n: int) -> Path:
    """Figures 1 and 2: the marked task only records an answer."""
    return write_suite(root, tasks, n, RECORD, "consistency")


def record_baseline(root: Path, tasks: int) -> Path:
    """Figures 1 and 2's baseline: the same body, repeated by pytest-repeat, with a stand-in ``consistency``."""
    return write_suite(root, tasks, None, RECORD, "consistency", RECORDER)


def call_suite(root: Path, tasks: int, n: int) -> Path:
    """Figures 3, 4 and 6: the marked task makes one chat call through ``pinned_client`` and records the reply."""
    return write_suite(root, tasks, n, CALL, "consistency, pinned_client")


def call_baseline(root: Path, tasks: int, http_module: str, base_url: str, response: dict[str, Any]) -> Path:
    """Figure 3's baseline: the same call on an in-memory transport that serves ``response`` (from a cassette)."""
    headers = {k: v[0] for k, v in response["headers"].items() if not k.lower().startswith("x-consistency-")}
    body = response["body"]["string"]
    mock = MOCK_CLIENT.format(
        http=http_module,
        status=response["status"]["code"],
        headers=json.dumps(headers),
        body=repr(body.encode() if isinstance(body, str) else body),
        base_url=json.dumps(base_url),
    )
    return write_suite(root, tasks, None, CALL, "consistency, pinned_client", RECORDER + textwrap.dedent(mock))


def live_baseline(root: Path, tasks: int) -> Path:
    """Figure 8's baseline: the same live call, repeated by pytest-repeat, through a plain client (``LIVE_CLIENT``)."""
    return write_suite(root, tasks, None, CALL, "consistency, pinned_client", RECORDER + textwrap.dedent(LIVE_CLIENT))
