"""A report written by a real session, with odd answers, round-trips exactly."""

from __future__ import annotations

import json

import pytest
from suites import ODD_SUITE

from pytest_consistency.model.result import SessionSummary


def test_a_report_with_odd_answers_round_trips_exactly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_task=ODD_SUITE)
    pytester.runpytest("--consistency-report=report.json", "--consistency-gap-max=50", "--pass-hat-k-min=1")
    text = (pytester.path / "report.json").read_text()
    data = json.loads(text)
    again = SessionSummary.from_dict(json.loads(text)).to_dict()
    assert again == data
    # Exactly, not just ==: -0.0 keeps its sign, 2**70 stays an int, 1 does not become 1.0.
    assert json.dumps(again, sort_keys=True) == json.dumps(data, sort_keys=True)
    odd = next(t for t in data["tasks"] if t["answers"][0] == 1e308)
    assert odd["answers"] == [1e308, -0.0, 2**70, "", None] and odd["repetitions"][4]["answer_recorded"] is True
    assert str(odd["answers"][1]) == "-0.0" and isinstance(odd["answers"][2], int)
