"""A repetition's report serialises to JSON for any plugin that asks pytest for it (pytest-reportlog, a CI
uploader): the payload that stays an object in a serial session becomes its JSON text there, as under xdist."""

from __future__ import annotations

import json

import pytest

LOGGING_PLUGIN = """
import json

def pytest_runtest_logreport(report):
    # What pytest-reportlog does with each report: pytest's own serialisation, then plain json.dumps.
    config = report_config[0]
    data = config.hook.pytest_report_to_serializable(config=config, report=report)
    with open("reports.jsonl", "a") as handle:
        handle.write(json.dumps(data) + "\\n")

report_config = []

def pytest_configure(config):
    report_config.append(config)
"""


def test_a_serial_repetitions_report_serialises_to_json_with_its_payload(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(LOGGING_PLUGIN)
    pytester.makepyfile(
        """
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(consistency):
    consistency.record("same answer")
"""
    )
    result = pytester.runpytest("-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()
    lines = [json.loads(line) for line in (pytester.path / "reports.jsonl").read_text().splitlines()]
    payloads = [line["consistency_payload"] for line in lines if line.get("consistency_payload") is not None]
    assert payloads, lines
    for text in payloads:  # the payload's own JSON text, as an xdist worker sends it
        assert json.loads(text)["task_id"].endswith("::test_task")
