"""Inputs must not crash or hang: YAML files, option values, marker arguments and recorded answers.

Each bad input is refused with an error that names where it came from and how to fix it, in bounded time.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.analysis import answers
from pytest_consistency.analysis.answers import default_normalize
from pytest_consistency.capture.active import ActiveRepetition, Consistency
from pytest_consistency.config import marker
from pytest_consistency.config.marker import MarkerError, parse_marker
from pytest_consistency.config.yaml import ConfigError, load_yaml
from pytest_consistency.plugin.dormant import wake
from pytest_consistency.plugin.state import STATE

INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
# The documented limits, spelled out so each test states the number it guards (test_limits checks them).
MAX_REPETITIONS = 1000
MAX_ANSWER_DEPTH = 100
MAX_ANSWER_ITEMS = 100_000
MAX_CONFIG_BYTES = 1_000_000
MAX_CONFIG_DEPTH = 20


def test_limits() -> None:
    from pytest_consistency.config import yaml as settings

    assert marker.MAX_REPETITIONS == MAX_REPETITIONS
    assert (answers.MAX_ANSWER_DEPTH, answers.MAX_ANSWER_ITEMS) == (MAX_ANSWER_DEPTH, MAX_ANSWER_ITEMS)
    assert (settings.MAX_CONFIG_BYTES, settings.MAX_CONFIG_DEPTH) == (MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH)


def run_with_config(pytester: pytest.Pytester, content: str | bytes, *args: str) -> pytest.RunResult:
    """An inner session (no tests) with ``consistency.yaml`` holding ``content``."""
    path = pytester.path / "consistency.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return pytester.runpytest("--consistency-config=consistency.yaml", *args)


def assert_usage_error(result: pytest.RunResult, *lines: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stderr.str() + result.stdout.str()
    result.stderr.fnmatch_lines(list(lines))


def laughs(levels: int, key: str = "report") -> str:
    """``levels`` lines of aliases, each repeating the previous one 9 times: 9**levels strings when expanded."""
    rows = ["&l0 [" + ", ".join(["lol"] * 9) + "]"]
    rows += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return f"{key}:\n" + "".join(f"  - {row}\n" for row in rows)


# --- the YAML file ------------------------------------------------------------------------------------------


def test_yaml_that_is_not_utf8_names_the_file_and_line(pytester: pytest.Pytester) -> None:
    result = run_with_config(pytester, b"repeat: 2\n# caf\xe9 (latin-1)\n")
    assert_usage_error(result, "*consistency.yaml:2: not UTF-8 text; save it as UTF-8*")


def test_yaml_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"\xef\xbb\xbfrepeat: 3\nreport: r\xc3\xa9sum\xc3\xa9.json\n")
    assert load_yaml(path) == ({("repeat",): 3, ("report",): "r\u00e9sum\u00e9.json"}, {("repeat",): 1, ("report",): 2})


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("report: &x [*x]\n", 1),  # recursive
        ("repeat: &n 3\nmin_pass: 0.5\n", 1),  # a plain anchor
        ("gates:\n  consistency_gap_max: &g 10\n  pass_hat_k_min: *g\n", 2),
        ("route: &r\n  model: m\ncassettes:\n  <<: *r\n", 1),  # merge key
        ("# three levels of laughs\n" + laughs(3), 3),
    ],
)
def test_yaml_anchors_and_aliases_are_refused(pytester: pytest.Pytester, content: str, line: int) -> None:
    result = run_with_config(pytester, content)
    assert_usage_error(
        result, f"*anchors and aliases (&x / *x) are not supported in *consistency.yaml:{line}; write the value out*"
    )


def test_billion_laughs_is_refused_before_any_value_is_built(tmp_path: Path) -> None:
    path = tmp_path / "lol.yaml"
    path.write_text(laughs(9), encoding="utf-8")  # 9**9 = 387 million strings once expanded
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=r"anchors and aliases .* not supported in .*lol\.yaml:2;"):
        load_yaml(path)
    assert time.perf_counter() - started < 5


def test_yaml_nested_deeper_than_the_limit(pytester: pytest.Pytester) -> None:
    result = run_with_config(pytester, "repeat: 2\nreport: " + "[" * 5000 + "]" * 5000 + "\n")
    assert_usage_error(result, f"*consistency.yaml:2: nested more than {MAX_CONFIG_DEPTH} levels deep*")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # An int beyond Python's 4300-digit string conversion limit raised ValueError from inside PyYAML.
        ("repeat: " + "9" * 5000 + "\n", "*consistency.yaml:1: repeat: '9999*' cannot be read (Exceeds the limit*"),
        # An int beyond the float range raised OverflowError in the number parser.
        (
            "gates:\n  consistency_gap_max: 1" + "0" * 400 + "\n",
            "*consistency.yaml:2: gates.consistency_gap_max: <integer of about 401 digits> is not a finite number*",
        ),
        ("repeat: 1001\n", "*consistency.yaml:1: repeat: 1001 is above the maximum of 1000 repetitions per task*"),
        ("repeat: true\n", "*consistency.yaml:1: repeat: True is not a whole number*"),
        ("repeat: 2.5\n", "*consistency.yaml:1: repeat: 2.5 is not a whole number*"),
        ("repeat: [3]\n", "*consistency.yaml:1: repeat: [[]3] is not a whole number*"),
        ("cassettes:\n  record: [once]\n", "*consistency.yaml:2: cassettes.record: [[]'once'] is not one of*"),
        ("route:\n  timeout: 1e12\n", "*consistency.yaml:2: route.timeout: '1e12' must be at most 86400 seconds*"),
        ('report: "out\\0.json"\n', "*consistency.yaml:1: report: 'out\\x00.json' contains a NUL character*"),
        ("1: x\n", "*consistency.yaml:1: unknown setting '1'*"),
        ("null: x\n", "*consistency.yaml:1: unknown setting 'null'*"),
        ("? [a, b]\n: 1\n", "*consistency.yaml:1: a key must be a name, not a list*"),
        ("gates:\n  ? {a: 1}\n  : 1\n", "*consistency.yaml:2: a key must be a name, not a mapping*"),
        ("repeat: 2\nrepeat: 3\n", "*consistency.yaml:2: 'repeat' is set twice (also on line 1); keep one*"),
        ("report: a\x07b\n", "*consistency.yaml:1: malformed YAML (unacceptable character #x0007*"),
        (
            "x: 1\n---\ny: 2\n",
            "*consistency.yaml:2: malformed YAML (expected a single document in the stream, but found another*",
        ),
        ("'just a string'\n", "*consistency.yaml:1: the top level must be a mapping of settings, not str*"),
        ("9" * 5000 + "\n", "*consistency.yaml: '9999*' cannot be read (Exceeds the limit*"),
    ],
)
def test_bad_yaml_values_are_usage_errors(pytester: pytest.Pytester, content: str, message: str) -> None:
    result = run_with_config(pytester, content)
    assert_usage_error(result, message)


@pytest.mark.parametrize("content", ["", "# only a comment\n", "~\n", "{}\n"])
def test_empty_yaml_sets_nothing(pytester: pytest.Pytester, content: str) -> None:
    result = run_with_config(pytester, content)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_yaml_config_that_is_a_directory(pytester: pytest.Pytester) -> None:
    pytester.mkdir("conf")
    result = pytester.runpytest("--consistency-config=conf")
    assert_usage_error(result, "*--consistency-config: *conf is a directory; pass the path of a YAML file*")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_yaml_config_that_is_a_named_pipe_is_not_read(pytester: pytest.Pytester) -> None:
    os.mkfifo(pytester.path / "pipe.yaml")  # opening it for reading would block until a writer comes
    result = pytester.runpytest("--consistency-config=pipe.yaml")
    assert_usage_error(result, "*--consistency-config: *pipe.yaml is not a regular file*")


def test_yaml_config_that_is_far_too_large(pytester: pytest.Pytester) -> None:
    result = run_with_config(pytester, "# " + "x" * MAX_CONFIG_BYTES + "\nrepeat: 2\n")
    assert_usage_error(result, f"*consistency.yaml: larger than {MAX_CONFIG_BYTES} bytes*")


def test_unreadable_yaml_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("repeat: 2\n", encoding="utf-8")
    real_open = Path.open

    def refuse(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(ConfigError, match=r"cannot read .*c\.yaml \(Permission denied\)"):
        load_yaml(path)


def test_good_yaml_still_loads_with_lines(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "# settings\nrepeat: 3\ngates:\n  consistency_gap_max: 12\nroute:\n  model: '&not *an alias'\n",
        encoding="utf-8",
    )
    flat, lines = load_yaml(path)
    assert flat == {("repeat",): 3, ("gates", "consistency_gap_max"): 12, ("route", "model"): "&not *an alias"}
    assert lines[("repeat",)] == 2 and lines[("gates", "consistency_gap_max")] == 4 and lines[("route", "model")] == 6


# --- option values on the command line and in the ini file -------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--consistency-repeat=1001"], "*argument --consistency-repeat: '1001' is above the maximum of 1000*"),
        (["--consistency-repeat=1000000"], "*'1000000' is above the maximum of 1000 repetitions per task*"),
        (["--consistency-repeat=" + "9" * 5000], "*argument --consistency-repeat: '9999*' is too large*"),
        (["--consistency-timeout=1e12"], "*argument --consistency-timeout: '1e12' must be at most 86400 seconds*"),
    ],
)
def test_bad_cli_values_are_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    assert_usage_error(pytester.runpytest(*args), message)


def test_repeat_above_the_maximum_in_the_ini_file(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI + "consistency_repeat = 5000\n")
    result = pytester.runpytest()
    assert_usage_error(result, "*tox.ini: consistency_repeat = 5000: '5000' is above the maximum of 1000*")


def test_repeat_at_the_maximum_is_accepted(pytester: pytest.Pytester) -> None:
    assert pytester.runpytest(f"--consistency-repeat={MAX_REPETITIONS}").ret == pytest.ExitCode.NO_TESTS_COLLECTED


# --- relative paths ----------------------------------------------------------------------------------------


def test_ini_config_file_is_relative_to_the_ini_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini(INI + "consistency_config = c.yaml\n")
    pytester.makefile(".yaml", c="repeat: 2\n")
    pytester.makepyfile(
        test_s="""
        import pytest

        @pytest.mark.repeat_consistency(n=5)
        def test_x():
            pass
        """
    )
    monkeypatch.chdir(pytester.mkdir("sub"))
    result = pytester.runpytest(str(pytester.path))
    result.assert_outcomes(passed=2)


def test_config_file_with_a_tilde(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    home = pytester.mkdir("home")
    (home / "c.yaml").write_text("repeat: 3000\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    result = pytester.runpytest("--consistency-config=~/c.yaml")
    assert_usage_error(result, f"*{home / 'c.yaml'}:1: repeat: 3000 is above the maximum*")


def settings_of(pytester: pytest.Pytester, *args: str) -> Any:
    """The settings a session with these arguments resolves; one given no option of the plugin sleeps until it needs
    the plugin (``plugin/dormant.py``), so it is woken here, as its first marked test would."""
    config = pytester.parseconfigure(*args)
    wake(config)
    return config.stash[STATE].settings


def test_path_of_command_line_values_is_relative_to_the_invocation_dir(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = pytester.mkdir("sub")
    monkeypatch.chdir(sub)
    settings = settings_of(
        pytester, str(pytester.path), "--consistency-report=out.json", "--consistency-cassettes=tapes"
    )
    assert settings.path("report") == sub / "out.json"
    assert settings.path("cassettes") == sub / "tapes"
    settings = settings_of(pytester, str(pytester.path), "-o", "consistency_report=o.json")
    assert settings.path("report") == sub / "o.json"


def test_path_of_ini_values_is_relative_to_the_ini_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini(INI + "consistency_report = reports/r.json\nconsistency_cassettes = tapes\n")
    monkeypatch.chdir(pytester.mkdir("sub"))
    settings = settings_of(pytester, str(pytester.path))
    assert settings.path("report") == pytester.path / "reports" / "r.json"
    assert settings.path("cassettes") == pytester.path / "tapes"


def test_path_of_yaml_values_is_relative_to_the_yaml_file(pytester: pytest.Pytester) -> None:
    conf = pytester.mkdir("conf")
    (conf / "c.yaml").write_text("report: r.json\ncassettes:\n  dir: ../tapes\n", encoding="utf-8")
    settings = settings_of(pytester, "--consistency-config=conf/c.yaml")
    assert settings.config_file == conf / "c.yaml"
    assert settings.path("report") == conf / "r.json"
    assert settings.path("cassettes") == conf / "../tapes"


def test_path_of_defaults_is_relative_to_rootdir_and_unset_is_none(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(pytester.mkdir("sub"))
    settings = settings_of(pytester, str(pytester.path))
    assert settings.path("cassettes") == pytester.path / "cassettes"
    assert settings.path("report") is None


def test_path_without_recorded_bases(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pytest_consistency.config.settings import Settings

    monkeypatch.chdir(tmp_path)
    settings = Settings(report="r.json", cassettes="~no-such-user-x/tapes")
    assert settings.path("report") == tmp_path / "r.json"
    assert settings.path("cassettes") == tmp_path / "~no-such-user-x" / "tapes"  # kept as written
    assert settings.path("baseline") is None  # an option without a default, not set


def test_path_expands_the_home_directory(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(pytester.path / "home"))
    pytester.makeini(INI + "consistency_cassettes = ~/tapes\n")
    settings = settings_of(pytester, "--consistency-report=~/r.json")
    assert settings.path("report") == pytester.path / "home" / "r.json"
    assert settings.path("cassettes") == pytester.path / "home" / "tapes"


# --- marker arguments --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "override", "message"),
    [
        ({"n": 10**6}, None, "n=1000000 is above the maximum of 1000 repetitions per task; "),
        ({"n": 1001}, None, "n=1001 is above the maximum of 1000"),
        ({"n": 5, "k": 1001}, None, "k=1001 is above the maximum of 1000"),
        ({"n": 10**5000}, None, r"n=<integer of about 5001 digits> is above the maximum"),
        ({"n": -(10**5000)}, None, r"n=<integer of about 5001 digits> must be at least 1"),
        ({"min_pass": 10**400}, None, r"min_pass=<integer of about 401 digits> is not a number"),
        ({"n": "x" * 10**6}, None, r"n='x{5,}\.\.\.x{5,}' is not a whole number"),
        ({}, 1001, "--consistency-repeat=1001 is above the maximum of 1000"),
    ],
)
def test_marker_arguments_beyond_the_limits(kwargs: dict[str, Any], override: int | None, message: str) -> None:
    started = time.perf_counter()
    with pytest.raises(MarkerError, match=message) as info:
        parse_marker((), kwargs, repeat_override=override)
    assert time.perf_counter() - started < 1 and len(str(info.value)) < 300


def test_marker_at_the_maximum_is_accepted() -> None:
    assert parse_marker((MAX_REPETITIONS,), {"k": MAX_REPETITIONS}).n == MAX_REPETITIONS


def test_marker_above_the_maximum_is_a_collection_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_m="""
        import pytest

        @pytest.mark.repeat_consistency(n=1001)
        def test_x():
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["*test_m.py::test_x: @pytest.mark.repeat_consistency: n=1001 is above the maximum of 1000 repetitions*"]
    )


