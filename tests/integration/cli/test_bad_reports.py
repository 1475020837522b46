"""Hostile reports for ``pytest-consistency show``, ``merge`` and ``compare``: never a traceback, never a lost output.

Every report here starts as one a real session wrote (pytester), then has one field made hostile: valid JSON that
the model cannot use (``1e400`` reads as infinity, an answer nested 900 levels deep), text UTF-8 cannot encode (a
lone surrogate, as ``os.fsdecode`` makes), and one value of every kind in every field. A malformed report is exit
status 2 with a message naming the file and the field; a well-formed one with odd text is shown, with the text
escaped. The headline cases run the installed command in a subprocess whose stdout is strict UTF-8 (as a UTF-8
terminal or CI log is); the sweep calls the same ``main`` in-process, with the same strict stdout.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import forkserver
import pytest
from suites import pattern_suite

from pytest_consistency.cli import main

COMMAND = str(Path(sys.executable).parent / "pytest-consistency")
PATTERNS = {"a": "PPFPP", "b": "PPPPP", "c": "FFFFF"}
ANSWERS = {"a": ["x", "x", "y", "x", "x"], "b": ["1", "1", "1", "1", "1"], "c": [[1], [1], [2], [1], [1]]}


def commands(path: str, other: str | None = None) -> list[list[str]]:
    """Every command that reads a report, on ``path``: show in every format, merge, compare."""
    show = [["show", path], ["show", path, "-q"]] + [
        ["show", path, "--format", fmt] for fmt in ("json", "markdown", "html", "junit")
    ]
    return [*show, ["merge", path, "-o", f"{path}.merged.json"], ["compare", other or path, path]]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed command, with a strict UTF-8 stdout and stderr (``PYTHONIOENCODING``): a text the terminal
    cannot encode is a crash here, as it is on a UTF-8 terminal, not hidden by a C locale's surrogateescape."""
    env = {**os.environ, "COLUMNS": "80", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [forkserver.command("pytest-consistency"), *args],
        cwd=cwd,
        capture_output=True,
        env=env,
        timeout=120,
        text=True,
        errors="replace",
    )


@pytest.fixture
def written(pytester: pytest.Pytester) -> dict[str, Any]:
    """The JSON report a real session wrote: three tasks, one flaky, one failing, answers of two types."""
    pytester.makepyfile(test_task=pattern_suite(PATTERNS, ANSWERS, marker="min_pass=0.6"))
    pytester.runpytest("--consistency-report=good.json")
    data: dict[str, Any] = json.loads((pytester.path / "good.json").read_text())
    assert [t["task_id"] for t in data["tasks"]] == [f"test_task.py::test_task[{t}]" for t in PATTERNS]
    return data


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def infinite_mean(data: dict[str, Any]) -> str:
    text = json.dumps(data)
    return text.replace('"mean_at_k": ' + json.dumps(data["summary"]["mean_at_k"]), '"mean_at_k": 1e400', 1)


def deep_answer(depth: int) -> Any:
    def change(data: dict[str, Any]) -> str:
        data["tasks"][1]["repetitions"][2]["answer"] = nested(depth)
        return json.dumps(data)

    return change


def deep_text(data: dict[str, Any]) -> str:
    """Nesting past the JSON decoder's own recursion limit: written by hand, json.dumps cannot."""
    text = json.dumps(data)
    return text.replace('"answer": "1"', '"answer": ' + "[" * 100_000 + "]" * 100_000, 1)


def wrong_target(data: dict[str, Any]) -> str:
    data["summary"]["intervals"]["target"] = "everything"
    return json.dumps(data)


def wrong_repeat(data: dict[str, Any]) -> str:
    data["summary"]["repeat"] = -1
    return json.dumps(data)


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (infinite_mean, "bad.json.summary.mean_at_k: a number beyond the range of a float (read as inf)"),
        (deep_answer(900), "bad.json.tasks[1].repetitions[2].answer[0][0][0][0][0][0][0]...: nested more than"),
        (deep_text, "bad.json: nested too deeply"),
        (wrong_target, "summary.intervals.target 'everything' is not one of suite, population"),
        (wrong_repeat, "summary.repeat -1 is not the n of the report's tasks"),
    ],
    ids=["1e400", "answer-900-deep", "100000-deep", "interval-target", "repeat"],
)
def test_a_malformed_report_is_exit_2_naming_the_field_in_every_command(
    pytester: pytest.Pytester, written: dict[str, Any], make: Any, named: str
) -> None:
    (pytester.path / "bad.json").write_text(make(copy.deepcopy(written)))
    for argv in commands("bad.json", other="good.json"):
        result = cli(*argv, cwd=pytester.path)
        assert result.returncode == 2, (argv, result.stdout[-500:], result.stderr[-2000:])
        assert "Traceback" not in result.stderr and named in result.stderr, (argv, result.stderr[-2000:])
        assert result.stderr.startswith(f"pytest-consistency {argv[0]}: error: "), result.stderr[-500:]
        assert result.stdout == ""
    assert not (pytester.path / "bad.json.merged.json").exists()


