"""The trajectory tree of a task: the prefix tree of its repetitions' decisions, with counts and passes per node.

Why a prefix tree: repetitions that took the same first steps share them; where the tree branches is where they
parted, and the pass share under each branch says which way led to success ("the branch through
``search_invoices`` passes 5/5, the other 0/5"). Stored flat (each node names its parent, in depth-first order,
the busier branch first) so a 30-step tree is a list, not 30 levels of nesting in the JSON report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_consistency.model.trajectory import Decision, TreeNode


@dataclass(frozen=True)
class Run:
    """One repetition as the tree sees it: its number, whether it passed, its decisions and their aligned keys."""

    repeat: int
    passed: bool
    keys: tuple[str, ...]
    decisions: tuple[Decision, ...]


def build_tree(runs: Sequence[Run]) -> list[TreeNode]:
    """The prefix tree of ``runs``, flat, depth first; siblings by count (descending), then label."""
    # node index -> [step, label, detail, repeats, passed, ended, children {key: index}]
    nodes: list[list[Any]] = [[0, "start", "start", [], 0, 0, {}]]
    for run in runs:
        at = 0
        nodes[0][3].append(run.repeat)
        nodes[0][4] += run.passed
        for step, (key, decision) in enumerate(zip(run.keys, run.decisions, strict=True), start=1):
            children = nodes[at][6]
            child = children.get(key)
            if child is None:
                child = children[key] = len(nodes)
                nodes.append([step, decision.label(), decision.detail(), [], 0, 0, {}])
            at = child
            nodes[at][3].append(run.repeat)
            nodes[at][4] += run.passed
        nodes[at][5] += 1
    out: list[TreeNode] = []
    stack: list[tuple[int, int | None]] = [(0, None)]
    while stack:
        index, parent = stack.pop()
        step, label, detail, repeats, passed, ended, children = nodes[index]
        me = len(out)
        out.append(TreeNode(me, parent, step, label, detail, len(repeats), passed, ended, tuple(sorted(repeats))))
        ordered = sorted(children.values(), key=lambda i: (-len(nodes[i][3]), nodes[i][1], min(nodes[i][3])))
        stack.extend((child, me) for child in reversed(ordered))
    return out


def children_of(tree: Sequence[TreeNode]) -> dict[int, list[TreeNode]]:
    """Each node's children, in the tree's order."""
    children: dict[int, list[TreeNode]] = {node.id: [] for node in tree}
    for node in tree:
        if node.parent is not None:
            children[node.parent].append(node)
    return children


def parting(tree: Sequence[TreeNode]) -> tuple[TreeNode, list[TreeNode]] | None:
    """The first node where the repetitions part (more than one child, or a child and repetitions that ended), and
    its children; None when every repetition took the same path."""
    children = children_of(tree)
    at = tree[0] if tree else None
    while at is not None:
        below = children[at.id]
        if len(below) > 1 or (below and at.ended):
            return at, below
        at = below[0] if below else None
    return None


@dataclass(frozen=True)
class Segment:
    """A run of nodes without a branch, shown as one line: steps ``first``..``last`` taken by ``count``
    repetitions (``passed`` of them passed); ``depth`` is how many branch points lie above it."""

    depth: int
    first: int
    last: int
    labels: tuple[str, ...]
    count: int
    passed: int


def segments(tree: Sequence[TreeNode]) -> list[Segment]:
    """The tree with every chain of single-child nodes collapsed into one segment, depth first: what a text form
    shows (a 30-step trajectory without a branch is one line)."""
    if len(tree) < 2:
        return []
    children = children_of(tree)
    out: list[Segment] = []

    def branches(nodes: list[TreeNode], depth: int) -> list[tuple[TreeNode, int, bool]]:
        """Siblings, each with whether its label is shared by another (then its arguments tell them apart)."""
        labels = [n.label for n in nodes]
        return [(n, depth, labels.count(n.label) > 1) for n in reversed(nodes)]

    stack = branches(children[0], 0)
    while stack:
        node, depth, shared = stack.pop()
        chain = [node]
        while len(children[chain[-1].id]) == 1 and not chain[-1].ended:
            chain.append(children[chain[-1].id][0])
        labels = (node.detail if shared else node.label, *(n.label for n in chain[1:]))
        out.append(Segment(depth, chain[0].step, chain[-1].step, labels, node.count, node.passed))
        stack.extend(branches(children[chain[-1].id], depth + 1))
    return out


def segment_text(segment: Segment, shown: int = 3) -> str:
    """``step 1: tool a(...)`` or ``steps 2-9: tool b(...) → text: ... (+5 more)``, with its counts."""
    labels = list(segment.labels)
    if len(labels) > shown:
        labels = [*labels[: shown - 1], f"… {len(labels) - shown} more …", labels[-1]]
    where = f"step {segment.first}" if segment.first == segment.last else f"steps {segment.first}-{segment.last}"
    return f"{where}: {' → '.join(labels)}  [{segment.passed}/{segment.count} passed]"
