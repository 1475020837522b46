"""The options of sequential verdicts (``--consistency-sequential``), declared once, as the option table's entries.

A module of their own because the option table (:mod:`.options`) is at the house's size limit; :mod:`.options`
builds one ``Option`` from each entry here (keyword arguments of ``Option``) and lists them in ``OPTIONS`` after the
adaptive group. What the mode promises: docs/sequential.md; the decisions: :mod:`..stats.sequential`.
"""

from __future__ import annotations

from typing import Any

from pytest_consistency.config.parse import choice, test_level

#: ``Option(**entry)`` for each: the sequential mode's switch and its level. ``--consistency-n-min`` (the adaptive
#: group's) sets the repetitions every task runs first; the marker's n is the cap.
SEQUENTIAL: tuple[dict[str, Any], ...] = (
    {
        "dest": "consistency_sequential",
        "flag": "--consistency-sequential",
        "yaml_path": ("sequential", "enabled"),
        "parse": choice("true", "false"),
        "help": "decide each min_rate task by an anytime-valid sequential test and stop it once decided (the "
        "marker's n is the cap; undecided at the cap); min_pass tasks stop by curtailment. Not with "
        "--consistency-adaptive",
        "is_flag": True,
    },
    {
        "dest": "consistency_sequential_alpha",
        "flag": "--consistency-sequential-alpha",
        "yaml_path": ("sequential", "alpha"),
        "parse": test_level,
        "help": "with --consistency-sequential: the chance that a decided verdict is wrong, at most (default 1 - "
        "--consistency-confidence)",
        "metavar": "ALPHA",
    },
)
