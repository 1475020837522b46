"""Options from the command line, the YAML file and the ini file, and their errors."""

from __future__ import annotations

import pytest
from suites import pattern_suite

SUITE = pattern_suite({"a": "PPPPF", "b": "PPPPP"}, marker="min_pass=0")  # gap (0.9 - 0.5) = 40.0 pp


def gate_line(result: pytest.RunResult) -> str:
    return next(line for line in result.stdout.lines if line.startswith("gate --consistency-gap-max"))


def test_precedence_cli_over_yaml_over_ini(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_s=SUITE)
    # on the estimate (the ini's consistency_gate_on), so that each threshold decides the exit status outright
    pytester.makeini(
        "[pytest]\nconsistency_gap_max = 30\nconsistency_gate_on = point\n"
        "asyncio_default_fixture_loop_scope = function\n"
    )
    result = pytester.runpytest()
    assert result.ret == 1 and "> 30.0 pp" in gate_line(result)
    pytester.makefile(".yaml", consistency="gates:\n  consistency_gap_max: 50\nrepeat: 5\n")
    result = pytester.runpytest("--consistency-config=consistency.yaml")
    assert result.ret == 0 and "<= 50.0 pp" in gate_line(result)
    result = pytester.runpytest("--consistency-config=consistency.yaml", "--consistency-gap-max=39.5")
    assert result.ret == 1 and "> 39.5 pp" in gate_line(result)


def test_yaml_from_ini_and_repeat(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_s=SUITE)
    pytester.makefile(".yaml", c="repeat: 2\nreport: out.json\n")
    pytester.makeini("[pytest]\nconsistency_config = c.yaml\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=4)
    assert (pytester.path / "out.json").is_file()


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("gates:\n  consistency_gap_max: [1\n", "*consistency.yaml:2: malformed YAML*"),
        (
            "gates:\n  consistency_gap_mx: 3\n",
            "*consistency.yaml:2: unknown setting 'gates.consistency_gap_mx'*",
        ),
        (
            "gates:\n  consistency_gap_max: lots\n",
            "*consistency.yaml:2: gates.consistency_gap_max: 'lots' is not a number*",
        ),
        ("repeat: 0\n", "*consistency.yaml:1: repeat: 0 must be at least 1*"),
        ("- 1\n", "*consistency.yaml:1: the top level must be a mapping*"),
        ("gates: 3\n", "*consistency.yaml:1: 'gates' must be a mapping*"),
        (
            "cassettes:\n  record: sometimes\n",
            "*'sometimes' is not one of none, once, new_episodes, all, off*",
        ),
    ],
)
def test_bad_yaml_is_a_usage_error_with_file_and_line(pytester: pytest.Pytester, yaml_text: str, message: str) -> None:
    pytester.makepyfile(test_s=SUITE)
    pytester.makefile(".yaml", consistency=yaml_text)
    result = pytester.runpytest("--consistency-config=consistency.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_missing_yaml_file(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--consistency-config=nope.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--consistency-config: *nope.yaml does not exist*"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--consistency-gap-max=abc"], "*argument --consistency-gap-max: 'abc' is not a number*"),
        (["--consistency-gap-max=-1"], "*argument --consistency-gap-max: '-1' must be within 0..100*"),
        (["--consistency-repeat=0"], "*argument --consistency-repeat: '0' must be at least 1*"),
        (["--consistency-min-pass=1.5"], "*argument --consistency-min-pass: '1.5' must be within 0..1*"),
        (["--consistency-record=sometimes"], "*argument --consistency-record: 'sometimes' is not one of*"),
    ],
)
def test_bad_cli_values_name_the_option(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_bad_ini_value_names_the_key_and_the_flag(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\npass_hat_k_min = high\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*tox.ini: pass_hat_k_min = high: 'high' is not a number (twin of --pass-hat-k-min)*"])
