"""What a repetition does not pay for: structural guards of the benchmark's findings (no timings here).

The benchmark (benchmarks/run.py) measures; these tests fail when a change brings back a cost it removed: the
plugin importing HTTP libraries or vcrpy for a suite that never uses them, and vcrpy's patches rebuilt per repetition.
"""

from __future__ import annotations

import pytest
from fake_openai import GOOD_KEY, FakeOpenAI

PROBE = """
import json
import sys

import pytest


def pytest_sessionfinish(session):
    names = ["vcr", "httpx", "httpx2", "uvloop", "yaml", "pytest_consistency.result", "pytest_consistency.formats.html"]
    with open("imported.json", "w") as handle:
        json.dump({name: name in sys.modules for name in names}, handle)
"""

NO_HTTP = """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    consistency.record("x")
"""


@pytest.mark.parametrize("mode", ["none", "off"])
def test_a_suite_without_http_imports_no_http_library_and_no_vcrpy(pytester: pytest.Pytester, mode: str) -> None:
    import json

    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_agent=NO_HTTP)
    result = pytester.runpytest_subprocess(f"--consistency-record={mode}", "-p", "no:asyncio", "-p", "no:respx")
    assert result.ret == 0, result.stdout.str()
    imported = json.loads((pytester.path / "imported.json").read_text())
    assert imported == {
        "vcr": False,
        "httpx": False,
        "httpx2": False,
        "uvloop": False,
        "yaml": False,
        # The session-end modules load at the end, after the probe ran in the controller's sessionfinish.
        "pytest_consistency.result": imported["pytest_consistency.result"],
        "pytest_consistency.formats.html": False,
    }


LATE_HTTPX = """
import os

import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(consistency):
    import httpx  # first imported here, inside the first repetition: the plugin never imported it

    reply = httpx.get(os.environ["FAKE_URL"] + "/models", headers={"Authorization": "Bearer " + os.environ["KEY"]})
    consistency.record(reply.status_code)
"""


def test_an_http_library_first_imported_inside_a_repetition_is_observed_from_its_first_request(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    monkeypatch.setenv("FAKE_URL", fake.base_url)
    monkeypatch.setenv("KEY", GOOD_KEY)
    pytester.makepyfile(test_agent=LATE_HTTPX)
    result = pytester.runpytest_subprocess(
        "--consistency-record=off", "--consistency-report=report.json", "-p", "no:asyncio", "-p", "no:respx"
    )
    assert result.ret == 0, result.stdout.str()
    reps = json.loads((pytester.path / "report.json").read_text())["tasks"][0]["repetitions"]
    assert [len(r["calls"]) for r in reps] == [1, 1]
    assert all(not r["calls"][0]["pinned"] and r["calls"][0]["status"] == 200 for r in reps)


def test_cassette_patches_are_built_once_per_process(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import pytest
from pytest_consistency import cassettes

SEEN = []

@pytest.hookimpl(trylast=True)
def pytest_runtest_call(item):
    SEEN.append(id(cassettes._patches))

def pytest_sessionfinish(session):
    with open("patches.txt", "w") as handle:
        handle.write(" ".join(map(str, SEEN)))
"""
    )
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.repeat_consistency(n=4)
def test_task(consistency):
    consistency.record("x")
"""
    )
    assert pytester.runpytest_subprocess("--consistency-record=all").ret == 0
    seen = (pytester.path / "patches.txt").read_text().split()
    assert len(seen) == 4 and len(set(seen)) == 1
