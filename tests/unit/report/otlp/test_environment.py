"""The OTEL_* variables the plugin reads (report/otlp/environment.py, put together by ``export.check_environment``):
each value that cannot be used is refused by its variable, in one line, with the fix; a header's value and an
endpoint's credentials are never shown; what a session does not read is not refused.
"""

from __future__ import annotations

import pytest

from pytest_consistency.report.otlp.environment import (
    OtelSetupError,
    checked_endpoint,
    endpoint_problem,
    sdk_disabled,
    shown_url,
)
from pytest_consistency.report.otlp.export import check_environment, target_of

SECRET = "hdrSecret0042zz"


@pytest.mark.parametrize(
    ("endpoint", "problem"),
    [
        ("http://[::1:4318", "is not a URL (Invalid IPv6 URL)"),
        ("http://[fe80::zz]:4318", "is not a URL"),
        ("http://[::1]x:4318", "only a port may follow the bracketed host"),
        ("http://localhost:99999", "has a port that is not a number from 1 to 65535"),
        ("http://localhost:0", "has a port that is not a number from 1 to 65535"),
        ("http://localhost:43a8", "has a port that is not a number from 1 to 65535"),
        ("http://", "has no host"),
        ("https://:4318", "has no host"),
        ("http://user@:4318", "has no host"),
        ("http://coll ector:4318", "contains whitespace or a control character"),
        ("http://collector:4318\n", "contains whitespace or a control character"),
        ("http://coll\u00e9ctor:4318", "holds a character a host name cannot"),
        ("http://coll$ctor:4318", "holds a character a host name cannot"),
        ("localhost:4318", "is not an http(s) URL"),
        ("grpc://collector:4317", "is not an http(s) URL"),
        ("http://collector:4318?tenant=a", "has a query string or fragment"),
        ("http://collector:4318#v1", "has a query string or fragment"),
    ],
)
def test_an_endpoint_the_exporter_cannot_send_to_is_refused_with_why(endpoint: str, problem: str) -> None:
    assert problem in (endpoint_problem(endpoint, base=True) or ""), endpoint


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://localhost:4318",
        "https://otlp.example.test",
        "http://[::1]:4318",
        "http://[fe80::1%25eth0]:4318",
        "http://127.0.0.1:4318/",
        "https://user:pa55@otlp.example.test:443/api/public/otel",
        "http://otel-collector.monitoring.svc.cluster.local:4318",
        "http://my_collector:4318",
    ],
)
def test_a_usable_endpoint_passes(endpoint: str) -> None:
    assert endpoint_problem(endpoint, base=True) is None


