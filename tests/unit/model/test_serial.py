"""``serial.check_values``: what JSON holds but the report model cannot use, refused by the field's path."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cause_summaries import cause_summary

import pytest_consistency.secrets.structures as redact_module
from pytest_consistency.analysis.baseline import compare
from pytest_consistency.model.resample import DecisionRow, ResampleSummary
from pytest_consistency.model.result import SessionSummary
from pytest_consistency.model.serial import DEFERRED, ReportFormatError, _field_names, check_values, to_data


def test_a_number_beyond_a_float_is_named_by_its_path() -> None:
    data = json.loads('{"tasks": [{"gap_pp": 1.5}, {"gap_pp": 1e400}]}')
    with pytest.raises(ReportFormatError, match=r"^r\.json\.tasks\[1\]\.gap_pp: a number beyond the range of a float"):
        check_values(data, "r.json", 10)
    with pytest.raises(ReportFormatError, match=r"^r\.json\.x\[0\]: .*\(read as -inf\)"):
        check_values(json.loads('{"x": [-1e999]}'), "r.json", 10)


def test_nesting_is_counted_from_the_top_and_refused_past_the_limit() -> None:
    value: object = 0
    for _ in range(3):
        value = [value]
    check_values({"a": value}, "r", 4)  # the object, then three lists: 4 levels
    with pytest.raises(ReportFormatError, match=r"^r\.a\[0\]\[0\]: nested more than 3 levels deep"):
        check_values({"a": value}, "r", 3)


def test_a_value_deeper_than_the_recursion_limit_is_refused_without_recursion() -> None:
    value: object = []
    for _ in range(50_000):
        value = [value]
    with pytest.raises(ReportFormatError, match=r"^r(\[0\]){12}\.\.\.: nested more than 105 levels deep"):
        check_values(value, "r", 105)


def test_finite_numbers_strings_and_flat_data_pass() -> None:
    check_values({"a": [1, 2.5, "caf\udcff", None, True, {"b": -0.0}]}, "r", 3)


# From test_serial_costs.py:
# What the end of a session does not pay for: structural guards of its savings (counts of work, no timings).
#
# Each test fails when a saving is undone: redaction of a string the report repeats, the dataclass fields looked up
# per record instead of per type, the report dumped by the pure-Python indenting encoder, the cyclic collector left
# running (the benchmark is ``benchmarks/trajectory.py``; ``docs/performance.md`` has its figures).


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


# From test_serial_deferred.py:
# ``serial``'s deferred types: the report model names the cause, trajectory, resampling and comparison types in
# annotations its modules import only for type checking (issue 30), and a report that holds each of them still reads
# back whole in a process that has loaded none of them.


READ_BACK = """
import json
import sys

from pytest_consistency.model.result import SessionSummary
from pytest_consistency.model.serial import DEFERRED

before = [name for name in DEFERRED if name in sys.modules]
text = open(sys.argv[1]).read()
summary = SessionSummary.from_dict(json.loads(text))
kinds = {
    "trajectory": sorted({type(t.trajectory).__name__ for t in summary.tasks if t.trajectory is not None}),
    "why": sorted({type(t.why).__name__ for t in summary.tasks if t.why is not None}),
    "evidence": sorted({type(e).__name__ for t in summary.tasks if t.why is not None for e in t.why.sides}),
    "causes": sorted({type(c).__name__ for c in summary.causes.values()}),
    "suite_change": type(summary.comparison.suite_change).__name__,
    "resample": type(summary.resample).__name__,
}
again = json.dumps(summary.to_dict(), sort_keys=True)
print(json.dumps({"before": before, "kinds": kinds, "same": again == text}))
"""


def test_a_report_holding_every_deferred_type_reads_back_whole_in_a_fresh_process(tmp_path: Path) -> None:
    summary = cause_summary()  # tasks of every cause, their divergence maps and findings, read back from JSON
    summary.comparison = compare(summary, summary, label="itself")
    summary.resample = ResampleSummary("t", 2, 1, 4, 4, 3, "cassettes/x", rows=[DecisionRow("k", "tool k", 4, 2)])
    assert summary.comparison.suite_change is not None
    text = json.dumps(summary.to_dict(), sort_keys=True)
    path = tmp_path / "report.json"
    path.write_text(text)

    probe = subprocess.run(
        [sys.executable, "-c", READ_BACK, str(path)], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    out = json.loads(probe.stdout)
    assert out["before"] == [], "the probe would not exercise the deferral: the model imported them itself"
    assert out["kinds"] == {
        "trajectory": ["DivergenceMap"],
        "why": ["Finding"],
        "evidence": ["Evidence"],
        "causes": ["CauseShare"],
        "suite_change": "StratifiedDrop",
        "resample": "ResampleSummary",
    }
    assert out["same"]


def test_an_annotation_finds_its_own_modules_name_before_a_deferred_one_of_the_same_name() -> None:
    """``Interval`` is in ``stats.stratified``'s names too (it imports it): the model module's own comes first, so a
    deferred module can never shadow what an annotation already named."""
    import importlib
    import typing

    import pytest_consistency.model.result as result
    from pytest_consistency.model.serial import _hints

    everything: dict[str, object] = {}
    for deferred in DEFERRED:
        everything.update(vars(importlib.import_module(deferred)))
    everything.update(vars(result))  # the module's own names last: they win
    _hints.cache_clear()
    classes = [cls for cls in vars(result).values() if isinstance(cls, type) and cls.__module__ == result.__name__]
    for cls in classes:
        if hasattr(cls, "__dataclass_fields__"):
            assert _hints(cls) == typing.get_type_hints(cls, globalns=everything, localns=everything), cls


def test_a_deferred_module_imported_again_is_the_one_a_report_is_rebuilt_with(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytester's in-process sessions restore ``sys.modules``: a deferred module first loaded inside one is dropped
    after it and imported again as another module. Reports read afterwards must be made of the classes ``sys.modules``
    holds now, not of the dropped module's that the hints were first resolved with."""
    data = json.loads(json.dumps(cause_summary().to_dict()))
    SessionSummary.from_dict(data)  # every hint and converter resolved and cached
    name = "pytest_consistency.model.cause"
    dropped = sys.modules[name]
    monkeypatch.delitem(sys.modules, name)
    again = importlib.import_module(name)
    assert again is not dropped and again.Finding is not dropped.Finding

    found = [t.why for t in SessionSummary.from_dict(data).tasks if t.why is not None]
    assert found and all(isinstance(why, again.Finding) for why in found)
    monkeypatch.undo()  # the first module back: the next read is made of its classes again
    found = [t.why for t in SessionSummary.from_dict(data).tasks if t.why is not None]
    assert all(isinstance(why, dropped.Finding) for why in found)