def test_shown_is_short_and_never_raises() -> None:
    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert marker.shown("abc") == "'abc'" and marker.shown(2.5) == "2.5" and marker.shown(True) == "True"
    assert marker.shown(Hostile()).startswith("<") and len(marker.shown("y" * 10**6)) < 80
    assert marker.shown([10**5000]) in ("[<integer of about 5001 digits>]", "<list>")


# --- recorded answers --------------------------------------------------------------------------------------


def handle(normalize: Any = None) -> Consistency:
    state = ActiveRepetition(task_id="t.py::test_x", repeat=1, n=1, marked=False)
    return Consistency(state, normalize or (lambda answer, task_id: default_normalize(answer)))


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    "answer",
    [math.nan, math.inf, -math.inf, [1, {"a": math.nan}], {"x": [[-math.inf]]}, {math.nan: 1}, (math.inf,)],
)
def test_record_refuses_nan_and_infinities(answer: Any) -> None:
    with pytest.raises(
        ValueError, match=r"consistency\.record\(\): NaN and infinities are not valid JSON .*; record None or a string"
    ):
        handle().record(answer)


def test_record_refuses_a_normalize_hook_that_returns_nan() -> None:
    consistency = handle(lambda answer, task_id: float("nan"))
    with pytest.raises(
        ValueError, match=r"NaN .* \(the value pytest_consistency_normalize_answer returned holds nan\)"
    ):
        consistency.record("fine")
    assert not consistency._state.answer_recorded