def test_a_traces_endpoint_may_have_a_query_string() -> None:
    """It is used as it is (a tenant's parameter); only a base URL gets /v1/traces appended after it."""
    assert endpoint_problem("https://otlp.example.test/v1/traces?tenant=a", base=False) is None
    assert target_of({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": " https://o.test/v1/traces?t=a "}).endpoint == (
        "https://o.test/v1/traces?t=a"
    )


@pytest.mark.parametrize("variable", ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"])
def test_the_message_names_the_variable_and_the_fix_in_one_line(variable: str) -> None:
    with pytest.raises(OtelSetupError) as raised:
        target_of({variable: "http://[::1:4318"})
    message = str(raised.value)
    assert message.startswith(f"{variable}='http://[::1:4318' is not a URL (Invalid IPv6 URL); set it to "), message
    assert "e.g. http://localhost:4318" in message and "\n" not in message


def test_an_endpoints_credentials_are_never_shown_even_when_it_does_not_parse() -> None:
    for endpoint in ("http://user:pa55word@[::1:4318", "https://user:pa55word@host:99999/v1", "ftp://u:pa55word@x"):
        with pytest.raises(OtelSetupError) as raised:
            checked_endpoint("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        assert "pa55word" not in str(raised.value) and "<redacted>@" in str(raised.value), raised.value
    assert shown_url("https://a:b@host/p@q?x=@") == "https://<redacted>@host/p@q?x=@"
    assert shown_url("no-scheme@host") == "<redacted>@host"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (f"Bearer {SECRET}", "entry 1 is not name=value"),
        (f"x-a=1,{SECRET}", "entry 2 is not name=value"),
        (f"bad name=Bearer%20{SECRET}", "entry 1 is not name=value"),
        (f"authorization=Bearer%0D%0A{SECRET}", "the header 'authorization' (entry 1) decodes to a line break"),
        (f'Authorization=Bearer "{SECRET}"', "the header 'authorization' (entry 1) has a character"),
        (f"x-key={SECRET};x", "the header 'x-key' (entry 1) has a character"),
        (f"x-key=caf\u00e9{SECRET}", "the header 'x-key' (entry 1) has a character"),
        (f"x-key=%C3%A9{SECRET}", "decodes to a line break, a control or a non-ASCII character"),
    ],
)
@pytest.mark.parametrize("variable", ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"])
def test_a_header_the_sdk_would_drop_or_no_request_can_carry_is_refused_never_shown(
    variable: str, value: str, words: str
) -> None:
    with pytest.raises(OtelSetupError) as raised:
        check_environment({variable: value}, export=True)
    message = str(raised.value)
    assert message.startswith(f"{variable}: ") and words in message, message
    assert SECRET not in message and "\n" not in message


def test_usable_headers_pass() -> None:
    fine = f"Authorization=Basic%20{SECRET},x-langfuse-ingestion-version=4, x-tenant = a b ,"
    check_environment({"OTEL_EXPORTER_OTLP_HEADERS": fine}, export=True)
    # the traces' variable wins, as in the SDK: the other one is not read
    check_environment({"OTEL_EXPORTER_OTLP_TRACES_HEADERS": fine, "OTEL_EXPORTER_OTLP_HEADERS": "broken"}, export=True)


@pytest.mark.parametrize(
    ("environ", "words"),
    [
        ({"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, "OTEL_EXPORTER_OTLP_COMPRESSION='zstd': "),
        ({"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "br", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}, "TRACES_COMP"),
        ({"OTEL_EXPORTER_OTLP_CERTIFICATE": "/no/ca.pem"}, "OTEL_EXPORTER_OTLP_CERTIFICATE='/no/ca.pem' is not a file"),
        ({"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": "/no/k"}, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY='/no/k'"),
        ({"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "/no/c"}, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE='/no/c'"),
        ({"OTEL_SDK_DISABLED": "1"}, "OTEL_SDK_DISABLED='1' is neither true nor false"),
        ({"OTEL_RESOURCE_ATTRIBUTES": "a=b,c"}, "OTEL_RESOURCE_ATTRIBUTES: entry 2 is not key=value"),
        ({"OTEL_RESOURCE_ATTRIBUTES": " = x"}, "OTEL_RESOURCE_ATTRIBUTES: entry 1 is not key=value"),
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL='grpc'"),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "-1"}, "OTEL_EXPORTER_OTLP_TIMEOUT='-1'"),
        ({"OTEL_EXPERIMENTAL_RESOURCE_DETECTORS": "os,nosuch"}, "OTEL_EXPERIMENTAL_RESOURCE_DETECTORS names 'nosuch'"),
    ],
)
def test_every_other_value_the_export_reads_is_refused_by_its_variable(environ: dict[str, str], words: str) -> None:
    with pytest.raises(OtelSetupError) as raised:
        check_environment(environ, export=True)
    assert words in str(raised.value) and "; " in str(raised.value), raised.value


def test_usable_values_pass(tmp_path: pytest.TempPathFactory) -> None:
    ca = tmp_path / "ca.pem"  # type: ignore[operator]
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    check_environment(
        {
            "OTEL_EXPORTER_OTLP_COMPRESSION": " GZIP ",
            "OTEL_EXPORTER_OTLP_CERTIFICATE": str(ca),
            "OTEL_SDK_DISABLED": "False",
            "OTEL_RESOURCE_ATTRIBUTES": "service.name=agents,deployment.environment=ci%2Cnightly,",
            "OTEL_SERVICE_NAME": "anything at all",
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental,http",
            "OTEL_EXPERIMENTAL_RESOURCE_DETECTORS": "process, os,*",
        },
        export=True,
    )


def test_only_what_a_session_reads_is_refused() -> None:
    """A file of spans reads the resource, not the collector's variables; a disabled SDK reads none of them."""
    collector = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://[::1:4318", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}
    check_environment(collector, export=False)
    check_environment({**collector, "OTEL_SDK_DISABLED": " true "}, export=True)
    with pytest.raises(OtelSetupError, match="OTEL_RESOURCE_ATTRIBUTES"):
        check_environment({**collector, "OTEL_RESOURCE_ATTRIBUTES": "x"}, export=False)
    assert sdk_disabled({"OTEL_SDK_DISABLED": "TRUE"}) and not sdk_disabled({})


def test_a_resource_detector_nothing_registers_is_refused_for_a_file_of_spans_too() -> None:
    """The SDK would log the unknown name with a traceback when it builds the resource, and skip it."""
    with pytest.raises(OtelSetupError) as raised:
        check_environment({"OTEL_EXPERIMENTAL_RESOURCE_DETECTORS": "gcp_nope"}, export=False)
    message = str(raised.value)
    assert "'gcp_nope'" in message and "installed: " in message and "otel" in message and "; " in message, message


#: A credential of the collector's (OTEL_EXPORTER_OTLP_HEADERS): a message about the variable never shows it.
AUTH = "otlpHeaderSecret5150abcd"

#: (variable, value, what the one line says about it): every way an export variable can be unusable (moved from
#: tests/integration/report/test_otel_variables_checked.py, which keeps two of them end to end).
EXPORT_PROBLEMS = [
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://[::1:4318", "OTEL_EXPORTER_OTLP_ENDPOINT='http://[::1:4318' is not a URL"),
    ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://[::1:4318/v1/traces", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://[fe80::zz]:4318", "is not a URL"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:99999", "port"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318x", "port"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://", "no host"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://:4318", "no host"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://local host:4318", "OTEL_EXPORTER_OTLP_ENDPOINT="),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318?tenant=a", "query"),
    ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "localhost:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="),
    ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL='grpc'"),
    ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon", "OTEL_EXPORTER_OTLP_TIMEOUT='soon'"),
    ("OTEL_EXPORTER_OTLP_HEADERS", f"Bearer {AUTH}", "OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not name=value"),
    ("OTEL_EXPORTER_OTLP_HEADERS", f"x-tenant=a,authorization=Bearer%0A{AUTH}", "the header 'authorization'"),
    ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", f'authorization=Bearer "{AUTH}"', "OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
    ("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", "OTEL_EXPORTER_OTLP_COMPRESSION='zstd'"),
    ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "brotli", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION='brotli'"),
    ("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nowhere/ca.pem", "OTEL_EXPORTER_OTLP_CERTIFICATE='/nowhere/ca.pem'"),
    ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/nowhere/client.key", "OTEL_EXPORTER_OTLP_CLIENT_KEY"),
    ("OTEL_SDK_DISABLED", "yes", "OTEL_SDK_DISABLED='yes'"),
    ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci,team", "OTEL_RESOURCE_ATTRIBUTES: entry 2"),
    ("OTEL_RESOURCE_ATTRIBUTES", "=ci", "OTEL_RESOURCE_ATTRIBUTES: entry 1"),
    ("OTEL_EXPERIMENTAL_RESOURCE_DETECTORS", "nosuch", "OTEL_EXPERIMENTAL_RESOURCE_DETECTORS names 'nosuch'"),
]


@pytest.mark.parametrize(("variable", "value", "named"), EXPORT_PROBLEMS)
def test_every_value_the_export_cannot_use_is_one_line_naming_it(variable: str, value: str, named: str) -> None:
    """What ``--consistency-otel`` refuses before any test (``plugin.configure.check_otel`` prefixes the option):
    one line naming the variable, then what to do, never the collector's credential."""
    with pytest.raises(OtelSetupError) as raised:
        check_environment({variable: value}, export=True)
    line = str(raised.value)
    assert named in line and variable in line and "; " in line, line
    assert "\n" not in line and AUTH not in line, line
    if "ENDPOINT" in variable:
        assert "e.g. http://localhost:4318" in line, line