def test_lone_surrogates_in_a_report_are_shown_as_escapes_by_every_command(
    pytester: pytest.Pytester, written: dict[str, Any]
) -> None:
    """A surrogate is what a session records from ``os.fsdecode``: the report is valid, so every command works."""
    data = copy.deepcopy(written)
    task = data["tasks"][0]
    task["task_id"] = task["task_id"].replace("[a]", "[caf\udcff]")
    for rep in task["repetitions"]:
        rep["task_id"] = task["task_id"]
        rep["answer"] = rep["normalized"] = "caf\udcff"
    task["answers"] = ["caf\udcff"] * len(task["answers"])
    data["summary"]["warnings"].append("a warning about caf\udcff")
    (pytester.path / "odd.json").write_text(json.dumps(data))
    for argv in commands("odd.json"):
        result = cli(*argv, cwd=pytester.path)
        assert result.returncode in (0, 1), (argv, result.stderr[-2000:])
        assert "Traceback" not in result.stderr, (argv, result.stderr[-2000:])
        escaped = "caf#xDCFF" if argv[-1] == "junit" else "caf\\udcff"
        assert argv[0] == "compare" or escaped in result.stdout, (argv, result.stdout[-1000:])  # compare: no ids
        assert "\ufffd" not in result.stdout  # shown, not silently replaced
    merged = json.loads((pytester.path / "odd.json.merged.json").read_text())
    assert merged["tasks"][0]["task_id"] == task["task_id"]  # the data itself is kept exactly


@pytest.mark.skipif(sys.platform == "darwin", reason="APFS refuses file names that are not UTF-8")
def test_a_file_name_that_is_not_utf8_is_printed_as_its_escape(pytester: pytest.Pytester) -> None:
    """The shell passes file names as bytes; Python decodes a non-UTF-8 byte to a lone surrogate."""
    pytester.makepyfile(test_task=pattern_suite({"a": "PPPPP"}))
    pytester.runpytest("--consistency-report=good.json")
    odd = os.fsencode(pytester.path / "good.json").replace(b"good", b"caf\xff")
    os.rename(pytester.path / "good.json", odd)
    result = subprocess.run(
        [COMMAND.encode(), b"merge", odd, b"-o", odd + b".merged"],
        cwd=pytester.path,
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert result.stdout.decode("utf-8").splitlines()[-1].endswith("caf\\udcff.json.merged")
    assert os.path.exists(odd + b".merged")


# --- the sweep: one hostile value in each field --------------------------------------------------------------

HOSTILE: list[Any] = [None, "x", -1, 10**30, 1e300, [], {}, True, "caf\udcff"]


def leaves(data: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """The path of every scalar and empty container, through the first item of each list."""
    if isinstance(data, dict) and data:
        for key, value in data.items():
            yield from leaves(value, (*path, key))
    elif isinstance(data, list) and data:
        yield from leaves(data[0], (*path, 0))
    else:
        yield path


def replaced(data: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(data)
    node: Any = changed
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return changed


def run_main(argv: list[str]) -> tuple[int, str, str]:
    """``main`` in-process, its stdout strict UTF-8 as a terminal's; an exception escaping it fails the test."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
        out.flush()
    assert isinstance(out.buffer, io.BytesIO)
    return status, out.buffer.getvalue().decode("utf-8"), err.getvalue()


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_one_hostile_value_in_any_field_is_a_clean_answer_never_a_traceback(
    pytester: pytest.Pytester, written: dict[str, Any], value: Any
) -> None:
    """Any field set to a value of another type, out of range or unencodable: a command shows the report or
    refuses it with exit 2 and a message naming the field (its key), never with an exception.

    Every command reads a report the same way, so a refused report is refused by ``show`` alone (the headline
    tests above run every command on refused reports); a report that reads goes through every command.
    """
    path = str(pytester.path / "r.json")
    refused = accepted = 0
    for where in leaves(written):
        key = next(str(step) for step in reversed(where) if isinstance(step, str))
        Path(path).write_text(json.dumps(replaced(written, where, value)))
        status, _, err = run_main(["show", path])
        if status == 2:
            refused += 1
            assert err.startswith("pytest-consistency show: error: ") and key in err, (where, err)
            continue
        assert status == 0, (where, status, err)
        accepted += 1
        for argv in commands(path, other=str(pytester.path / "good.json")):
            status, _, err = run_main(argv)
            assert status in ((0, 1) if argv[0] == "merge" else (0,)), (where, argv, status, err)
    assert refused and accepted  # the sweep reaches both the checks and the renderers
