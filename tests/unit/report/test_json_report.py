"""The JSON report's file (report.json_report): compact, not the indenting encoder's text."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_consistency.report.json_report import write_atomic


def test_the_report_file_is_not_the_indenting_encoders_text(tmp_path: Path) -> None:
    call = {"method": "POST", "status": 200}
    data = {"schema": "s", "tasks": [{"repetitions": [{"repeat": 1, "calls": [call, call]}]}]}
    write_atomic(tmp_path / "r.json", data)
    text = (tmp_path / "r.json").read_text()
    assert json.loads(text) == data
    assert text != json.dumps(data, indent=2) + "\n"
    assert text.count('{"method": "POST", "status": 200}') == 2  # each call record one line, by the C encoder
