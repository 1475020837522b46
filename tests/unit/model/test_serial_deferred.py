"""``serial``'s deferred types: the report model names the cause, trajectory, resampling and comparison types in
annotations its modules import only for type checking (issue 30), and a report that holds each of them still reads
back whole in a process that has loaded none of them."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cause_summaries import cause_summary

from pytest_consistency.analysis.baseline import compare
from pytest_consistency.model.resample import DecisionRow, ResampleSummary
from pytest_consistency.model.result import SessionSummary
from pytest_consistency.model.serial import DEFERRED

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
    import pytest_consistency.model.result as result
    from pytest_consistency.model.serial import _names

    names = _names(result.__name__)
    assert all(name in sys.modules for name in DEFERRED)
    assert all(names[name] is value for name, value in vars(result).items())


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
