"""What sampling the agent on a simulated user's recorded turns found (``--consistency-rejudge-role=agent``): per
task and for the suite. Typed, built by :mod:`..analysis.user`, rendered by every output, read back by ``merge``.

Why classes of their own beside :mod:`.judge`'s, and not a role on them: the construction is the same, but the
parts are the other way round (here the majority gap is the simulated user's part and the rest the agent's; there
the majority gap is the agent's and the rest the judge's), and a report's reader, the judge's gate
(``--consistency-judge-flip-max``) and ``merge`` read the judge's figures by their names. One summary per role keeps
each name meaning one thing. A repetition's row is the judge's :class:`~.judge.JudgedRepetition` (its fields say
nothing of whose samples they are).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_consistency.model.judge import JudgedRepetition
from pytest_consistency.stats.interval import Interval


@dataclass
class UserFigures:
    """The agent's figures on held user scripts over some repetitions: its flip rate (the chance that two agent
    samples on one script disagree) with an interval, Fleiss' kappa between agent samples with a bootstrap interval
    (None when undefined: every sample gave one outcome), and the gap split in percentage points."""

    repetitions: int
    flip_rate: float | None = None
    flip_interval: Interval | None = None
    flip_method: str | None = None
    kappa: float | None = None
    kappa_interval: Interval | None = None
    #: The gap of each repetition's agent sample 1 (observed) = the user's part + the agent's part.
    observed_gap_pp: float | None = None
    #: The gap of the majority outcomes (each script's majority over the agent samples of the repetitions with it).
    user_gap_pp: float | None = None
    #: observed - user: the agent's part, with the paired gap-change interval for the suite.
    agent_gap_pp: float | None = None
    agent_gap_interval: Interval | None = None


@dataclass
class TaskUserSplit:
    task_id: str
    samples: int
    figures: UserFigures
    #: Per recorded repetition: its agent samples' outcomes (``P``, ``F``, ``-``), observed and majority outcomes.
    repetitions: list[JudgedRepetition] = field(default_factory=list)
    #: Samples that did not run to a verdict (the user's recorded turns ran out, an infrastructure error), each said.
    excluded: list[str] = field(default_factory=list)


@dataclass
class UserSplitSummary:
    """The session's agent samples on the simulated user's recorded turns: M per repetition, each task's figures,
    the suite's."""

    samples: int
    tasks: list[TaskUserSplit]
    suite: UserFigures
