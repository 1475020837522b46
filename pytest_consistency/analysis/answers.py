"""How recorded answers are normalised and grouped into classes of equivalent answers.

The defaults here are what the ``pytest_consistency_normalize_answer`` and
``pytest_consistency_answers_equivalent`` hooks fall back to; users replace them from conftest.py.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

#: Marks a repetition that ran but recorded no answer. It is never equivalent to a recorded answer,
#: so a repetition that crashed before ``record`` counts as disagreeing, not as agreeing.
MISSING = "<no answer recorded>"

#: Deepest nesting of lists and dicts in a recorded answer (``[[1]]`` is 2 deep). Deeper values crash JSON
#: encoding and recursive comparison with RecursionError; an answer is the part of the output you compare.
MAX_ANSWER_DEPTH = 100
#: Most values (containers and scalars, counted where they appear) in a recorded answer. Bounds the work on an
#: answer that shares one list many times, which JSON writes out in full.
MAX_ANSWER_ITEMS = 100_000


class NormalizeError(RuntimeError):
    """``pytest_consistency_normalize_answer`` raised: a hook's failure, not the agent's (never tolerated)."""


def check_answer(value: Any, what: str = "the answer") -> None:
    """Raise ValueError when ``value`` cannot be stored as an answer: NaN or an infinity, nesting deeper than
    :data:`MAX_ANSWER_DEPTH` (or a value that contains itself), or more than :data:`MAX_ANSWER_ITEMS` values.

    Iterative, and it stops at the first limit, so any value is checked in bounded time without recursion.
    Whether the leaves are JSON types at all is left to ``json.dumps``, which is safe once this passed.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    count = 1
    while stack:
        item, depth = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError(
                    f"consistency.record(): NaN and infinities are not valid JSON ({what} holds {item!r}); "
                    "record None or a string"
                )
            continue
        if isinstance(item, dict):
            children = list(item.values())
            for key in item:
                if isinstance(key, float) and not math.isfinite(key):
                    raise ValueError(
                        f"consistency.record(): NaN and infinities are not valid JSON ({what} has the key "
                        f"{key!r}); record None or a string"
                    )
        elif isinstance(item, (list, tuple)):
            children = list(item)
        else:
            continue
        if depth + 1 > MAX_ANSWER_DEPTH:
            raise ValueError(
                f"consistency.record(): {what} is nested more than MAX_ANSWER_DEPTH={MAX_ANSWER_DEPTH} levels "
                "deep, or contains itself; record a flatter value, e.g. the fields you compare"
            )
        count += len(children)
        if count > MAX_ANSWER_ITEMS:
            raise ValueError(
                f"consistency.record(): {what} holds more than MAX_ANSWER_ITEMS={MAX_ANSWER_ITEMS} values; "
                "record the part of the output you compare"
            )
        stack.extend((child, depth + 1) for child in children)


#: The largest integer kept on the fast path of ``plain_scalar`` (``json.dumps`` refuses ints of more than 4,300
#: digits by default: beyond this bound the full check decides).
_PLAIN_INT = 1 << 63


def plain_scalar(value: Any) -> bool:
    """Whether ``value`` is a JSON scalar that ``check_answer`` and ``json.dumps(allow_nan=False)`` certainly accept.

    A pure, constant-time test: ``record()`` skips the two checks for such values (most answers are one string),
    and every other value goes through them as before. Exact types only (a subclass may override ``__str__``,
    ``__float__`` or anything ``json`` calls), finite floats only, and integers bounded well below the digit limit.
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_PLAIN_INT <= value < _PLAIN_INT)
    return kind is float and math.isfinite(value)


def _open(value: Any) -> tuple[Any, Iterator[tuple[Any, Any]] | None]:
    """The normalised value, and for a container the (key or None, child) pairs still to normalise into it."""
    if isinstance(value, str):
        return " ".join(value.split()), None
    if isinstance(value, dict):
        return {}, iter([(str(key), child) for key, child in value.items()])
    if isinstance(value, (list, tuple)):
        return [], iter([(None, child) for child in value])
    return value, None


def default_normalize(answer: Any) -> Any:
    """Strip and collapse whitespace in strings, through lists and dicts; dict key order is made irrelevant later.

    Iterative, so any answer ``record()`` accepts (see :func:`check_answer`) normalises without recursion;
    nesting deeper than :data:`MAX_ANSWER_DEPTH` (or a value that contains itself) is a ValueError.
    """
    root, children = _open(answer)
    stack: list[tuple[Any, Iterator[tuple[Any, Any]]]] = [] if children is None else [(root, children)]
    while stack:
        target, pending = stack[-1]
        item = next(pending, None)
        if item is None:
            stack.pop()
            continue
        key, child = item
        result, grandchildren = _open(child)
        if isinstance(target, dict):
            target[key] = result
        else:
            target.append(result)
        if grandchildren is not None:
            if len(stack) >= MAX_ANSWER_DEPTH:
                raise ValueError(
                    f"default_normalize: the answer is nested more than MAX_ANSWER_DEPTH={MAX_ANSWER_DEPTH} "
                    "levels deep, or contains itself"
                )
            stack.append((result, grandchildren))
    return root


def canonical_json(value: Any) -> str:
    """One string per JSON value: sorted keys, no insignificant whitespace, so dicts compare canonically."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def default_equivalent(left: Any, right: Any) -> bool:
    if type(left) is str and type(right) is str:  # the commonest answer: its canonical JSON is equal iff it is
        return left == right
    return canonical_json(left) == canonical_json(right)


def distinct_classes(answers: Sequence[tuple[bool, Any]], equivalent: Callable[[Any, Any], bool]) -> list[list[int]]:
    """Group repetitions (by index) into classes of equivalent answers.

    ``answers`` holds ``(recorded, normalised answer)`` per repetition. Repetitions without an answer form
    one class of their own. Each answer is compared with one representative per class, so a user's
    equivalence only needs to be symmetric, not transitive, to give a stable grouping.
    """
    classes: list[list[int]] = []
    representatives: list[tuple[bool, Any]] = []
    for index, (recorded, answer) in enumerate(answers):
        for slot, (rep_recorded, rep_answer) in enumerate(representatives):
            if recorded != rep_recorded:
                continue
            if not recorded or equivalent(rep_answer, answer):
                classes[slot].append(index)
                break
        else:
            classes.append([index])
            representatives.append((recorded, answer))
    return classes
