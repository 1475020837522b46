"""Graded outcomes: ``consistency.score(x)`` is kept per repetition and shown as a mean with its interval beside the
figures; the marker's ``score_min`` thresholds it into the outcome the figures are computed on, serially, under
``-n 2`` and in a replayed session alike."""

from __future__ import annotations

import pytest
from suites import consistency_section
from suites import load_report as report

#: Repetition i's score (repetitions 1 to 4): 2 reach 0.7, 2 do not.
SUITE = """
import pytest

SCORES = {1: 0.9, 2: 0.3, 3: 0.8, 4: 0.6}

@pytest.mark.repeat_consistency(n=4, min_pass=0.5, score_min=0.7)
def test_graded(consistency):
    consistency.score(SCORES[consistency.repeat])
    consistency.record("the same answer")

@pytest.mark.repeat_consistency(n=4)
def test_scored_only(consistency):
    consistency.score(SCORES[consistency.repeat] / 2)

@pytest.mark.repeat_consistency(n=2, score_min=0.5)
def test_no_score(consistency):
    pass
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_score_min_decides_each_repetition_and_the_mean_score_is_shown(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    pytester.makepyfile(test_agent=SUITE)
    result = pytester.runpytest(
        "-p", "no:randomly", "--consistency-report=report.json", "--consistency-md=summary.md", *workers
    )
    data = report(pytester)
    tasks = {t["task_id"].split("::")[1]: t for t in data["tasks"]}
    graded, scored_only, none = tasks["test_graded"], tasks["test_scored_only"], tasks["test_no_score"]
    by_repeat = {r["repeat"]: r for r in graded["repetitions"]}
    assert {i: (r["score"], r["outcome"]) for i, r in by_repeat.items()} == {
        1: (0.9, "passed"),
        2: (0.3, "failed"),
        3: (0.8, "passed"),
        4: (0.6, "failed"),
    }
    assert by_repeat[2]["message"] == "score 0.3 < score_min 0.7"
    assert (graded["passes"], graded["verdict"]) == (2, "pass")  # min_pass 0.5: 2 of 4
    # without score_min the test's own assertions decide: every repetition passed, the scores are kept
    assert scored_only["passes"] == 4 and [r["score"] for r in scored_only["repetitions"]] == [0.45, 0.15, 0.4, 0.3]
    # score_min and no score: the repetition fails, saying why
    assert none["passes"] == 0 and "no score" in none["repetitions"][0]["message"]
    # the figures are on the thresholded outcomes: the tasks' pass rates 2/4, 4/4 and 0/2
    summary = data["summary"]
    assert summary["mean_at_k"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert graded["score_mean"] == pytest.approx(0.65) and graded["scores"] == 4
    # the suite's mean score: the 8 scores given, with its Hoeffding interval
    assert summary["scores"] == 8 and summary["score_mean"] == pytest.approx((2.6 + 1.3) / 8)
    low, high = summary["score_interval"]["low"], summary["score_interval"]["high"]
    assert low == pytest.approx(max(0.0, 3.9 / 8 - 0.4802), abs=1e-3) and high == pytest.approx(
        3.9 / 8 + 0.4802, abs=1e-3
    )
    assert "mean score 0.487 [0.007, 0.968] (Hoeffding, 8 scores)" in consistency_section(result)
    assert (
        "| mean score (8 scores) | 0.487 | [0.007, 0.968] (Hoeffding) |" in (pytester.path / "summary.md").read_text()
    )
    assert result.ret == 1  # test_no_score fails its task
