"""What the end of a session does not pay for: structural guards of its savings (counts of work, no timings).

Each test fails when a saving is undone: redaction of a string the report repeats, the dataclass fields looked up
per record instead of per type, the report dumped by the pure-Python indenting encoder, the cyclic collector left
running (the benchmark is ``benchmarks/trajectory.py``; ``docs/performance.md`` has its figures).
"""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import pytest_consistency.secrets.structures as redact_module
from pytest_consistency.model.serial import _field_names, to_data
from pytest_consistency.plugin.gc_pause import gc_paused
from pytest_consistency.report.json_report import write_atomic


def test_each_distinct_string_is_redacted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = redact_module.redactor

    def counting(secrets=(), shapes=True):
        inner = real(secrets, shapes)

        def redact(text: str) -> str:
            seen.append(text)
            return inner(text)

        return redact

    monkeypatch.setattr(redact_module, "redactor", counting)
    call = {"url": "http://127.0.0.1/v1/chat/completions", "model": "m", "key": "sk-" + "a" * 40}
    data = {"tasks": [{"calls": [dict(call) for _ in range(50)]} for _ in range(20)]}
    out = redact_module.redact_strings(data, ["sk-" + "a" * 40])
    assert sorted(seen) == sorted({"tasks", "calls", "url", "model", "key", *call.values()})
    assert (
        out["tasks"][19]["calls"][49]["key"] == redact_module.REDACTED and out["tasks"][0]["calls"][0]["model"] == "m"
    )


@dataclass
class Leaf:
    name: str
    value: float = 1.5


@dataclass
class Branch:
    leaves: list[Leaf] = field(default_factory=list)
    tags: dict[str, int] = field(default_factory=dict)


def test_a_dataclass_types_fields_are_looked_up_once_whatever_the_number_of_records() -> None:
    _field_names.cache_clear()
    data = to_data([Branch([Leaf(str(i)) for i in range(100)], {"a": 1}) for _ in range(10)])
    assert data[9]["leaves"][99] == {"name": "99", "value": 1.5} and data[0]["tags"] == {"a": 1}
    info = _field_names.cache_info()
    assert info.misses == len({Branch, Leaf, list, dict, str, float, int}) - 3  # scalars never asked
    assert info.hits >= 1000


def test_the_report_file_is_not_the_indenting_encoders_text(tmp_path: Path) -> None:
    call = {"method": "POST", "status": 200}
    data = {"schema": "s", "tasks": [{"repetitions": [{"repeat": 1, "calls": [call, call]}]}]}
    write_atomic(tmp_path / "r.json", data)
    text = (tmp_path / "r.json").read_text()
    assert json.loads(text) == data
    assert text != json.dumps(data, indent=2) + "\n"
    assert text.count('{"method": "POST", "status": 200}') == 2  # each call record one line, by the C encoder


def test_the_collector_is_off_inside_and_as_it_was_after() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the user's choice is kept
    finally:
        gc.enable()
    with pytest.raises(KeyError), gc_paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_reading_a_report_back_spells_no_position_and_takes_each_hint_apart_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``from_data`` (every Markdown/HTML output, merge, show, a baseline) built an error path per value and took
    each type hint apart per value: 12.9 s for a 1,000-task report of 20 calls a repetition."""
    import pytest_consistency.model.serial as serial
    from pytest_consistency.model.serial import from_data

    def spelled(where):  # only an error spells out where it is
        raise AssertionError(f"a position was spelled out on the success path: {where!r}")

    monkeypatch.setattr(serial, "_spelled", spelled)
    data = to_data([Branch([Leaf(str(i)) for i in range(100)], {"a": 1}) for _ in range(10)])
    first = from_data(list[Branch], data)
    built = dict(serial._CONVERTERS)
    again = from_data(list[Branch], data)
    assert first == again and again[3].leaves[7] == Leaf("7", 1.5)
    assert serial._CONVERTERS == built  # nothing taken apart the second time
    monkeypatch.undo()
    data[9]["leaves"][42]["value"] = "x"
    with pytest.raises(serial.ReportFormatError, match=r"^list\[9\]\.leaves\[42\]\.value: 'x' is not a number$"):
        from_data(list[Branch], data, "list")
