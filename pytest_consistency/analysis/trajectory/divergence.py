"""The divergence map of one task: its repetitions aligned, the step where they part, its tree and figures.

Built in :func:`.summary.build_task` from the repetitions' call records (the same records a merged report holds,
so ``pytest-consistency merge`` of shards rebuilds the same map), and rendered by every output. The attribution
line is a list of clauses (:attr:`DivergenceMap.parts`), so a later analysis (resampling one step) adds its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_consistency.analysis.trajectory.align import (
    canonical_keys,
    distinct_per_step,
    first_divergence,
    mean_distance,
)
from pytest_consistency.analysis.trajectory.steps import decisions_of
from pytest_consistency.analysis.trajectory.tree import Run, build_tree, parting
from pytest_consistency.model.records import RepetitionResult, agent_calls
from pytest_consistency.model.trajectory import DivergenceMap, TreeNode


def divergence_map(
    repetitions: Sequence[RepetitionResult],
    inconsistent: bool,
    same_text: Callable[[str, str], bool] | None = None,
) -> DivergenceMap | None:
    """The map of the scored repetitions of one task; None when none of them made a model call that was answered."""
    if not any(r.calls for r in repetitions):  # the commonest task of a suite without HTTP: nothing to map
        return None
    scored = sorted((r for r in repetitions if r.scored), key=lambda r: r.repeat)
    decisions = [decisions_of(agent_calls(r.calls)) for r in scored]  # the agent's steps, not a judge's
    if not any(decisions):
        return None
    keys = canonical_keys(decisions, same_text)
    runs = [Run(r.repeat, r.succeeded, k, d) for r, k, d in zip(scored, keys, decisions, strict=True)]
    divergent = first_divergence(keys)
    mapped = DivergenceMap(
        repetitions=len(runs),
        steps=max(len(k) for k in keys),
        divergent_step=divergent,
        distinct=distinct_per_step(keys),
        # Repetitions that never part took the same tools in the same order: distance 0 without comparing them.
        tool_distance=(
            mean_distance([tuple(call.name for d in run for call in d.tool_calls) for run in decisions])
            if divergent is not None
            else (0.0 if len(runs) > 1 else None)
        ),
        # A tree that never branches is one repetition's calls again: kept only where the repetitions part.
        tree=build_tree(runs) if divergent is not None else [],
    )
    if inconsistent:
        mapped.parts.extend(attribution_parts(mapped))
    return mapped


def _named(text: str) -> tuple[str, str]:
    """``(kind, name)`` of a branch label: ``("tool", "`a`")`` for tool calls (no arguments), else ``("", label)``."""
    for prefix in ("tool ", "tools "):
        if text.startswith(prefix):
            calls = text.removeprefix(prefix).replace("(...)", "").replace("()", "")
            return prefix.strip(), ", ".join(f"`{name}`" for name in calls.split(", "))
    return "", text


def branch_names(branches: Sequence[TreeNode]) -> list[str]:
    """How the attribution line names each branch: by tool names when those tell them apart, else with their
    arguments; the kind (``tool``) said once when every branch is of one kind."""
    for texts in ([b.label for b in branches], [b.detail for b in branches]):
        named = [_named(text) for text in texts]
        if len({name for _, name in named}) == len(named):
            break
    else:
        return [b.detail for b in branches]
    kinds = {kind for kind, _ in named}
    if len(kinds) == 1 and "" not in kinds:
        return [f"{named[0][0]} {named[0][1]}", *(name for _, name in named[1:])]
    return [f"{kind} {name}".strip() for kind, name in named]


def attribution_parts(mapped: DivergenceMap) -> list[str]:
    """``repetitions part at step 2 (tool `a(...)` vs `b(...)`)`` and the pass share of each branch; for
    repetitions that all decided the same, that the difference is not in the model's decisions."""
    found = parting(mapped.tree)
    if found is None:
        return [
            f"all {mapped.repetitions} repetitions took the same {mapped.steps} step(s): the difference is not in "
            "the model's decisions (the cause line says where it is)"
        ]
    node, branches = found
    names = branch_names(branches)
    if node.ended:
        names.append("stopping")
    shown = names if len(names) <= 4 else [*names[:3], f"{len(names) - 3} more"]
    step = node.step + 1
    parts = [f"repetitions part at step {step} ({' vs '.join(shown)})"]
    shares = [f"{b.passed}/{b.count}" for b in branches]
    if node.ended:
        shares.append(f"{node.passed - sum(b.passed for b in branches)}/{node.ended}")
    if len(shares) == 2:
        first = names[0].removeprefix("tool ").removeprefix("tools ")
        parts.append(f"the branch through {first} passes {shares[0]}, the other {shares[1]}")
    else:
        listed = ", ".join(
            f"{name.removeprefix('tool ')} {share}" for name, share in zip(names[:4], shares[:4], strict=False)
        )
        parts.append(f"passes per branch: {listed}" + (", ..." if len(shares) > 4 else ""))
    return parts


def add_clause(mapped: DivergenceMap, clause: str) -> None:
    """Add a later analysis's clause to the attribution line: after where the repetitions part (before the branches'
    pass shares), or last when they never part."""
    mapped.parts.insert(1 if mapped.divergent_step is not None and mapped.parts else len(mapped.parts), clause)
