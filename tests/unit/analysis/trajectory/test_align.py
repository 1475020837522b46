"""The alignment of repetitions' trajectories (analysis.trajectory.align): edit distances, where they part, and
canonical keys."""

from __future__ import annotations

from pytest_consistency.analysis.trajectory.align import (
    canonical_keys,
    distinct_per_step,
    edit_distance,
    first_divergence,
    mean_distance,
    normalised_distance,
)
from pytest_consistency.model.trajectory import Decision, ToolCall


def tool(name: str, **arguments: object) -> Decision:
    import json

    return Decision.of("", (ToolCall(name, json.dumps(arguments, sort_keys=True, separators=(",", ":"))),))


def text(value: str) -> Decision:
    return Decision.of(value)


def test_edit_distance_known_figures() -> None:
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance([], ["a", "b"]) == 2
    assert edit_distance(["a", "b", "c"], ["a", "c"]) == 1
    assert normalised_distance(["a", "b"], ["b", "a"]) == 1.0
    assert normalised_distance([], []) == 0.0
    assert normalised_distance(["a", "b", "c", "d"], ["a", "x", "c", "d"]) == 0.25


def test_mean_distance_counts_every_pair_with_multiplicity() -> None:
    # 3 x [a, b] and 1 x [a, c]: 3 of 6 pairs differ by 1 of 2 -> 3 * 0.5 / 6 = 0.25
    assert mean_distance([["a", "b"]] * 3 + [["a", "c"]]) == 0.25
    assert mean_distance([["a"]]) is None
    assert mean_distance([[], []]) == 0.0


def test_first_divergence_and_distinct_per_step_with_unequal_lengths() -> None:
    keys = [("a", "b", "c"), ("a", "b"), ("a", "x", "c", "d")]
    assert first_divergence(keys) == 2
    assert distinct_per_step(keys) == [1, 2, 1, 1]
    assert first_divergence([("a", "b"), ("a", "b")]) is None
    assert first_divergence([("a", "b"), ("a", "b", "c")]) == 3  # one stopped where the other went on
    assert first_divergence([(), ("a",)]) == 1  # a repetition with zero calls
    assert first_divergence([("a",)]) is None


def test_canonical_keys_merge_equivalent_texts_only() -> None:
    runs = [[tool("f"), text("Total: 42")], [tool("f"), text("total: 42")], [tool("g"), text("nothing")]]
    plain = canonical_keys(runs)
    assert plain[0][1] != plain[1][1]
    merged = canonical_keys(runs, lambda a, b: a.lower() == b.lower())
    assert merged[0] == merged[1] and merged[2][1] == "text:nothing"
