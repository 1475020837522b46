"""A baseline comparison compares like with like, in a session and in a merge: what it cannot test, it says."""

from __future__ import annotations

import pytest
from suites import cli, consistency_section, load_report, pattern_suite

SUITE = {"a": "PFPPP", "b": "FPPPP", "c": "PPPPP"}


def test_a_curtailed_baseline_is_refused_for_the_regression_gates_and_said_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(pattern_suite(SUITE))
    assert pytester.runpytest("--consistency-adaptive", "--consistency-report=base.json").ret == 1
    assert any(t["curtailed"] for t in load_report(pytester, "base.json")["tasks"])
    # The same agent run in full: without a gate that needs the tests, the comparison says what it did not test.
    plain = pytester.runpytest("--consistency-baseline=base.json", "--consistency-report=r.json", "--junitxml=j.xml")
    section = "\n".join(consistency_section(plain))
    assert "not tested: the baseline has 2 curtailed task(s) (--consistency-adaptive)" in section
    assert "consistency.baseline.untested" in (pytester.path / "j.xml").read_text()
    # With one, the session fails naming the gate and why; the merge refuses the same (exit 2).
    gated = pytester.runpytest(
        "--consistency-baseline=base.json", "--consistency-regressions-max=0", "--consistency-report=r.json"
    )
    assert gated.ret == 1
    out = gated.stdout.str()
    assert "--consistency-baseline: --consistency-regressions-max cannot be decided: the baseline has 2" in out
    pytester.runpytest("--consistency-shard=1/1", "--consistency-report=s1.json")
    merged = cli(
        "merge",
        "s1.json",
        "-o",
        "m.json",
        "--consistency-baseline=base.json",
        "--mcnemar-p-min=0.05",
        cwd=pytester.path,
    )
    assert merged.returncode == 2, merged.stdout + merged.stderr
    assert "--mcnemar-p-min cannot be decided: the baseline has 2 curtailed task(s)" in merged.stderr
    shown = cli("compare", "base.json", "r.json", cwd=pytester.path)
    assert "not tested: curtailed counts" in shown.stdout
