"""pytest's own text of a report, redacted in place before pytest prints, serialises or writes it.

A key echoed into a failing assertion (``assert "widget" in answer``) is in the report's ``longrepr`` (the source
lines, the ``E`` explanation, the crash message of the short summary and of JUnit's ``<failure message>``, the
locals of ``-l``), in its captured output and log sections (``Captured stdout call``, JUnit's ``<system-out>``) and
in ``record_property`` values (JUnit's ``<properties>``). Each string is replaced where it is, so the report keeps
its structure: pytest still colours it, JUnit still finds the crash message, xdist still serialises it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from _pytest.reports import BaseReport

from pytest_consistency.cassette.rescrub import write_atomic
from pytest_consistency.plugin.carried import has_text

#: pytest's representation classes live in these modules; other objects are left alone (never walked).
_PYTEST_MODULES = ("_pytest.", "pytest.")


def redact_report(report: BaseReport, redact: Callable[[str], str]) -> None:
    """Redact every text of ``report`` (a test's, or a collector's) that pytest or a plugin prints or writes, in
    place."""
    if report.longrepr is not None:
        report.longrepr = _redacted(report.longrepr, redact, set())
    if report.sections:
        report.sections = [(title, redact(content)) for title, content in report.sections]
    test: Any = report  # only a test's report has these
    properties = getattr(test, "user_properties", None)
    if properties:
        test.user_properties = [(name, _property(value, redact)) for name, value in properties]
    wasxfail = getattr(test, "wasxfail", None)
    if isinstance(wasxfail, str):
        test.wasxfail = redact(wasxfail)


def _property(value: object, redact: Callable[[str], str]) -> object:
    """A property as JUnit writes it (``str(value)``), redacted; unchanged values keep their type."""
    text = value if isinstance(value, str) else str(value)
    cleaned = redact(text)
    return value if cleaned == text else cleaned


def _redacted(value: Any, redact: Callable[[str], str], seen: set[int]) -> Any:
    """``value`` with its strings redacted: pytest's representation objects are changed in place (the chain shares
    them with ``reprtraceback`` and ``reprcrash``), strings and tuples are rebuilt, lists changed in place."""
    if isinstance(value, str):
        return redact(value)
    if id(value) in seen:
        return value
    if isinstance(value, tuple):
        return tuple(_redacted(item, redact, seen) for item in value)
    seen.add(id(value))
    if isinstance(value, list):
        value[:] = [_redacted(item, redact, seen) for item in value]
    elif isinstance(value, dict):
        for key in list(value):
            value[key] = _redacted(value[key], redact, seen)
    elif type(value).__module__.startswith(_PYTEST_MODULES) and hasattr(value, "__dict__"):
        for name, item in list(vars(value).items()):
            if isinstance(item, (str, tuple, list, dict)) or type(item).__module__.startswith(_PYTEST_MODULES):
                object.__setattr__(value, name, _redacted(item, redact, seen))
    return value


def redact_stats(stats: Mapping[str, Iterable[Any]], redact: Callable[[str], str]) -> int:
    """Every report and warning the terminal holds, redacted in place; returns how many had text."""
    done: set[int] = set()
    count = 0
    for entries in stats.values():
        for entry in entries:
            if id(entry) in done:
                continue
            done.add(id(entry))
            if isinstance(entry, BaseReport):
                if has_text(entry):
                    redact_report(entry, redact)
                    count += 1
            elif type(entry).__name__ == "WarningReport" and isinstance(getattr(entry, "message", None), str):
                entry.message = redact(entry.message)
                count += 1
    return count


def redact_junit(path: Path, redact: Callable[[str], str]) -> bool:
    """JUnit's file at ``path`` with every text and attribute redacted; whether it was rewritten. A file that is
    not XML is redacted as text (HTML character references are among the encodings searched)."""
    import xml.etree.ElementTree as ET

    try:
        tree = ET.parse(path)
    except FileNotFoundError:
        return False
    except ET.ParseError:
        text = path.read_text(encoding="utf-8", errors="replace")
        cleaned = redact(text)
        if cleaned != text:
            write_atomic(path, cleaned)
        return cleaned != text
    root = tree.getroot()
    changed = False
    for element in root.iter():
        for name in ("text", "tail"):
            value = getattr(element, name)
            if value:
                cleaned = redact(value)
                if cleaned != value:
                    setattr(element, name, cleaned)
                    changed = True
        for name, value in element.attrib.items():
            cleaned = redact(value)
            if cleaned != value:
                element.set(name, cleaned)
                changed = True
    if changed:  # as pytest and the annotator write it
        write_atomic(path, '<?xml version="1.0" encoding="utf-8"?>' + ET.tostring(root, encoding="unicode"))
    return changed
