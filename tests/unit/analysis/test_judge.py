"""The judge's figures of a rejudge session (``analysis.judge``), from typed records."""

from __future__ import annotations

import pytest

from pytest_consistency.analysis.judge import fold, judge_summary, majority
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.stats.metrics import TaskCounts, gap_pp


def rep(task: str, index: int, passed: bool, n: int = 8, k: int = 2, **fields: object) -> RepetitionResult:
    return RepetitionResult(
        task_id=task,
        nodeid=f"{task}[x]",
        repeat=index,
        n=n,
        k=k,
        min_pass=0.0,
        outcome="passed" if passed else "failed",
        **fields,  # type: ignore[arg-type]
    )


def test_pass_shares_flip_rate_and_the_gap_split() -> None:
    # 4 repetitions x 2 samples: (P, P), (P, F), (F, P), (F, F)
    outcomes = [True, True, True, False, False, True, False, False]
    summary = judge_summary([rep("t", i + 1, o) for i, o in enumerate(outcomes)], samples=2)
    [task] = summary.tasks
    assert [(r.repeat, r.samples, r.passed) for r in task.repetitions] == [(1, 2, 2), (2, 2, 1), (3, 2, 1), (4, 2, 0)]
    assert [r.pass_share for r in task.repetitions] == [1.0, 0.5, 0.5, 0.0]
    assert [r.verdicts for r in task.repetitions] == ["PP", "PF", "FP", "FF"]
    figures = task.figures
    assert figures.flip_rate == 0.5 and figures.flip_method == "clopper-pearson"
    # Observed: sample 1 of each repetition (P, P, F, F); majority, ties kept as observed: the same here.
    assert [(r.observed, r.majority) for r in task.repetitions] == [
        (True, True),
        (True, True),
        (False, False),
        (False, False),
    ]
    assert figures.observed_gap_pp == figures.majority_gap_pp == gap_pp(TaskCounts(2, 4, 2))
    assert figures.judge_gap_pp == 0.0
    assert summary.suite.judge_gap_interval is not None


def test_a_flipping_judge_on_an_agent_that_always_passes_is_the_judges_whole_gap() -> None:
    # 3 samples per repetition; the majority passes everywhere, sample 1 fails in two of four repetitions.
    outcomes = [False, True, True, True, True, True, False, True, True, True, True, True]
    [task] = judge_summary([rep("t", i + 1, o, n=12) for i, o in enumerate(outcomes)], samples=3).tasks
    assert task.figures.majority_gap_pp == 0.0
    assert task.figures.judge_gap_pp == pytest.approx(gap_pp(TaskCounts(2, 4, 2)))
    assert task.figures.flip_method == "hoeffding & first pairs"


def test_samples_that_are_not_verdicts_are_excluded_and_said() -> None:
    mismatch = CallRecord("POST", "http://h/v1/chat/completions", "http://h/v1", None, "m", error="replay_mismatch")
    reps = [
        rep("t", 1, True),
        rep("t", 2, False, calls=[mismatch]),
        rep("t", 3, True, infrastructure="the judge's route is unreachable"),
        rep("t", 4, True),
    ]
    [task] = judge_summary(reps, samples=2).tasks
    assert task.excluded == [
        "rep1@judge2: its agent's calls did not replay",
        "rep2@judge1: the judge's route is unreachable",
    ]
    assert [(r.samples, r.passed) for r in task.repetitions] == [(1, 1), (1, 1)]
    assert [r.verdicts for r in task.repetitions] == ["P-", "-P"]
    assert task.figures.flip_rate is None  # no repetition with two verdicts


def test_kappa_is_undefined_when_every_sample_agrees_and_the_figures_are_the_same_in_any_order() -> None:
    reps = [rep("a", i, True) for i in range(1, 5)] + [rep("b", i, i % 2 == 0) for i in range(1, 5)]
    first = judge_summary(reps, samples=2)
    assert first.tasks[0].figures.kappa is None and first.tasks[0].figures.kappa_interval is None
    assert judge_summary(list(reversed(reps)), samples=2) == first


