"""What a repetition does not pay for: structural guards of the benchmark's findings (no timings here).

The benchmark (benchmarks/run.py) measures; these tests fail when a change brings back a cost it removed: the
plugin importing HTTP libraries or vcrpy for a suite that never uses them, and vcrpy's patches rebuilt per repetition.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from asleep import ASLEEP, ASLEEP_ROLES, REWRITTEN, without_reasons_to_wake
from asleep import PROBE as ASLEEP_PROBE
from fake_openai import GOOD_KEY, FakeOpenAI

import pytest_consistency

#: Their sessions' processes start cold, not forked from the warm server (tests/support/forkserver.py):
#: what a session imports by itself is what these tests measure.
pytestmark = pytest.mark.cold_start

PROBE = """
import json
import sys

import pytest


def pytest_sessionfinish(session):
    names = [
        "vcr", "httpx", "httpx2", "uvloop", "yaml", "pytest_consistency.model.result", "pytest_consistency.report.html"
    ]
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
        "pytest_consistency.model.result": imported["pytest_consistency.model.result"],
        "pytest_consistency.report.html": False,
    }


#: Which of the plugin's modules a session loaded, read last (after the session end's summary and terminal output).
LOADED = """
import json
import sys

import pytest

NAMES = [
    "pytest_consistency.cassette.scope",
    "pytest_consistency.cassette.scrub",
    "pytest_consistency.cassette.persist",
    "pytest_consistency.cassette._vcr",
    "pytest_consistency.cassette._vcr_reset",
    "pytest_consistency.capture.clients",
    "pytest_consistency.capture.preflight",
    "pytest_consistency.capture.transport",
    "pytest_consistency.capture.wire",
    "pytest_consistency.capture.network",
    "pytest_consistency.analysis.baseline",
    "pytest_consistency.report.json_report",
    "pytest_consistency.analysis.summary",
]


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    with open("loaded.json", "w") as handle:
        json.dump({name: name in sys.modules for name in NAMES}, handle)
"""


@pytest.mark.parametrize("mode", ["none", "off"])
def test_a_session_without_cassettes_loads_neither_the_cassette_nor_the_client_modules(
    pytester: pytest.Pytester, mode: str
) -> None:
    """No cassette exists, no pinned client is used, no HTTP library is imported, no report or baseline is asked
    for: the session compiles and runs none of the modules for them, from the plugin's import to its last line of
    output (the observer subscribes to httpx and httpx2 without loading the recording transport). Replay-only mode
    still loads the network block (every repetition is blocked)."""
    import json

    pytester.makeconftest(LOADED)
    pytester.makepyfile(test_agent=NO_HTTP)
    result = pytester.runpytest_subprocess(f"--consistency-record={mode}", "-p", "no:asyncio", "-p", "no:respx")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*consistency*"])  # the session end ran and printed its summary
    loaded = json.loads((pytester.path / "loaded.json").read_text())
    assert loaded == {
        "pytest_consistency.cassette.scope": False,
        "pytest_consistency.cassette.scrub": False,
        "pytest_consistency.cassette.persist": False,
        "pytest_consistency.cassette._vcr": False,
        "pytest_consistency.cassette._vcr_reset": False,
        "pytest_consistency.capture.clients": False,
        "pytest_consistency.capture.preflight": False,
        "pytest_consistency.capture.transport": False,
        "pytest_consistency.capture.wire": False,
        "pytest_consistency.capture.network": mode == "none",
        "pytest_consistency.analysis.baseline": False,
        "pytest_consistency.report.json_report": False,
        "pytest_consistency.analysis.summary": True,
    }


CHECKS = """
import json

from pytest_consistency.capture import active as repetition

COUNTS = {"checks": 0}
check = repetition.check_answer


def counted(*args, **kwargs):
    COUNTS["checks"] += 1
    return check(*args, **kwargs)


repetition.check_answer = counted


def pytest_sessionfinish(session):
    with open("checks.json", "w") as handle:
        json.dump(COUNTS, handle)
"""


