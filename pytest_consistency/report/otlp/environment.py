"""The ``OTEL_*`` variables the plugin reads, each checked before the session starts.

Why before: the spans are sent (or written) at the end of the session, so a value that cannot be used would cost the
whole run and then say so in passing, or not at all: a malformed endpoint was an INTERNALERROR, a port out of range
or a missing host one "not exported" line at the end, ``http://`` a request to a host called ``v1``; a header entry,
a resource attribute or a compression the SDK cannot read it drops with a warning nobody sees, so the collector
answers 401 or files the spans under another service. Each check names the variable and the fix in one line, and
never shows a header's value (a collector's credential) or an endpoint's user and password.

What is read depends on what is asked. ``--consistency-otel`` reads the collector's variables (endpoint, protocol,
timeout, headers, compression, certificates: the SDK reads the last three itself, as the
``OTEL_EXPORTER_OTLP_TRACES_*`` variable or else the ``OTEL_EXPORTER_OTLP_*`` one) and the spans'; the
``otlp-json`` output sends nothing and reads only the spans' (the resource: ``OTEL_SERVICE_NAME``,
``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_EXPERIMENTAL_RESOURCE_DETECTORS``; ``OTEL_SEMCONV_STABILITY_OPT_IN``, whose
unknown values the conventions say to ignore). ``OTEL_SDK_DISABLED=true`` exports nothing, so nothing else of the
export is read then. The checks are put together by ``export.check_environment``, which knows the protocols the
exporters speak.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from importlib.metadata import entry_points
from urllib.parse import unquote, urlsplit


class OtelSetupError(ValueError):
    """The environment asks for an export this plugin cannot make (a protocol it does not speak, a bad value)."""


PROTOCOL_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
TIMEOUT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
HEADER_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
COMPRESSION_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION")
#: The files the SDK's transport reads (the CA bundle, the client's key and certificate), traces' variable first.
FILE_VARIABLES = tuple(
    (f"OTEL_EXPORTER_OTLP_TRACES_{what}", f"OTEL_EXPORTER_OTLP_{what}")
    for what in ("CERTIFICATE", "CLIENT_KEY", "CLIENT_CERTIFICATE")
)
#: What the SDK's OTLP/HTTP exporter compresses with (``Compression``).
COMPRESSIONS = ("gzip", "deflate", "none")
EXAMPLE_ENDPOINT = "e.g. http://localhost:4318"

#: A header's name (an HTTP token), and the characters its value may hold as the SDK reads the variable (printable
#: ASCII but ``"``, ``,``, ``;`` and ``\``; a space too: the SDK accepts one unencoded, as other languages' SDKs do).
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.0-9A-Z^_`a-z|~]+")
_HEADER_VALUE = re.compile(r"[\x20\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*")
#: What a host name may hold, unbracketed (letters, digits, ``-``, ``.``, ``_``; an IDNA name is written as ASCII).
_HOST = re.compile(r"[A-Za-z0-9\-._]+")
_BRACKETED = re.compile(r"\[[^\]]*\](?::[^:]*)?")


def chosen(environ: Mapping[str, str], names: tuple[str, ...]) -> tuple[str, str] | None:
    """The first of ``names`` that is set to something (the traces' variable wins, as in the SDK), and its value."""
    for name in names:
        value = environ.get(name, "")
        if value.strip():
            return name, value
    return None


def sdk_disabled(environ: Mapping[str, str]) -> bool:
    """``OTEL_SDK_DISABLED``: ``true`` (any case) turns the export off, ``false`` or nothing leaves it on; anything
    else is refused rather than read as ``false`` (the SDK's reading), which would export what was meant not to be."""
    raw = environ.get("OTEL_SDK_DISABLED", "")
    value = raw.strip().lower()
    if value not in ("", "true", "false"):
        raise OtelSetupError(f"OTEL_SDK_DISABLED={raw!r} is neither true nor false; set it to true to export nothing")
    return value == "true"


def shown_url(value: str) -> str:
    """``value`` as a message may show it: without what comes before an ``@`` in its authority (a user and password),
    whether or not the URL parses."""
    scheme, sep, rest = value.partition("://")
    if not sep:
        scheme, rest = "", value
    authority_end = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    authority, tail = rest[:authority_end], rest[authority_end:]
    if "@" in authority:
        authority = "<redacted>@" + authority.rpartition("@")[2]
    return f"{scheme}{sep}{authority}{tail}"


def checked_endpoint(variable: str, value: str) -> str:
    """The endpoint in ``variable``, stripped, when it is an http(s) URL the exporter can send to; else
    :class:`OtelSetupError` naming the variable, what is wrong and the fix."""
    endpoint = value.strip()
    traces = variable == ENDPOINT_VARIABLES[0]
    problem = endpoint_problem(endpoint, base=not traces)
    if problem is None:
        return endpoint
    fix = (
        f"set it to the collector's full traces URL, {EXAMPLE_ENDPOINT}/v1/traces, or unset it and set "
        "OTEL_EXPORTER_OTLP_ENDPOINT to the collector's base URL"
        if traces
        else f"set it to the collector's base URL, {EXAMPLE_ENDPOINT}"
    )
    raise OtelSetupError(f"{variable}={shown_url(endpoint)!r} {problem}; {fix}")


def endpoint_problem(endpoint: str, base: bool) -> str | None:
    """What makes ``endpoint`` a URL the exporter cannot send to, or None; a ``base`` URL gets ``/v1/traces``
    appended, so it has no query string or fragment."""
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in endpoint):
        return "contains whitespace or a control character"
    try:
        parts = urlsplit(endpoint)
    except ValueError as exc:  # an unbalanced IPv6 bracket: "Invalid IPv6 URL"
        return f"is not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "is not an http(s) URL (the OTLP/HTTP exporter speaks http:// and https:// only)"
    host = parts.hostname
    if not host:
        return "has no host"
    if "[" in parts.netloc:
        try:
            ipaddress.IPv6Address(host.partition("%")[0])
        except ValueError:
            return f"is not a URL (the bracketed host {host!r} is not an IPv6 address)"
        if not _BRACKETED.fullmatch(parts.netloc.rpartition("@")[2]):
            return "is not a URL (only a port may follow the bracketed host)"
    elif not _HOST.fullmatch(host):
        return f"is not a URL (the host {host!r} holds a character a host name cannot)"
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        return "has a port that is not a number from 1 to 65535"
    if base and (parts.query or parts.fragment):
        return "has a query string or fragment, which /v1/traces would be appended after"
    return None


def check_headers(environ: Mapping[str, str]) -> None:
    """The headers the SDK sends with every export (``name=value`` entries separated by commas, values
    percent-encoded): an entry it would drop, or a value that no HTTP request can carry, is refused by its place
    and its name, never its value (a collector's credential)."""
    found = chosen(environ, HEADER_VARIABLES)
    if found is None:
        return
    variable, raw = found
    fix = "write each header as name=value, separated by commas, with the value percent-encoded (a space as %20)"
    for index, entry in enumerate(raw.split(","), 1):
        if not entry.strip():
            continue
        name, sep, value = entry.partition("=")
        name = name.strip()
        if not sep or not _HEADER_NAME.fullmatch(name):
            raise OtelSetupError(f"{variable}: entry {index} is not name=value with a header name before '='; {fix}")
        shown = name.lower()
        if not _HEADER_VALUE.fullmatch(value.strip()):
            raise OtelSetupError(
                f"{variable}: the header {shown!r} (entry {index}) has a character its value cannot hold unencoded "
                f"(a quote, ';' or a non-ASCII character); {fix}"
            )
        decoded = unquote(value).strip()
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in decoded) or not decoded.isascii():
            raise OtelSetupError(
                f"{variable}: the header {shown!r} (entry {index}) decodes to a line break, a control or a non-ASCII "
                f"character, which no HTTP header can carry; {fix}"
            )


