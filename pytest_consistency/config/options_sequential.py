"""The options of adaptive repetitions (``--consistency-adaptive``) and sequential verdicts
(``--consistency-sequential``): two groups of the option table (:mod:`.options` joins them into ``OPTIONS``),
declared here as the table's module is at its length limit;
like the table's, its options are attributes of a plain class (``SequentialOptions``, which ``Settings`` inherits).
What the mode promises: docs/sequential.md; the decisions: :mod:`..stats.sequential`.
"""

from __future__ import annotations

from pytest_consistency.config.option import Option, options_of
from pytest_consistency.config.parse import choice, percentage, positive_int, repetitions, test_level


class AdaptiveOptions:
    """Adaptive repetitions (``--consistency-adaptive``)."""

    adaptive: Option[bool] = Option(
        "--consistency-adaptive",
        ("adaptive", "enabled"),
        choice("true", "false"),
        "stop repeating a task once its verdict (min_pass or min_rate) can no longer change: the same verdicts, "
        "fewer calls",
        is_flag=True,
    )
    n_min: Option[int] = Option(
        "--consistency-n-min",
        ("adaptive", "n_min"),
        repetitions,
        "with --consistency-adaptive or --consistency-sequential: run at least N repetitions of every task (default 1)",
        metavar="N",
        default=1,
    )


ADAPTIVE_OPTIONS = options_of(AdaptiveOptions)


class SequentialOptions:
    """The sequential mode's switch, its level and its suite-wide cap on repetitions (here, not in a module of its
    own: a sleeping session pays about 1 M instructions per module, docs/performance.md). ``--consistency-n-min``
    (the adaptive group's) sets the repetitions every task runs first; the marker's n is the cap."""

    sequential: Option[bool] = Option(
        "--consistency-sequential",
        ("sequential", "enabled"),
        choice("true", "false"),
        "decide each min_rate task by an anytime-valid sequential test and stop it once decided (the marker's n is "
        "the cap; undecided at the cap); min_pass tasks stop by curtailment. Not with --consistency-adaptive",
        is_flag=True,
    )
    sequential_alpha: Option[float | None] = Option(
        "--consistency-sequential-alpha",
        ("sequential", "alpha"),
        test_level,
        "with --consistency-sequential: the chance that a decided verdict is wrong, at most (default 1 - "
        "--consistency-confidence)",
        metavar="ALPHA",
    )
    repetition_budget: Option[int | None] = Option(
        "--consistency-repetition-budget",
        ("sequential", "repetition_budget"),
        positive_int,
        "with --consistency-sequential: run at most R repetitions in the whole session (across xdist workers); "
        "the tasks not decided by then are undecided, the verdicts decided stay",
        metavar="R",
    )
    sequential_margin: Option[float | None] = Option(
        "--consistency-sequential-margin",
        ("sequential", "margin"),
        percentage,
        "with --consistency-sequential and --consistency-baseline: gate on the suite pass rate's drop from the "
        "(fixed-n) baseline, decided in rounds: pass when it is shown below PP points, fail when shown above",
        metavar="PP",
    )


SEQUENTIAL_OPTIONS = options_of(SequentialOptions)
