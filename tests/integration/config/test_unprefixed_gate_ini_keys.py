"""A gate's ini key from before every key had the ``consistency_`` prefix (``pass_hat_k_min``) still gates, with one
deprecation warning naming the key to use instead (``consistency_pass_hat_k_min``); pytest knows both keys. Which
key wins when both are set: ``tests/unit/config/test_settings.py``."""

from __future__ import annotations

import pytest
from suites import pattern_suite

SUITE = pattern_suite({"a": "PPPPF", "b": "PPPPP"}, marker="min_pass=0")  # pass^5 = (0 + 1) / 2 = 50 %


def test_an_unprefixed_gate_ini_key_still_gates_and_warns_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_s=SUITE)
    # decided on the estimate, so that the threshold decides the exit status outright
    pytester.makeini(
        "[pytest]\npass_hat_k_min = 60\nconsistency_gate_on = point\nasyncio_default_fixture_loop_scope = function\n"
    )
    result = pytester.runpytest("-p", "no:randomly")
    gate = next(line for line in result.stdout.lines if line.startswith("gate --pass-hat-k-min"))
    assert result.ret == 1 and "60" in gate, result.stdout.str()
    text = result.stdout.str()
    warning = "ConsistencyDeprecationWarning: the ini key pass_hat_k_min is deprecated: use consistency_pass_hat_k_min"
    assert text.count(warning) == 1, text
    assert "Unknown config option" not in text and "unknown config option" not in text
