"""Retry plugins never hide a first failure, under xdist either. Adversarial round two, part 4."""

from __future__ import annotations

import pytest
from stories import OUT, story


def test_reruns_never_hide_a_first_failure_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

SEEN = {}

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency, request):
    key = consistency.repeat
    SEEN[key] = SEEN.get(key, 0) + 1
    consistency.record("x")
    assert not (key == 2 and SEEN[key] == 1)
"""
    )
    result = pytester.runpytest("-p", "rerunfailures", "--reruns=2", "-n", "2", *OUT)
    assert result.ret == 1, result.stdout.str()
    data = story(pytester, result)
    assert data["tasks"][0]["repetitions"][1]["outcome"] == "failed"
