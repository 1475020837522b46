"""Words match numbers: eighty-column task ids are never cut into ambiguity. Adversarial round two, part 6."""

from __future__ import annotations

import pytest
from suites import cli, pattern_suite


def test_eighty_column_ids_are_never_cut_into_ambiguity(pytester: pytest.Pytester) -> None:
    long = "find-items-under-twenty-and-return-their-names-in-order-"
    patterns = {long + "alpha": "PPF", long + "alphb": "PPP"}
    pytester.makepyfile(pattern_suite(patterns, marker="min_pass=0.5"))
    result = pytester.runpytest("--consistency-report=report.json")
    assert result.ret == 0
    shown = cli("show", "report.json", cwd=pytester.path).stdout
    for text in (result.stdout.str(), shown):
        for task in patterns:
            assert f"test_task[{task}]" in text.replace("\n", "") or f"test_task[{task}]" in text, text
    assert "met min_pass 0.5, 1 failed" in shown
