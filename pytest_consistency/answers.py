"""How recorded answers are normalised and grouped into classes of equivalent answers.

The defaults here are what the ``pytest_consistency_normalize_answer`` and
``pytest_consistency_answers_equivalent`` hooks fall back to; users replace them from conftest.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

#: Marks a repetition that ran but recorded no answer. It is never equivalent to a recorded answer,
#: so a repetition that crashed before ``record`` counts as disagreeing, not as agreeing.
MISSING = "<no answer recorded>"


def default_normalize(answer: Any) -> Any:
    """Strip and collapse whitespace in strings, recursively; dict key order is made irrelevant later."""
    if isinstance(answer, str):
        return " ".join(answer.split())
    if isinstance(answer, dict):
        return {str(key): default_normalize(value) for key, value in answer.items()}
    if isinstance(answer, (list, tuple)):
        return [default_normalize(value) for value in answer]
    return answer


def canonical_json(value: Any) -> str:
    """One string per JSON value: sorted keys, no insignificant whitespace, so dicts compare canonically."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def default_equivalent(left: Any, right: Any) -> bool:
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