def check_compression(environ: Mapping[str, str]) -> None:
    found = chosen(environ, COMPRESSION_VARIABLES)
    if found is not None and found[1].strip().lower() not in COMPRESSIONS:
        variable, raw = found
        raise OtelSetupError(
            f"{variable}={raw!r}: the OTLP/HTTP exporter compresses with {', '.join(COMPRESSIONS)}; set it to one "
            "of them (or unset it)"
        )


def check_files(environ: Mapping[str, str]) -> None:
    """The CA bundle and the client's key and certificate the SDK's transport opens when it first sends."""
    for names in FILE_VARIABLES:
        found = chosen(environ, names)
        if found is not None and not os.path.isfile(found[1]):
            variable, raw = found
            raise OtelSetupError(
                f"{variable}={raw!r} is not a file; set it to the path of the PEM file (or unset it to use the "
                "system's certificates)"
            )


def check_resource(environ: Mapping[str, str]) -> None:
    """``OTEL_RESOURCE_ATTRIBUTES``, as the SDK reads it (``key=value`` entries separated by commas, values
    percent-encoded): an entry it would drop with a warning is refused by its place (a value may be anything)."""
    raw = environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    for index, entry in enumerate(raw.split(","), 1):
        if not entry.strip():
            continue
        key, sep, _ = entry.partition("=")
        if not sep or not key.strip():
            raise OtelSetupError(
                f"OTEL_RESOURCE_ATTRIBUTES: entry {index} is not key=value; write each attribute as key=value, "
                "separated by commas (a comma or '=' in a value percent-encoded: %2C, %3D)"
            )


#: The entry-point group the SDK loads ``OTEL_EXPERIMENTAL_RESOURCE_DETECTORS``'s names from; ``*`` means all of them.
DETECTOR_GROUP = "opentelemetry_resource_detector"


def check_detectors(environ: Mapping[str, str]) -> None:
    """``OTEL_EXPERIMENTAL_RESOURCE_DETECTORS``, which the SDK reads when it builds the resource: a name no installed
    package registers it logs with a traceback at the end of the session and skips, so the resource lacks what was
    asked. Refused by its name (a detector's name is no secret), with the names that are installed."""
    raw = environ.get("OTEL_EXPERIMENTAL_RESOURCE_DETECTORS", "")
    names = [name.strip() for name in raw.split(",") if name.strip()]
    if not names:
        return
    installed = set(entry_points(group=DETECTOR_GROUP).names)
    unknown = [name for name in names if name != "*" and name not in installed]
    if unknown:
        raise OtelSetupError(
            f"OTEL_EXPERIMENTAL_RESOURCE_DETECTORS names {', '.join(repr(n[:60]) for n in unknown)}, which no "
            f"installed package registers (installed: {', '.join(sorted(installed)) or 'none'}); remove it or "
            "install the package that provides it"
        )
