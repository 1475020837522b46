"""A cassette is untrusted input: one that would expand past a bound is refused before use, in bounded time and memory.

A YAML alias names a node written once, so a few anchors that each repeat the one before ("billion laughs") make a
2.5 KB file stand for a billion strings. The safe loader builds that cheaply (one list, shared), but whatever walks it
afterwards does not: the message that named the field of the wrong type rendered it with ``repr()`` and ran to
MemoryError (issue 41), and converting it to JSON writes every copy. So a cassette holds no anchor and no alias
(vcrpy never writes one), nothing nested deeper than vcrpy nests, and every message shows a bounded part of what it
quotes. The refusal is the corrupt-cassette error: an infrastructure error of its repetition, naming the file.

Each replay runs in a subprocess whose address space is capped (``RLIMIT_AS``) and whose time is bounded, so a
regression fails here instead of taking the machine's memory or hanging the suite.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_openai import FakeOpenAI, Step
from suites import COMMAND, load_report, run_recorded
from suites import ONE_CALL_AGENT as AGENT

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status to cap the address space")


#: The address space a session may add to what it holds once the interpreter has started (the SDK, vcrpy and their
#: threads fit in it many times over; a billion strings do not).
HEADROOM = 768 * 2**20
SECONDS = 60

#: Put in the session's directory: caps the address space of the process that imports it.
CAP = f"""
import resource

def _size():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))

resource.setrlimit(resource.RLIMIT_AS, (_size() + {HEADROOM}, resource.getrlimit(resource.RLIMIT_AS)[1]))
"""

#: Where the hostile value goes, written as a plain scalar and then replaced by the YAML that stands for it.
MARK = "HOSTILE-VALUE"

#: Nine anchors, each a list of ten of the one before: ``*l8`` stands for 10**9 strings (about 2 KB of YAML).
LAUGHS = "".join(
    f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 10) if level else ', '.join(['lol'] * 10)}]\n"
    for level in range(9)
)


def _at(*keys: str) -> Callable[[dict[str, Any]], None]:
    def edit(interaction: dict[str, Any]) -> None:
        target = interaction
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = MARK

    return edit


#: (where the value goes, the YAML written there, what goes before ``interactions``, what the refusal names)
CASES: dict[str, tuple[Callable[[dict[str, Any]], None], str, str, str]] = {
    "billion laughs in a header": (_at("response", "headers", "content-type"), "*l8", LAUGHS, "alias"),
    "billion laughs in the status code": (_at("response", "status", "code"), "*l8", LAUGHS, "alias"),
    "billion laughs in the body": (_at("response", "body", "string"), "*l8", LAUGHS, "alias"),
    "billion laughs in a request header": (_at("request", "headers", "accept"), "*l8", LAUGHS, "alias"),
    "billion laughs beside the exchange": (_at("recorded_at"), "*l8", LAUGHS, "alias"),
    "a merge key": (_at("response", "status"), "{<<: *s, code: 200}", "s: &s {message: OK}\n", "alias"),
    "an anchor without an alias": (_at("response", "status", "message"), "&m OK", "", "anchor"),
    "deep nesting beside the exchange": (_at("recorded_at"), "[" * 200 + "]" * 200, "", "nested"),
    "deep nesting in a header": (_at("response", "headers", "content-type"), "[" * 200 + "]" * 200, "", "nested"),
}


def hostile(path: Path, case: str) -> int:
    """Rewrite the recorded cassette at ``path`` as ``case``; its size in bytes."""
    edit, written, before, _ = CASES[case]
    data = yaml.safe_load(path.read_text())
    edit(data["interactions"][0])
    text = before + yaml.safe_dump(data).replace(MARK, written)
    path.write_text(text)
    return len(text.encode())


def capped(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, float]:
    """A session in a subprocess with its address space capped; fails the test when it runs past the bound."""
    pytester.makeconftest(CAP)
    began = time.monotonic()
    result = pytester.runpytest_subprocess(*args, timeout=SECONDS)
    return result, time.monotonic() - began


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake: FakeOpenAI) -> pytest.Pytester:
    fake.script(*[Step(text="widget")] * 3)
    pytester.makepyfile(test_agent=AGENT)
    assert run_recorded(pytester, fake.base_url, "once").ret == 0
    fake.reset()
    return pytester


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_cassette_is_refused_before_use_naming_the_file(
    recorded: pytest.Pytester, fake: FakeOpenAI, case: str
) -> None:
    target = recorded.path / "cassettes" / "test_agent" / "test_task" / "rep-2.yaml"
    size = hostile(target, case)
    assert size < 3000, size  # a small file: what it stands for is the attack
    result, took = capped(
        recorded,
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        "--consistency-record=none",
        "--consistency-report=report.json",
        "-p",
        "no:cacheprovider",
    )
    out = result.stdout.str() + result.stderr.str()
    assert "MemoryError" not in out and "INTERNALERROR" not in out and "RecursionError" not in out, out[-3000:]
    assert result.ret == 1, out[-3000:]  # min_pass=0.5 would tolerate one failure of the agent's: this is none
    result.assert_outcomes(passed=2, errors=1)
    assert fake.requests == []
    result.stdout.fnmatch_lines(["*ERROR at setup of test_task[[]rep2[]]*", f"*rep-2.yaml*{CASES[case][3]}*"])
    assert len(out) < 20_000, len(out)  # no message renders the structure
    broken = load_report(recorded)["tasks"][0]["repetitions"][1]
    assert broken["infrastructure"].startswith("cassette unreadable or unwritable"), broken
    assert took < SECONDS


def test_cassettes_convert_leaves_a_hostile_cassette_as_it_is(recorded: pytest.Pytester) -> None:
    """The command that reads every cassette below a directory: the hostile one is named and left, in bounded time
    and memory; the others are converted."""
    directory = recorded.path / "cassettes" / "test_agent" / "test_task"
    hostile(directory / "rep-2.yaml", "billion laughs in the body")

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, resource.getrlimit(resource.RLIMIT_AS)[1]))

    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run(
        [COMMAND, "cassettes", "convert", "--to", "json", "cassettes"],
        cwd=recorded.path,
        capture_output=True,
        text=True,
        env=env,
        timeout=SECONDS,
        preexec_fn=cap,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stdout + done.stderr, done.stderr[-3000:]
    left = [line for line in done.stdout.splitlines() if line.startswith("left as it is: ")]
    assert len(left) == 1 and "rep-2.yaml: cannot be read" in left[0] and "alias" in left[0], done.stdout
    assert len(left[0]) < 600, left[0]
    assert (directory / "rep-2.yaml").exists() and not (directory / "rep-2.json").exists()
    assert json.loads((directory / "rep-1.json").read_text())["interactions"]
