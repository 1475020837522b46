"""What re-judging found (``--consistency-rejudge``): per task and for the suite. Typed, built by
:mod:`..analysis.judge`, rendered by every output, read back by ``merge``."""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_consistency.stats.interval import Interval


@dataclass
class JudgedRepetition:
    """One recorded repetition judged M times: how many samples scored (an infrastructure error is not a verdict)
    and how many passed; its outcome as a probability is ``passed / samples``."""

    repeat: int
    samples: int
    passed: int
    #: The outcome as recorded (judge sample 1 stands in: see docs/judges.md) and the judge majority's (ties: the
    #: recorded outcome); None without a scored sample.
    observed: bool | None = None
    majority: bool | None = None
    #: Each judge sample's verdict in order, ``P`` (pass), ``F`` (fail) or ``-`` (not a verdict), and in a votes
    #: session ``.`` for a sample not asked (the majority was decided before it): ``PFP``, ``PP.``.
    verdicts: str = ""

    @property
    def pass_share(self) -> float | None:
        return self.passed / self.samples if self.samples else None


@dataclass
class JudgeFigures:
    """The judge's figures over some repetitions: its flip rate with an interval, Fleiss' kappa with a bootstrap
    interval (None when undefined: every sample agreed on one outcome), and the gap split in percentage points."""

    repetitions: int
    flip_rate: float | None = None
    flip_interval: Interval | None = None
    flip_method: str | None = None
    kappa: float | None = None
    kappa_interval: Interval | None = None
    observed_gap_pp: float | None = None
    majority_gap_pp: float | None = None
    #: observed - majority: the judge's part of the gap (the agent's part is the majority gap).
    judge_gap_pp: float | None = None
    judge_gap_interval: Interval | None = None
    #: A votes session (``--consistency-judge-votes``): the judge samples that counted towards the majorities (each
    #: asked only while its repetition's majority was undecided), and the repetitions whose majority differs from
    #: their judge sample 1's verdict; None outside a votes session.
    votes_asked: int | None = None
    majority_changed: int | None = None


@dataclass
class TaskJudge:
    task_id: str
    samples: int
    figures: JudgeFigures
    repetitions: list[JudgedRepetition] = field(default_factory=list)
    #: Samples that did not run to a verdict (an agent call that does not replay, the judge route down), each said.
    excluded: list[str] = field(default_factory=list)


@dataclass
class JudgeSummary:
    """The session's re-judging: M samples per repetition, each task's figures, the suite's. ``votes``: a votes session
    (``--consistency-judge-votes``), whose repetitions' outcomes are their judge majorities, the samples asked one
    at a time until the majority is decided."""

    samples: int
    tasks: list[TaskJudge]
    suite: JudgeFigures
    votes: bool = False
