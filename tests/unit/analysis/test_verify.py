"""The checks of ``pytest-consistency verify``: each sequential decision of a summary recomputed from its records, and
the registry a further kind of decision joins."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.analysis.verify import (
    CHECKS,
    DecisionCheck,
    Disagreement,
    TaskDecisions,
    Unverifiable,
    verify,
)
from pytest_consistency.model.records import RepetitionResult
from pytest_consistency.model.result import Analysis, SessionSummary


def session(pattern: str, n: int = 40, sequential: bool = True) -> SessionSummary:
    """One min_rate 0.8 task: repetition i passed when ``pattern[i-1]`` is P (later ones not needed)."""
    records = [
        RepetitionResult(
            "t", f"t.py::t[rep{i}]", i, n, 1, 1.0, min_rate=0.8, outcome="passed" if c == "P" else "failed"
        )
        for i, c in enumerate(pattern, start=1)
    ]
    records += [
        RepetitionResult("t", f"t.py::t[rep{i}]", i, n, 1, 1.0, min_rate=0.8, outcome="curtailed")
        for i in range(len(pattern) + 1, n + 1)
    ]
    return build_summary(records, analysis=Analysis(sequential_alpha=0.05 if sequential else None))


def test_a_summary_verifies_against_its_own_records_and_an_edited_one_does_not() -> None:
    summary = session("P" * 16)
    assert (summary.tasks[0].verdict, summary.tasks[0].decided_by, summary.tasks[0].decided_at) == (
        "pass",
        "evidence",
        16,
    )
    assert verify(summary).decisions == 1 and verify(summary).disagreements == []
    summary.tasks[0] = replace(summary.tasks[0], decided_by="cap")
    assert verify(summary).disagreements == [Disagreement("tasks", "t", "pass (cap at 16)", "pass (evidence at 16)")]


def test_a_fixed_n_summary_is_not_verifiable() -> None:
    with pytest.raises(Unverifiable, match="not a sequential report"):
        verify(session("P" * 40, sequential=False))


def test_a_further_kind_of_decision_is_one_more_check() -> None:
    @dataclass(frozen=True)
    class Always:
        name: str = "suite gates"

        def decisions(self, summary: SessionSummary) -> int:
            return 2

        def __call__(self, summary: SessionSummary) -> list[Disagreement]:
            return [Disagreement(self.name, "gap", "pass (round 2)", "undecided")]

    checks: tuple[DecisionCheck, ...] = (*CHECKS, Always())
    found = verify(session("FFF"), checks)
    assert found.decisions == 3
    assert [d.text for d in found.disagreements] == ["gap: stated pass (round 2), recomputed undecided (suite gates)"]
    assert isinstance(CHECKS[0], TaskDecisions)
