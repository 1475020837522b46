"""The options of sequential verdicts (``--consistency-sequential``): a group of the option table (:mod:`.options`
joins it into ``OPTIONS`` after the adaptive group), declared here as the table's module is at its length limit;
like it, this module builds no class at import. What the mode promises: docs/sequential.md; the decisions:
:mod:`..stats.sequential`.
"""

from __future__ import annotations

from pytest_consistency.config.option import Option
from pytest_consistency.config.parse import choice, percentage, positive_int, test_level

#: The sequential mode's switch, its level and its suite-wide cap on repetitions (here, not in a module of its own: a
#: sleeping session pays about 1 M instructions per module, docs/performance.md). ``--consistency-n-min`` (the
#: adaptive group's) sets the repetitions every task runs first; the marker's n is the cap.
SEQUENTIAL_OPTIONS = (
    Option(
        "consistency_sequential",
        "--consistency-sequential",
        ("sequential", "enabled"),
        choice("true", "false"),
        "decide each min_rate task by an anytime-valid sequential test and stop it once decided (the marker's n is "
        "the cap; undecided at the cap); min_pass tasks stop by curtailment. Not with --consistency-adaptive",
        is_flag=True,
    ),
    Option(
        "consistency_sequential_alpha",
        "--consistency-sequential-alpha",
        ("sequential", "alpha"),
        test_level,
        "with --consistency-sequential: the chance that a decided verdict is wrong, at most (default 1 - "
        "--consistency-confidence)",
        metavar="ALPHA",
    ),
    Option(
        "consistency_repetition_budget",
        "--consistency-repetition-budget",
        ("sequential", "repetition_budget"),
        positive_int,
        "with --consistency-sequential: run at most R repetitions in the whole session (across xdist workers); "
        "the tasks not decided by then are undecided, the verdicts decided stay",
        metavar="R",
    ),
    Option(
        "consistency_sequential_margin",
        "--consistency-sequential-margin",
        ("sequential", "margin"),
        percentage,
        "with --consistency-sequential and --consistency-baseline: gate on the suite pass rate's drop from the "
        "(fixed-n) baseline, decided in rounds: pass when it is shown below PP points, fail when shown above",
        metavar="PP",
    ),
)