def test_repetitions_whose_agent_did_the_same_share_one_majority() -> None:
    """A judge that passes one agent output 60 % of the time: per repetition, 5 samples give majorities that differ
    (4/5 pass, 2/5 fail), which a per-repetition vote would read as the agent's gap; pooled over the repetitions
    whose agent output is the same (6/10), every one passes and the whole gap is the judge's."""
    outcomes = [True, True, True, True, False, False, True, False, True, False]  # repetition 1, then 2
    same = [rep("t", i + 1, o, n=10, answer_recorded=True, answer="Paris") for i, o in enumerate(outcomes)]
    [task] = judge_summary(same, samples=5).tasks
    assert [(r.passed, r.majority) for r in task.repetitions] == [(4, True), (2, True)]
    assert task.figures.majority_gap_pp == 0.0
    assert task.figures.judge_gap_pp == task.figures.observed_gap_pp
    # The same verdicts on two different agent outputs: each output's own majority, the difference the agent's.
    differ = [
        rep("t", i + 1, o, n=10, answer_recorded=True, answer="Paris" if i < 5 else "Lyon")
        for i, o in enumerate(outcomes)
    ]
    [task] = judge_summary(differ, samples=5).tasks
    assert [(r.passed, r.majority) for r in task.repetitions] == [(4, True), (2, False)]
    assert task.figures.majority_gap_pp == pytest.approx(gap_pp(TaskCounts(1, 2, 2)))


@pytest.mark.parametrize(
    ("votes", "samples", "expected"),
    [
        ([True, True, False], 3, (True, 2)),
        ([True, False, False], 3, (False, 3)),
        ([True, None, False, True], 3, (True, 4)),
        ([False, True, False, True, True], 5, (True, 5)),
        ([False, False, False, True, True], 5, (False, 3)),
        ([True], 1, (True, 1)),
        ([None, None], 3, (None, 2)),
    ],
)
def test_the_stop_rule_reads_votes_in_order_until_a_majority_of_m(
    votes: list[bool | None], samples: int, expected: tuple[bool | None, int]
) -> None:
    assert majority(votes, samples) == expected


def test_the_votes_fold_keeps_the_majority_and_every_sample_and_counts_no_sample_past_the_decision() -> None:
    # n = 2 repetitions x M = 3: (F, P, P) -> pass; (P, P, F) -> pass after 2, its recorded sample 3 not counted.
    samples = [rep("t", i + 1, o, n=6, k=2) for i, o in enumerate([False, True, True, True, True, False])]
    folded = fold(samples, 3, votes=True)
    assert [(r.repeat, r.n, r.outcome, len(r.samples)) for r in folded] == [(1, 2, "passed", 3), (2, 2, "passed", 3)]
    summary = judge_summary(folded, 3, votes=True)
    [task] = summary.tasks
    assert [r.verdicts for r in task.repetitions] == ["FPP", "PP."]
    assert task.figures.votes_asked == 5 and task.figures.majority_changed == 1
    # The flip rate reads the first pairs only: (F, P) disagree, (P, P) agree.
    assert task.figures.flip_rate == 0.5 and task.figures.flip_method == "clopper-pearson"
    # The rejudge fold: sample 1's outcome, n repetitions.
    assert [r.outcome for r in fold(samples, 3, votes=False)] == ["failed", "passed"]


def test_a_sample_that_is_no_verdict_makes_its_voted_repetition_an_error() -> None:
    judge = CallRecord(method="POST", url="u", base_url="b", key_fingerprint=None, model_requested=None, role="judge")
    broken = rep("t", 1, False, n=3, k=1, infrastructure="the judge's route: connection refused", calls=[judge])
    setup = rep("t", 2, False, n=3, k=1, calls=[judge])
    setup.outcome, setup.message = "error", "Failed: a sample that could not be asked"
    folded = fold([broken, rep("t", 2, False, n=3, k=1, calls=[judge]), rep("t", 3, True, n=3, k=1)], 3, votes=True)
    assert [(r.outcome, r.infrastructure) for r in folded] == [("failed", "the judge's route: connection refused")]
    assert len(folded[0].calls) == 2  # each sample's judge call once
    # A sample whose setup raised is no verdict either: the repetition is the setup's failure.
    [again] = fold([rep("t", 1, True, n=3, k=1), setup, rep("t", 3, True, n=3, k=1)], 3, votes=True)
    assert again.infrastructure == "error: Failed: a sample that could not be asked"