#: One scalar and one container end to end; which values are plain scalars (a string, None, ...) is decided by
#: ``analysis.answers.plain_scalar``, whose unit tests (tests/unit/analysis/test_answers.py) cover every kind.
@pytest.mark.parametrize(("answer", "checks"), [("3", 0), ('{"a": [1, "b"]}', 2 * 3)])
def test_record_checks_only_answers_that_are_not_plain_scalars(
    pytester: pytest.Pytester, answer: str, checks: int
) -> None:
    """A string, a bounded int, a finite float, a bool or None is valid JSON within every limit: ``record()`` skips
    the limit walk and ``json.dumps`` of the answer and of its normalised form. A container is still checked twice
    per record (the answer, then what the normalisation hook returned)."""
    import json

    pytester.makeconftest(CHECKS)
    pytester.makepyfile(
        test_agent=f"""
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    consistency.record({answer})
"""
    )
    result = pytester.runpytest_subprocess("--consistency-report=report.json", "-p", "no:asyncio", "-p", "no:respx")
    assert result.ret == 0, result.stdout.str()
    assert json.loads((pytester.path / "checks.json").read_text())["checks"] == checks
    reps = json.loads((pytester.path / "report.json").read_text())["tasks"][0]["repetitions"]
    assert [r["answer"] for r in reps] == [json.loads(json.dumps(eval(answer)))] * 3


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
from pytest_consistency.cassette import _vcr

SEEN = []

@pytest.hookimpl(trylast=True)
def pytest_runtest_call(item):
    SEEN.append(id(_vcr._patches))

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


COUNTER = """
import json

import pytest

COUNTS = {
    "payloads": 0,
    "marked": 0,
    "scopes": 0,
    "vcr_loads": 0,
    "parses": 0,
    "yaml_constructions": 0,
    "mock_patches": 0,
}


def pytest_configure(config):
    import yaml.constructor

    from pytest_consistency.cassette import replay, scope

    construct = yaml.constructor.BaseConstructor.construct_document

    def counted_construct(self, node):
        COUNTS["yaml_constructions"] += 1  # PyYAML's constructor building one document (SafeConstructor's too)
        return construct(self, node)

    yaml.constructor.BaseConstructor.construct_document = counted_construct
    from unittest import mock

    enter = mock._patch.__enter__

    def counted_enter(self):
        COUNTS["mock_patches"] += 1  # a mock.patch entered (vcrpy's patchers are mock.patch.object)
        return enter(self)

    mock._patch.__enter__ = counted_enter

    repetition_scope = scope.repetition_scope

    def counted_scope(*args, **kwargs):
        COUNTS["scopes"] += 1
        return repetition_scope(*args, **kwargs)

    scope.repetition_scope = counted_scope
    load = replay.Replay._load

    def counted_load(self):
        COUNTS["parses"] += 1
        return load(self)

    replay.Replay._load = counted_load


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    import sys

    cassette = sys.modules.get("vcr.cassette")
    if cassette is not None and not hasattr(cassette.Cassette.load, "counted"):
        original = cassette.Cassette.load.__func__

        def counted(cls, **kwargs):
            COUNTS["vcr_loads"] += 1
            return original(cls, **kwargs)

        counted.counted = True
        cassette.Cassette.load = classmethod(counted)


def pytest_runtest_logreport(report):
    COUNTS["payloads"] += getattr(report, "consistency_payload", None) is not None
    COUNTS["marked"] += bool(getattr(report, "consistency_marked", False))


def pytest_sessionfinish(session):
    with open("counts.json", "w") as handle:
        json.dump(COUNTS, handle)
"""


@pytest.mark.parametrize("mode", ["none", "off"])
def test_a_repetition_without_http_sends_one_payload_and_off_mode_enters_no_scope(
    pytester: pytest.Pytester, mode: str
) -> None:
    """One payload per repetition (its call phase), not one per phase; neither ``off`` nor a replay without a
    cassette enters a cassette scope."""
    import json

    pytester.makeconftest(COUNTER)
    pytester.makepyfile(test_agent=NO_HTTP)
    result = pytester.runpytest_subprocess(
        f"--consistency-record={mode}", "--consistency-report=report.json", "-p", "no:asyncio", "-p", "no:respx"
    )
    assert result.ret == 0, result.stdout.str()
    counts = json.loads((pytester.path / "counts.json").read_text())
    assert counts["payloads"] == 3 and counts["marked"] == 6
    # No cassette to replay either (``none``): no cassette scope, only the network block and the observer.
    assert counts["scopes"] == 0
    reps = json.loads((pytester.path / "report.json").read_text())["tasks"][0]["repetitions"]
    assert [r["outcome"] for r in reps] == ["passed"] * 3 and all(r["answer"] == "x" for r in reps)
    assert all(r["duration"] > 0 for r in reps)  # the payload-less phases' durations still count


