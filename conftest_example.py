"""A conftest.py to copy into an agent project that uses pytest-consistency.

It shows the extension points: how recorded answers are normalised and compared. Copy it next to your tests
as ``conftest.py`` (or import from it) and adapt the rules to your agent's answers.
"""

from __future__ import annotations

import re
from typing import Any


def pytest_consistency_normalize_answer(answer: Any, task_id: str) -> Any:
    """Compare what the agent decided, not how it phrased it: lower case, no punctuation at the ends."""
    if isinstance(answer, dict) and "answer" in answer:
        text = str(answer.get("answer") or "").lower()
        return {**answer, "answer": re.sub(r"\s+", " ", text).strip(" .!?\"'")}
    return None  # anything else: the plugin's default normalisation


def pytest_consistency_answers_equivalent(left: Any, right: Any, task_id: str) -> bool | None:
    """Two answers agree when the same app was used and the normalised texts are equal."""
    if isinstance(left, dict) and isinstance(right, dict) and "app" in left and "app" in right:
        return bool(left["app"] == right["app"] and left.get("answer") == right.get("answer"))
    return None  # anything else: the plugin's default comparison