def test_record_refuses_an_answer_nested_too_deep() -> None:
    with pytest.raises(ValueError, match=rf"nested more than MAX_ANSWER_DEPTH={MAX_ANSWER_DEPTH} levels deep"):
        handle().record(nested(1000))
    with pytest.raises(ValueError, match="MAX_ANSWER_DEPTH"):
        handle().record({"a": nested(MAX_ANSWER_DEPTH)})  # 101 deep with the dict


def test_record_accepts_an_answer_at_the_depth_limit() -> None:
    consistency = handle()
    consistency.record(nested(MAX_ANSWER_DEPTH))
    assert consistency._state.normalized == nested(MAX_ANSWER_DEPTH)


def test_record_refuses_an_answer_that_contains_itself() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="or contains itself"):
        handle().record({"answer": loop})


def test_record_refuses_an_answer_that_shares_a_list_exponentially() -> None:
    value: list[Any] = ["lol"] * 10
    for _ in range(6):
        value = [value] * 10  # 10**7 strings when written out
    started = time.perf_counter()
    with pytest.raises(ValueError, match=f"more than MAX_ANSWER_ITEMS={MAX_ANSWER_ITEMS} values"):
        handle().record(value)
    assert time.perf_counter() - started < 2


def test_default_normalize_is_iterative_and_bounded() -> None:
    assert default_normalize({"b": [" x  y ", (1, {"c": "\td\n"})], 2: None}) == {
        "b": ["x y", [1, {"c": "d"}]],
        "2": None,
    }
    deep: Any = " a  b "
    for _ in range(MAX_ANSWER_DEPTH):
        deep = [deep]
    normalized = default_normalize(deep)
    for _ in range(MAX_ANSWER_DEPTH):
        normalized = normalized[0]
    assert normalized == "a b"
    with pytest.raises(ValueError, match="MAX_ANSWER_DEPTH"):
        default_normalize(nested(1000))


def test_check_answer_accepts_ordinary_answers() -> None:
    for answer in ("text", 3, 2.5, None, True, [1, "a"], {"a": {"b": [1.0, None]}}, ["x"] * (MAX_ANSWER_ITEMS - 1)):
        answers.check_answer(answer)


def test_nan_answer_fails_the_test_and_the_report_stays_strict_json(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a="""
        import pytest

        @pytest.mark.repeat_consistency(n=2)
        def test_x(consistency):
            consistency.record({"score": float("nan")} if consistency.repeat == 2 else {"score": 1.0})
        """
    )
    result = pytester.runpytest("--consistency-report=out.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*ValueError: consistency.record(): NaN and infinities are not valid JSON*"])

    def strict(constant: str) -> Any:
        raise AssertionError(f"{constant} in the report")

    report = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"), parse_constant=strict)
    assert report["tasks"][0]["answers"] == [{"score": 1.0}, None]
