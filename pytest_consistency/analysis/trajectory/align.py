"""Aligning a task's repetitions step by step: where they part, how many decisions each step has, how far apart.

Pure functions over the decision keys of each repetition (step i of every repetition is compared with step i of the
others: agents that share a prefix share its steps). A repetition that stopped earlier than another "decided" to
stop: it parts from the others at the step it did not take. Text decisions go through the answer equivalence of
the session (``pytest_consistency_answers_equivalent``; the default compares normalised text), tool calls compare
by name and normalised arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pytest_consistency.analysis.answers import distinct_classes
from pytest_consistency.model.trajectory import Decision, Parallel, together

#: What an ended repetition "decides" at the steps it did not take.
END = "<end>"


def text_classes(
    runs: Sequence[Sequence[Decision]], same_text: Callable[[str, str], bool] | None = None
) -> dict[str, str]:
    """The key each text decision's key stands for: the first of its class among the texts ``same_text`` finds
    equivalent (the members of a step of overlapping calls included). Empty without ``same_text`` or with fewer
    than two texts: every key stands for itself.

    Texts are grouped once per task (one representative per class, as answers are), so a hook that is only
    symmetric gives a stable grouping.
    """
    if same_text is None:
        return {}
    texts: dict[str, str] = {}
    for run in runs:
        for step in run:
            for decision in step.members if isinstance(step, Parallel) else (step,):
                key = decision.key()
                if key.startswith("text:") and key not in texts:
                    texts[key] = decision.text
    if len(texts) < 2:
        return {}
    ordered = list(texts)
    classes = distinct_classes([(True, texts[k]) for k in ordered], same_text)
    return {ordered[i]: ordered[members[0]] for members in classes for i in members}


def step_key(decision: Decision, classes: Mapping[str, str]) -> str:
    """A step's key with its texts as their class's (:func:`text_classes`); a step of overlapping calls by its
    members', ordered by what each was asked, then by key."""
    if isinstance(decision, Parallel):
        members = sorted(
            (question, classes.get(member.key(), member.key()))
            for question, member in zip(decision.questions, decision.members, strict=True)
        )
        return together([key for _, key in members])
    key = decision.key()
    return classes.get(key, key)


def canonical_keys(
    runs: Sequence[Sequence[Decision]], same_text: Callable[[str, str], bool] | None = None
) -> list[tuple[str, ...]]:
    """Each repetition's decision keys, text decisions that ``same_text`` finds equivalent given one key; without
    ``same_text`` the key is the normalised text itself."""
    classes = text_classes(runs, same_text)
    return [tuple(step_key(decision, classes) for decision in run) for run in runs]


def first_divergence(keys: Sequence[Sequence[str]]) -> int | None:
    """The first step (from 1) at which the repetitions do not all take the same decision, None if they never part.

    A repetition that ended before that step counts as deciding :data:`END` there.
    """
    if len(keys) < 2:
        return None
    longest = max(len(run) for run in keys)
    for index in range(longest):
        if len({run[index] if index < len(run) else END for run in keys}) > 1:
            return index + 1
    return None


def distinct_per_step(keys: Sequence[Sequence[str]]) -> list[int]:
    """How many distinct decisions step i has among the repetitions that reached it (ended ones not counted)."""
    longest = max((len(run) for run in keys), default=0)
    return [len({run[index] for run in keys if index < len(run)}) for index in range(longest)]


def edit_distance(left: Sequence[str], right: Sequence[str]) -> int:
    """Levenshtein distance between two sequences (insertions, deletions, substitutions cost 1)."""
    start = 0
    while start < len(left) and start < len(right) and left[start] == right[start]:
        start += 1
    left, right = left[start:], right[start:]
    while left and right and left[-1] == right[-1]:
        left, right = left[:-1], right[:-1]
    if not left or not right:
        return len(left) + len(right)
    previous = list(range(len(right) + 1))
    for i, item in enumerate(left, start=1):
        current = [i]
        for j, other in enumerate(right, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (item != other)))
        previous = current
    return previous[-1]


def normalised_distance(left: Sequence[str], right: Sequence[str]) -> float:
    """Edit distance over the longer length: 0 for equal sequences (two empty ones too), 1 for nothing in common."""
    longest = max(len(left), len(right))
    return edit_distance(left, right) / longest if longest else 0.0


def mean_distance(sequences: Sequence[Sequence[str]]) -> float | None:
    """Mean normalised edit distance over every pair of repetitions; None with fewer than two.

    Equal sequences are counted once with their multiplicity, so a consistent task costs one comparison.
    """
    if len(sequences) < 2:
        return None
    counts: dict[tuple[str, ...], int] = {}
    for sequence in sequences:
        counts[tuple(sequence)] = counts.get(tuple(sequence), 0) + 1
    distinct = list(counts.items())
    total = 0.0
    for i, (left, times_left) in enumerate(distinct):
        for right, times_right in distinct[i + 1 :]:
            total += times_left * times_right * normalised_distance(left, right)
    pairs = len(sequences) * (len(sequences) - 1) // 2
    return round(total / pairs, 6)