REPLAYED = """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_client, consistency):
    first = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "a"}])
    second = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "b"}])
    consistency.record([first.choices[0].message.content, second.choices[0].message.content])
"""


def test_a_replayed_pinned_call_is_served_from_the_parsed_cassette_without_vcrpys_cassette(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each cassette is parsed once, vcrpy's Cassette is never built for pinned calls, and the replay reports what
    the recording did (the response tap read the replayed body: tokens, served model)."""
    import json

    from fake_openai import Step
    from suites import run_recorded

    fake.script(*[Step(text=f"answer {i}") for i in range(6)])
    pytester.makepyfile(test_agent=REPLAYED)
    assert run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly").ret == 0
    recorded = json.loads((pytester.path / "report.json").read_text())
    pytester.makeconftest(COUNTER)
    monkeypatch.delenv("OPENAI_API_KEY")
    result = pytester.runpytest_subprocess(  # in a process of its own: the counting conftest patches modules
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        "--consistency-record=none",
        "--consistency-report=report.json",
        "-p",
        "no:randomly",
    )
    assert result.ret == 0, result.stdout.str()
    counts = json.loads((pytester.path / "counts.json").read_text())
    assert counts["parses"] == 3 and counts["vcr_loads"] == 0
    # One payload per repetition with calls too: the teardown changed nothing the call phase's payload carried.
    assert counts["payloads"] == 3 and counts["marked"] == 6
    # The cassettes are read by vcrpy's YAML serializer (libyaml): one document built per cassette, never a second.
    assert counts["yaml_constructions"] == counts["parses"] == 3
    # vcrpy's prepared patches are put in place by _vcr.Swap, not by mock's machinery, in every repetition.
    assert counts["mock_patches"] == 0
    replayed = json.loads((pytester.path / "report.json").read_text())
    calls = [c for t in replayed["tasks"] for r in t["repetitions"] for c in r["calls"]]
    assert len(calls) == 6 and all(c["replayed"] and c["total_tokens"] > 0 and c["model_served"] for c in calls)
    answers = [r["answer"] for t in replayed["tasks"] for r in t["repetitions"]]
    assert answers == [r["answer"] for t in recorded["tasks"] for r in t["repetitions"]]
    assert answers == [["answer 0", "answer 1"], ["answer 2", "answer 3"], ["answer 4", "answer 5"]]
    tokens = [c["total_tokens"] for t in recorded["tasks"] for r in t["repetitions"] for c in r["calls"]]
    assert [c["total_tokens"] for c in calls] == tokens


GC_PROBE = """
import gc
import json


def pytest_consistency_summary(summary, config):
    with open("gc.json", "w") as handle:
        json.dump({"in_summary_hook": gc.isenabled()}, handle)


def pytest_unconfigure(config):
    with open("gc.json") as handle:
        seen = json.load(handle)
    seen["after"] = gc.isenabled()
    with open("gc.json", "w") as handle:
        json.dump(seen, handle)
"""


def test_the_end_of_session_runs_without_the_cyclic_collector_and_restores_it(pytester: pytest.Pytester) -> None:
    import json

    pytester.makeconftest(GC_PROBE)
    pytester.makepyfile(test_agent=NO_HTTP)
    result = pytester.runpytest_subprocess("--consistency-report=report.json", "-p", "no:asyncio", "-p", "no:respx")
    assert result.ret == 0, result.stdout.str()
    assert json.loads((pytester.path / "gc.json").read_text()) == {"in_summary_hook": False, "after": True}
    assert json.loads((pytester.path / "report.json").read_text())["summary"]["passed"] is True


FINGERPRINTS = """
import json

from pytest_consistency.route import route

COUNTS = {"fingerprints": 0}
fingerprint = route.fingerprint


def counted(key):
    COUNTS["fingerprints"] += 1
    return fingerprint(key)


route.fingerprint = counted


def pytest_sessionfinish(session):
    with open("fingerprints.json", "w") as handle:
        json.dump(COUNTS, handle)
"""


def test_the_route_key_fingerprints_of_the_cassette_scrubber_are_computed_once_per_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each recording repetition's scrubber stores the routes' key fingerprints with every exchange; the routes do
    not change during a session, so the count of fingerprints computed does not grow with the repetitions."""
    import json

    monkeypatch.setenv("OPENAI_API_KEY", "sk-lazy-costs-0123456789abcdef")
    pytester.makeconftest(FINGERPRINTS)
    counts = []
    for n in (2, 6):
        pytester.makepyfile(
            test_agent=f"""
import pytest

@pytest.mark.repeat_consistency(n={n})
def test_task(consistency):
    consistency.record("x")
"""
        )
        result = pytester.runpytest_subprocess("--consistency-record=all", "-p", "no:asyncio", "-p", "no:respx")
        assert result.ret == 0, result.stdout.str()
        counts.append(json.loads((pytester.path / "fingerprints.json").read_text())["fingerprints"])
    assert counts[0] == counts[1] > 0


HOOK_CALLS = """
import json

import pluggy._hooks

COUNTS = {"pytest_consistency_normalize_answer": 0, "pytest_consistency_answers_equivalent": 0}
call = pluggy._hooks.HookCaller.__call__


def counted(self, *args, **kwargs):
    if self.name in COUNTS:
        COUNTS[self.name] += 1
    return call(self, *args, **kwargs)


pluggy._hooks.HookCaller.__call__ = counted


def pytest_unconfigure(config):
    with open("hooks.json", "w") as handle:
        json.dump(COUNTS, handle)
"""

OWN_HOOKS = """

def pytest_consistency_normalize_answer(answer, task_id):
    return answer.upper()


def pytest_consistency_answers_equivalent(left, right, task_id):
    return left == right
"""


@pytest.mark.parametrize("own_hooks", [False, True])
def test_the_default_answer_hooks_are_called_directly_and_a_conftests_through_pluggy(
    pytester: pytest.Pytester, own_hooks: bool
) -> None:
    """Without any other implementation of the normalisation and equivalence hooks, ``record()`` and the session
    end call the documented defaults directly, not through pluggy once per answer and per comparison; a conftest's
    implementation is called as before, and decides."""
    import json

    pytester.makeconftest(HOOK_CALLS + (OWN_HOOKS if own_hooks else ""))
    pytester.makepyfile(test_agent=NO_HTTP)
    result = pytester.runpytest_subprocess("--consistency-report=report.json", "-p", "no:asyncio", "-p", "no:respx")
    assert result.ret == 0, result.stdout.str()
    calls = json.loads((pytester.path / "hooks.json").read_text())
    if own_hooks:
        assert calls == {"pytest_consistency_normalize_answer": 3, "pytest_consistency_answers_equivalent": 2}
    else:
        assert calls == {"pytest_consistency_normalize_answer": 0, "pytest_consistency_answers_equivalent": 0}
    reps = json.loads((pytester.path / "report.json").read_text())["tasks"][0]["repetitions"]
    assert [r["normalized"] for r in reps] == (["X"] * 3 if own_hooks else ["x"] * 3)


STREAMED_AT_TEARDOWN = """
import pytest

@pytest.fixture
def stream(pinned_client):
    response = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "a"}], stream=True
    )
    yield response
    response.close()  # the call completes here, in teardown: its tokens are estimated and its latency set now

@pytest.mark.repeat_consistency(n=2)
def test_task(stream, consistency):
    first = next(iter(stream))
    consistency.record(first.choices[0].delta.content if first.choices else "")
"""


def test_a_call_completed_at_teardown_still_reaches_the_report(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """The teardown sends its payload when a call changed after the call phase (here a stream closed by a fixture):
    what the call phase's payload carried is not the repetition's last word."""
    import json

    from fake_openai import Step
    from suites import run_recorded

    fake.script(*[Step(text="one two three four five six")] * 2)
    pytester.makepyfile(test_agent=STREAMED_AT_TEARDOWN)
    pytester.makeconftest(COUNTER)
    result = run_recorded(pytester, fake.base_url, "off", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()
    counts = json.loads((pytester.path / "counts.json").read_text())
    assert counts["payloads"] == 4  # call and teardown of each repetition
    calls = [
        c
        for t in json.loads((pytester.path / "report.json").read_text())["tasks"]
        for r in t["repetitions"]
        for c in r["calls"]
    ]
    assert len(calls) == 2
    assert all(c["latency_ms"] is not None and c["tokens_estimated"] and c["total_tokens"] > 0 for c in calls), calls


def test_pinned_clients_share_one_recording_transport_class_per_http_module() -> None:
    """A class built per client was about 10 us of every repetition: two clients, sync or async, one class each."""
    from pytest_consistency.capture.clients import build_client
    from pytest_consistency.route.route import Route

    route = Route(
        base_url="http://127.0.0.1:9/v1", api_key="sk-test-0123456789abcdefghij", model="m", timeout=5.0, max_retries=0
    )
    clients = [build_client(route, None), build_client(route, None)]
    transports = [client._client._transport for client in clients]
    assert type(transports[0]) is type(transports[1]) and transports[0] is not transports[1]
    async_clients = [build_client(route, None, is_async=True) for _ in range(2)]
    async_transports = [client._client._transport for client in async_clients]
    assert type(async_transports[0]) is type(async_transports[1]) is not type(transports[0])
    for client in clients:
        client.close()


ENTRY_PROBE = """
import importlib, json, sys
import pytest
before = set(sys.modules)
importlib.import_module("pytest_consistency.plugin")
loaded = set(sys.modules) - before
print(json.dumps(sorted(loaded)))
"""


def test_the_entry_point_loads_its_hook_declarations_and_nothing_third_party(tmp_path: Path) -> None:
    """Importing the pytest11 module (every pytest start, every xdist worker, also in a session that uses none of
    the plugin) loads its hook declarations and nothing else: three of the plugin's modules, and no package beyond
    pytest and pluggy (no SDK, no vcrpy, no statistics)."""
    run = [sys.executable, "-c", ENTRY_PROBE]  # from a directory of its own: the package as installed
    out = subprocess.run(run, capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    loaded = json.loads(out)
    own = [name for name in loaded if name == "pytest_consistency" or name.startswith("pytest_consistency.")]
    assert own == ["pytest_consistency", "pytest_consistency.plugin", "pytest_consistency.plugin.hookspecs"], own
    others = {name.split(".")[0] for name in loaded if not name.startswith("pytest_consistency")}
    third_party = {name for name in others if name not in sys.stdlib_module_names and not name.startswith("_")}
    assert third_party <= {"pluggy"}, third_party


@pytest.mark.parametrize("outcome", ["passed", "failed"])
def test_a_session_of_unmarked_tests_loads_the_option_table_and_nothing_through_the_rewriter(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, outcome: str
) -> None:
    """Issue 42: the plugin installed in a suite that does not use it sleeps (``plugin/dormant.py``): it loads its
    option table and the role that waits for a reason to wake it, nothing else (no settings, routes, roles, statistics
    or report model: ``asleep.ASLEEP``); none of its modules goes through pytest's assertion rewriter but the
    package's ``__init__``, which pytest imports before the plugin's code runs and which says ``PYTEST_DONT_REWRITE``;
    and the exit status is pytest's own, a failing test's text shown as it is."""
    without_reasons_to_wake(monkeypatch)
    pytester.makeconftest(ASLEEP_PROBE)
    pytester.makepyfile(f"def test_plain():\n    assert {outcome == 'passed'}, 'the agent said ' + 'no'\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == (0 if outcome == "passed" else 1)
    if outcome == "failed":
        result.stdout.fnmatch_lines(["*AssertionError: the agent said no*"])
    loaded = json.loads((pytester.path / "loaded-controller.json").read_text())
    assert loaded["roles"] == ASLEEP_ROLES, loaded["roles"]
    assert loaded["modules"] == ASLEEP, loaded["modules"]
    assert set(loaded["rewritten"]) <= REWRITTEN, loaded["rewritten"]
    assert "PYTEST_DONT_REWRITE" in (pytest_consistency.__doc__ or "")


def test_an_unmarked_test_using_the_handle_leaves_no_active_repetition_behind(pytester: pytest.Pytester) -> None:
    """``consistency`` in an unmarked test is a repetition of one, active while the test runs and gone after it."""
    pytester.makepyfile(
        """
        from pytest_consistency.capture.active import current

        def test_one(consistency):
            assert current() is not None
            consistency.record("a")

        def test_two():
            assert current() is None
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=2)


FIXTURE_PROBE = """
import json

import pytest

SET_UP = {}
NAMES = {}


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef, request):
    SET_UP[fixturedef.argname] = list(fixturedef.argnames)


def pytest_collection_finish(session):
    NAMES.update({item.name: list(item.fixturenames) for item in session.items})


def pytest_sessionfinish(session):
    with open("fixtures.json", "w") as handle:
        json.dump({"set_up": SET_UP, "names": NAMES}, handle)
"""


def test_the_plugins_fixtures_ask_for_neither_request_nor_pytestconfig(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """A fixture that asks for ``request`` (or ``pytestconfig``, which does) makes pytest build a fixture
    definition for ``request`` two or three times per test it serves: for ``consistency`` that was the largest
    cost a repetition paid beyond pytest-repeat's (issue 30). The plugin's fixtures are bound to the config."""
    pytester.makeconftest(FIXTURE_PROBE)
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.repeat_consistency(n=2)
        def test_task(consistency, pinned_client, async_pinned_client):
            consistency.record("x")
        """
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--consistency-record=off",
        f"--consistency-base-url={fake.base_url}",
        "-W",  # pytest 9.2 deprecates session-scoped fixtures that are instance methods: the routes' are not
        "error::pytest.PytestRemovedIn10Warning",
    )
    result.assert_outcomes(passed=2)
    found = json.loads((pytester.path / "fixtures.json").read_text())
    ours = {"consistency", "pinned_client", "async_pinned_client", "pinned_route"}
    assert ours <= set(found["set_up"]), found
    assert {name: found["set_up"][name] for name in ours} == {
        "consistency": [],
        "pinned_client": ["pinned_route"],
        "async_pinned_client": ["pinned_route"],
        "pinned_route": [],
    }
    assert all("request" not in names for names in found["names"].values()), found["names"]


SHARED_PROBE = """
import json

import pytest

from pytest_consistency.plugin.state import STATE

SCOPES = {}
KEPT = []  # alive, so that no two scopes share an id


@pytest.fixture(autouse=True)
def scope_of_repetition(request):
    yield
    tracked = request.config.stash[STATE].items.get(request.node)
    stack = None if tracked is None else tracked.scope
    SCOPES[request.node.name] = None if stack is None else id(stack)
    KEPT.append(stack)


def pytest_sessionfinish(session):
    state = session.config.stash[STATE]
    with open("shared.json", "w") as handle:
        json.dump(
            {
                "scopes": SCOPES,
                "specs": len(state.specs),
                "folders": len(state.cassette_folders),
                "kept": [item.name for item, tracked in state.items.items() if tracked.active is not None],
            },
            handle,
        )
"""


def test_a_tasks_repetitions_share_what_they_can_in_replay_only_mode(pytester: pytest.Pytester) -> None:
    """Issue 30's per-task savings: a task's repetitions without cassettes run in one scope (network block,
    observer, stand-in keys) that no other task's share; each marker is parsed once, each task's cassette folder
    looked at once; no item keeps its repetition once reported (the cyclic collector would walk them all)."""
    pytester.makeconftest(SHARED_PROBE)
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("case", ["a", "b"])
        @pytest.mark.repeat_consistency(n=3)
        def test_task(case, consistency):
            consistency.record(case)

        @pytest.mark.repeat_consistency(n=2)
        def test_other(consistency):
            consistency.record("x")
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "--consistency-record=none")
    result.assert_outcomes(passed=8)
    found = json.loads((pytester.path / "shared.json").read_text())
    scopes = found["scopes"]
    by_task = {
        task: {scopes[name] for name in scopes if name.startswith(task)}
        for task in ("test_task[a-", "test_task[b-", "test_other")
    }
    assert all(len(ids) == 1 and None not in ids for ids in by_task.values()), scopes
    assert len(set.union(*by_task.values())) == 3, scopes
    assert found["specs"] == 2 and found["folders"] == 3 and found["kept"] == [], found


STASH_PROBE = """
import json
import sys

import pytest
from _pytest.stash import Stash

READS = {"plugin": 0}
RUNNING = [False]


def counted(method):
    def wrapper(self, *args):
        if RUNNING[0] and "pytest_consistency" in sys._getframe(1).f_code.co_filename:
            READS["plugin"] += 1
        return method(self, *args)

    return wrapper


for name in ("__getitem__", "__setitem__", "__delitem__", "__contains__", "get", "setdefault"):
    setattr(Stash, name, counted(getattr(Stash, name)))


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    RUNNING[0] = True  # every repetition's protocol, not the session's start or end
    try:
        return (yield)
    finally:
        RUNNING[0] = False


def pytest_sessionfinish(session):
    names = [name for name, _ in session.config.pluginmanager.list_name_plugin() if name.startswith("consistency-")]
    with open("stash.json", "w") as handle:
        json.dump({"reads": READS["plugin"], "roles": sorted(names)}, handle)
"""


@pytest.mark.parametrize("outcomes", ["PPP", "PFP"])
def test_a_repetition_reads_no_stash_and_a_passing_session_never_asks_the_tolerance_role(
    pytester: pytest.Pytester, outcomes: str
) -> None:
    """Issue 30: the plugin keeps what it knows of an item in one record keyed by the item (``state.items``), not on
    pytest's stash (three Python calls a read, a KeyError a miss, about fifty reads a repetition); and the tolerance
    hook (``pytest_report_teststatus``, three calls a repetition) is a role the controller registers at the first
    failed report, so a passing session never dispatches it. A failing repetition still reads as tolerated."""
    pytester.makeconftest(STASH_PROBE)
    pytester.makepyfile(
        test_t=f"""
        import pytest

        @pytest.mark.repeat_consistency(n=3, min_pass=0)
        def test_task(consistency):
            consistency.record("x")
            assert {outcomes!r}[consistency.repeat - 1] == "P"

        def test_plain(consistency):
            consistency.record("y")
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "--consistency-record=none")
    found = json.loads((pytester.path / "stash.json").read_text())
    assert found["reads"] == 0, found
    tolerance = "consistency-tolerance" in found["roles"]
    if outcomes == "PPP":
        result.assert_outcomes(passed=4)
        assert not tolerance, found
    else:
        assert tolerance, found
        result.stdout.fnmatch_lines(["test_t.py .t.. *"])
        assert result.ret == 0, result.stdout.str()


MARKER_WALKS = """
import json
import sys

import pytest
from _pytest.nodes import Node

WALKS = []
walk = Node.iter_markers_with_node


def counted(self, name=None):
    caller = sys._getframe(1)
    while caller is not None and (
        "pytest_consistency" not in caller.f_code.co_filename or caller.f_code.co_name == "marker_of"
    ):
        caller = caller.f_back
    if name == "repeat_consistency" and caller is not None:
        WALKS.append(caller.f_code.co_name)
    return walk(self, name)


Node.iter_markers_with_node = counted


def pytest_sessionfinish(session):
    with open("walks.json", "w") as handle:
        json.dump(WALKS, handle)
"""


@pytest.mark.parametrize("n", [2, 6])
def test_a_repetitions_marker_is_read_without_a_walk_up_its_parents(pytester: pytest.Pytester, n: int) -> None:
    """Issue 30: at collection the plugin reads a repetition's marker from the item's own markers (pytest copies the
    function's onto each item) instead of ``get_closest_marker``'s walk up the item's parents, about 2 µs a
    repetition; an unmarked item is looked at only until the session is known to repeat a task. So the walks the
    plugin makes depend on the tasks, never on their repetitions: the same for n = 2 and n = 6. A marker on a class or
    a module is still found (by the walk)."""
    pytester.makeconftest(MARKER_WALKS)
    pytester.makepyfile(
        test_fn=f"""
        import pytest

        @pytest.mark.parametrize("x", [1, 2])
        @pytest.mark.repeat_consistency(n={n})
        def test_task(x, consistency):
            consistency.record(x)

        def test_plain():
            pass
        """,
        test_cls=f"""
        import pytest

        @pytest.mark.repeat_consistency(n={n})
        class TestGroup:
            def test_method(self, consistency):
                consistency.record("m")
        """,
        test_mod=f"""
        import pytest

        pytestmark = pytest.mark.repeat_consistency(n={n})

        def test_module_task(consistency):
            consistency.record("t")
        """,
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "--consistency-record=off", "--consistency-report=r.json"
    )
    result.assert_outcomes(passed=4 * n + 1)
    report = json.loads((pytester.path / "r.json").read_text())
    assert sorted((task["task_id"], task["n"]) for task in report["tasks"]) == [
        ("test_cls.py::TestGroup::test_method", n),
        ("test_fn.py::test_task[1]", n),
        ("test_fn.py::test_task[2]", n),
        ("test_mod.py::test_module_task", n),
    ]
    walks = json.loads((pytester.path / "walks.json").read_text())
    # The class's and the module's repetitions walk (their marker is not the item's own); the function's never do.
    # One walk per test definition (its marker, at generation) and per unmarked test (its refusal check); at collection
    # one per repetition of the class's and the module's tasks, whose marker is not their items' own, and none for the
    # function's repetitions or for an unmarked test once the session is known to repeat a task.
    assert Counter(walks) == {"pytest_generate_tests": 4, "pytest_collection_finish": 2 * n, "marker_problem": 1}
