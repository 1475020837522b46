"""Every ``OTEL_*`` value the plugin reads is checked before the session starts (issue 41): a value it cannot use is a
usage error (exit 4) in one line that names the variable and the fix, never an INTERNALERROR, never a test run for
nothing, never a value that is dropped or sent somewhere else at the end of the session.

What is read depends on what is asked: ``--consistency-otel`` reads the collector's variables (endpoint, protocol,
headers, compression, certificates, timeout) and the resource's; the ``otlp-json`` output (``--consistency-output
otlp-json=FILE``, ``pytest-consistency show --format otlp-json``) sends nothing and reads only the resource's and
the conventions' switch, so a collector variable it never reads does not stop it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, Step
from suites import cli, run_recorded

#: What an earlier session wrote: a refused session leaves it as it was.
PREVIOUS = '{"written by": "the previous session"}'

#: A credential of the collector's (OTEL_EXPORTER_OTLP_HEADERS): a message about the variable never shows it.
AUTH = "otlpHeaderSecret5150abcd"

AGENT = """
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency):
    reply = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    consistency.record(reply.choices[0].message.content)
"""

OTEL_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_COMPRESSION",
    "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
    "OTEL_EXPORTER_OTLP_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_SEMCONV_STABILITY_OPT_IN",
    "OTEL_SDK_DISABLED",
    "OTEL_EXPERIMENTAL_RESOURCE_DETECTORS",
    "GITHUB_STEP_SUMMARY",
)

#: (variable, value, what the one line says about it): one endpoint and one header end to end; every way an export
#: variable can be unusable is refused by ``check_environment`` in the unit test of the same table
#: (tests/unit/report/otlp/test_environment.py::test_every_value_the_export_cannot_use_is_one_line_naming_it).
EXPORT_PROBLEMS = [
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://[::1:4318", "OTEL_EXPORTER_OTLP_ENDPOINT='http://[::1:4318' is not a URL"),
    ("OTEL_EXPORTER_OTLP_HEADERS", f"x-tenant=a,authorization=Bearer%0A{AUTH}", "the header 'authorization'"),
]


@pytest.fixture
def environment(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    for name in OTEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    fake.script(*[Step(text="red")] * 4)
    return fake


@pytest.fixture
def previous(pytester: pytest.Pytester) -> Path:
    """A report an earlier session wrote."""
    path = pytester.path / "report.json"
    path.write_text(PREVIOUS)
    return path


def session(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_agent=AGENT)
    return run_recorded(pytester, fake.base_url, "off", "-p", "no:cacheprovider", *args)


def refused_before_any_test(
    result: pytest.RunResult, pytester: pytest.Pytester, fake: FakeOpenAI, option: str, named: str
) -> str:
    """The session stopped with a usage error before any test: one line naming the variable, nothing sent."""
    out, err = result.stdout.str(), result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out + err
    assert "INTERNALERROR" not in out + err and "Traceback" not in out + err, out + err
    lines = [line for line in result.stderr.lines if line.startswith(f"ERROR: {option}: ")]
    assert len(lines) == 1, err
    assert named in lines[0], lines[0]
    assert AUTH not in out + err
    assert result.stdout.str().strip() == "", out  # nothing before the error: no header, no collection
    assert fake.requests == [] and (pytester.path / "report.json").read_text() == PREVIOUS
    return lines[0]


@pytest.mark.parametrize(("variable", "value", "named"), EXPORT_PROBLEMS)
def test_a_value_the_export_cannot_use_is_a_usage_error_before_any_test(
    pytester: pytest.Pytester,
    environment: FakeOpenAI,
    previous: Path,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    named: str,
) -> None:
    monkeypatch.setenv(variable, value)
    result = session(pytester, environment, "--consistency-otel")
    line = refused_before_any_test(result, pytester, environment, "--consistency-otel", named)
    assert variable in line and "; " in line, line  # the variable, then what to do
    if "ENDPOINT" in variable:
        assert "e.g. http://localhost:4318" in line, line


def test_a_disabled_sdk_reads_nothing_else(
    pytester: pytest.Pytester, environment: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OTEL_SDK_DISABLED=true`` exports nothing, so the collector's variables are not read (nor refused)."""
    monkeypatch.setenv("OTEL_SDK_DISABLED", "TRUE")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://[::1:4318")
    result = session(pytester, environment, "--consistency-otel", "--consistency-report=report.json")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["otel: OTEL_SDK_DISABLED=true: nothing exported"])


def test_the_otlp_json_output_checks_what_it_reads_before_any_test(
    pytester: pytest.Pytester, environment: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, previous: Path
) -> None:
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.namespace=agents,nightly")
    (pytester.path / "spans.json").write_text(PREVIOUS)
    result = session(pytester, environment, "--consistency-output=otlp-json=spans.json")
    refused_before_any_test(result, pytester, environment, "--consistency-output", "OTEL_RESOURCE_ATTRIBUTES: entry 2")
    assert (pytester.path / "spans.json").read_text() == PREVIOUS
    # A collector's variable is not read by a file of spans: it does not stop it.
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://[::1:4318")
    written = session(pytester, environment, "--consistency-output=otlp-json=spans.json")
    assert written.ret == 0, written.stdout.str() + written.stderr.str()
    assert (pytester.path / "spans.json").is_file()


def test_show_otlp_json_checks_what_it_reads(
    pytester: pytest.Pytester, environment: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert session(pytester, environment, "--consistency-report=report.json").ret == 0
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "a=b,,c")
    shown = cli("show", "report.json", "--format", "otlp-json", cwd=Path(pytester.path))
    assert shown.returncode == 2, shown.stdout + shown.stderr
    assert shown.stdout == "" and "Traceback" not in shown.stderr, shown.stderr
    lines = shown.stderr.strip().splitlines()
    assert len(lines) == 1 and "--format otlp-json: OTEL_RESOURCE_ATTRIBUTES: entry 3" in lines[0], lines
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://[::1:4318")  # not read by a file of spans
    assert cli("show", "report.json", "--format", "otlp-json", cwd=Path(pytester.path)).returncode == 0
