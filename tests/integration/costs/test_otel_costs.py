"""What a session without ``--consistency-otel`` does not pay for: OpenTelemetry (issue 29, "without
``--consistency-otel`` nothing of OpenTelemetry is imported"). A structural guard, no timings.

As test_lazy_costs.py does: a conftest records which modules the session loaded, read last (``pytest_unconfigure``,
after the session end wrote its report and outputs and printed its summary), in a process of its own
(``runpytest_subprocess``). Plugin autoloading is off and the plugin loaded by name: another installed plugin
(langsmith's) imports ``opentelemetry`` itself, which would hide whether this one does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from collector import Collector
from fake_openai import FakeOpenAI, Step

#: Their sessions' processes start cold, not forked from the warm server (tests/support/forkserver.py):
#: what a session imports by itself is what these tests measure.
pytestmark = pytest.mark.cold_start

#: The modules a session loaded that are OpenTelemetry's or protobuf's (the OTLP exporter's encoding), written last.
PROBE = """
import json
import sys

import pytest


def loaded():
    return sorted(
        name
        for name in sys.modules
        if name.startswith("opentelemetry") or name == "google.protobuf" or name.startswith("google.protobuf.")
    )


def pytest_configure(config):
    config.stash_otel_at_start = loaded()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    with open("otel-modules.json", "w") as handle:
        json.dump({"start": config.stash_otel_at_start, "end": loaded()}, handle)
"""

NO_HTTP = """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    consistency.record("x")
"""

AGENT = """
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_agent(pinned_client, consistency):
    reply = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    consistency.record(reply.choices[0].message.content)
"""

#: Every output the session end can write without OpenTelemetry: the JSON report, Markdown, HTML.
OUTPUTS = ("--consistency-report=report.json", "--consistency-md=summary.md", "--consistency-html=page.html")


@pytest.fixture
def plugin_only(monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """No plugin autoloaded; this one loaded by name."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    return ("-p", "pytest_consistency.plugin")


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector().start()
    yield server
    server.stop()


def modules(pytester: pytest.Pytester) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((pytester.path / "otel-modules.json").read_text())
    return loaded


def written(pytester: pytest.Pytester) -> None:
    """The session end ran: its report and outputs are there."""
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["tasks"] and report["summary"]["run"]["run_id"]
    assert (pytester.path / "summary.md").exists() and (pytester.path / "page.html").exists()


@pytest.mark.parametrize("mode", ["none", "off"])
def test_a_session_without_the_option_imports_nothing_of_opentelemetry(
    pytester: pytest.Pytester, plugin_only: tuple[str, ...], mode: str
) -> None:
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_agent=NO_HTTP)
    result = pytester.runpytest_subprocess(*plugin_only, f"--consistency-record={mode}", *OUTPUTS)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    written(pytester)
    assert modules(pytester) == {"start": [], "end": []}
    assert not any(line.startswith("otel: ") for line in result.stdout.lines)


def test_an_agent_session_recorded_and_replayed_without_the_option_imports_nothing_of_opentelemetry(
    pytester: pytest.Pytester, plugin_only: tuple[str, ...], fake: FakeOpenAI
) -> None:
    """Real model calls through the openai SDK, their cassettes written and then replayed (a report with calls,
    their times and tokens): still nothing of OpenTelemetry."""
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_agent=AGENT)
    fake.script(Step(text="a"), Step(text="b"))
    route = (f"--consistency-base-url={fake.base_url}", "--consistency-model=fake-model")
    for mode in ("once", "none"):
        result = pytester.runpytest_subprocess(*plugin_only, *route, f"--consistency-record={mode}", *OUTPUTS)
        assert result.ret == 0, result.stdout.str() + result.stderr.str()
        written(pytester)
        report = json.loads((pytester.path / "report.json").read_text())
        calls = [c for t in report["tasks"] for r in t["repetitions"] for c in r["calls"]]
        assert len(calls) == 2 and all(c["replayed"] == (mode == "none") and c["started_at"] for c in calls)
        assert modules(pytester) == {"start": [], "end": []}, mode
    assert len(fake.requests) == 2  # recorded once, replayed without a request


def test_with_the_option_the_sdk_and_its_exporter_are_imported(
    pytester: pytest.Pytester,
    plugin_only: tuple[str, ...],
    collector: Collector,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "30")
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_agent=NO_HTTP)
    result = pytester.runpytest_subprocess(*plugin_only, "--consistency-record=off", "--consistency-otel", *OUTPUTS)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    written(pytester)
    result.stdout.fnmatch_lines([f"otel: exported 4 spans in 1 traces to {collector.traces_url} (http/protobuf)"])
    loaded = modules(pytester)
    end = set(loaded["end"])
    assert {"opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http.trace_exporter"} <= end
    assert "google.protobuf" in end
    # checked before any test ran (the SDK found, not imported), imported at the session end to send the spans
    assert not any(name.startswith("opentelemetry.sdk") for name in loaded["start"])
    assert len(collector.spans) == 4
