"""The trajectory tree (analysis.trajectory.tree): repetitions merged step by step, with their passes and ends."""

from __future__ import annotations

from pytest_consistency.analysis.trajectory.tree import Run, build_tree, parting
from pytest_consistency.model.trajectory import Decision, ToolCall


def tool(name: str, **arguments: object) -> Decision:
    import json

    return Decision.of("", (ToolCall(name, json.dumps(arguments, sort_keys=True, separators=(",", ":"))),))


def test_tree_counts_passes_and_ends() -> None:
    runs = [
        Run(1, True, ("a", "b"), (tool("a"), tool("b"))),
        Run(2, True, ("a", "b"), (tool("a"), tool("b"))),
        Run(3, False, ("a", "c"), (tool("a"), tool("c"))),
        Run(4, False, ("a",), (tool("a"),)),
        Run(5, False, (), ()),
    ]
    tree = build_tree(runs)
    shown = [(n.id, n.parent, n.step, n.label, n.count, n.passed, n.ended, n.repeats) for n in tree]
    assert shown == [
        (0, None, 0, "start", 5, 2, 1, (1, 2, 3, 4, 5)),
        (1, 0, 1, "tool a()", 4, 2, 1, (1, 2, 3, 4)),
        (2, 1, 2, "tool b()", 2, 2, 2, (1, 2)),
        (3, 1, 2, "tool c()", 1, 0, 1, (3,)),
    ]
    found = parting(tree)
    assert found is not None and found[0].id == 0  # repetition 5 made no call: they part at step 1
