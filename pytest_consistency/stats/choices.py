"""The names of what the statistics implement that an option chooses among: the significance tests and the
interval targets. Apart from the code, so that the option table (read at every pytest start) loads no statistics."""

from __future__ import annotations

#: The exact tests of a task's change against a baseline (``significance``), as ``--consistency-test`` names them.
TESTS: tuple[str, ...] = ("boschloo", "fisher")

#: What a suite interval covers (``suite``), as ``--consistency-interval-target`` names it.
TARGETS: tuple[str, ...] = ("suite", "population")
