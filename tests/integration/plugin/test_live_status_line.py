"""A long live run says where it is on a terminal, and leaves pytest's own output as pytest wrote it (issue 42, item 6).

Each inner session runs on a real pseudo-terminal (``tests/support/terminal.py``), against the loopback OpenAI server
with live calls (``--consistency-record=off``): every byte it wrote is read back, and the screen it leaves is
rebuilt from them (carriage returns, backspaces and overwrites applied).
"""

from __future__ import annotations

import os
import re

import pytest
from fake_openai import FakeOpenAI, Step
from suites import load_report
from terminal import run_on_a_terminal, screen

AGENT = """
import pytest

@pytest.mark.parametrize("task", ["alpha", "beta"])
@pytest.mark.repeat_consistency(n=3)
def test_agent(pinned_client, consistency, task):
    reply = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": task}])
    consistency.record(reply.choices[0].message.content)
"""

#: One drawing of the status line, as it is written (its text between the colour's codes).
STATUS = re.compile(
    r"task (?P<task>\d+)/(?P<tasks>\d+), repetition (?P<repeat>\d+)/(?P<n>\d+), (?P<calls>\d+) calls?, "
    r"(?P<tokens>[\d,]+) tokens(?:, (?P<dollars>(?:at least )?\$[\d.,]+))?, (?P<elapsed>\d+s|\d+m \d\ds)"
    r"(?:, about (?P<left>\S+) left)?"
)


def live_session(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> list[str]:
    fake.script(*[Step(text="done")] * 6)
    pytester.makepyfile(test_agent=AGENT)
    return [
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        "--consistency-record=off",
        "--consistency-report=report.json",
        *args,
    ]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_live_run_on_a_terminal_says_where_it_is_and_leaves_pytests_lines_intact(
    pytester: pytest.Pytester, fake: FakeOpenAI, workers: list[str]
) -> None:
    """After each repetition the line pytest is filling ends with the task and the repetition, the calls and the
    tokens so far, the time since the first repetition started and, while repetitions are left, an estimate of the
    time left; under xdist too, counted from the reports the controller receives. The screen left afterwards shows
    pytest's lines and no trace of the status."""
    args = live_session(pytester, fake, *workers)
    status, raw = run_on_a_terminal(args, pytester.path, os.environ)
    assert status == 0, raw
    drawn = [match.groupdict() for match in STATUS.finditer(raw)]
    assert drawn, raw
    repetitions = {(d["task"], d["repeat"]) for d in drawn}
    assert len(repetitions) == 6, drawn  # every repetition of both tasks was shown once it finished
    assert {(d["tasks"], d["n"]) for d in drawn} == {("2", "3")}
    assert any(d["left"] is not None for d in drawn), drawn  # the estimate, while repetitions were left
    last = drawn[-1]
    report = load_report(pytester)
    calls = [call for task in report["tasks"] for rep in task["repetitions"] for call in rep["calls"]]
    assert last["calls"] == "6" and last["tokens"] == f"{sum(call['total_tokens'] for call in calls):,}", last
    assert last["left"] is None  # nothing left at the end: no estimate
    assert all(d["dollars"] is None for d in drawn), drawn  # the fake model has no price: no dollars, never $0
    blank = 0 if workers else 1  # pytest's line before the summary (xdist's controller writes none)
    assert_intact(screen(raw), r"(test_agent\.py )?\.{6}\s+\[100%\]", blank=blank)


def test_the_status_line_counts_the_dollars_the_report_gives(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """With a price for the model, the line counts the session's dollars so far at that price; its last drawing is
    the report's total to the cent's digits, as the summary prints it."""
    from pytest_consistency.model.prices import usd_text

    args = live_session(pytester, fake, "--consistency-price=fake-model=150,600")
    status, raw = run_on_a_terminal(args, pytester.path, os.environ)
    assert status == 0, raw
    drawn = [match.groupdict() for match in STATUS.finditer(raw)]
    assert drawn and all(d["dollars"] is not None for d in drawn), raw
    costs = [float(d["dollars"].lstrip("$").replace(",", "")) for d in drawn]
    assert costs == sorted(costs) and costs[0] > 0, costs  # it only grows
    usd = load_report(pytester)["summary"]["cost"]["usd"]
    assert usd > 0 and drawn[-1]["dollars"] == usd_text(usd), (drawn[-1], usd)


def assert_intact(shown: list[str], *lines: str, blank: int = 1) -> None:
    """The screen shows pytest's progress ``lines`` (patterns), one after the other, then ``blank`` blank lines and
    the summary's first separator, as pytest writes them: no status left, no line of it wrapped onto the next."""
    assert not [line for line in shown if re.search(r"repetition \d+/\d+", line)], shown
    first = next(i for i, line in enumerate(shown) if re.fullmatch(lines[0], line))
    for offset, pattern in enumerate(lines):
        assert re.fullmatch(pattern, shown[first + offset]), (pattern, shown)
    after = first + len(lines)
    assert shown[after : after + blank] == [""] * blank and shown[after + blank].startswith("="), shown


def test_pytests_lines_stay_intact_when_a_new_file_starts_a_line(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """pytest's classic progress (no percentage to fill the line with) starts each file on a line of its own: the
    status drawn after the first file's letters is gone from that line when the next one starts."""
    args = live_session(pytester, fake, "-o", "console_output_style=classic")
    (pytester.path / "test_agent.py").rename(pytester.path / "test_first.py")
    pytester.makepyfile(test_second=AGENT)
    fake.script(*[Step(text="done")] * 12)
    status, raw = run_on_a_terminal(args, pytester.path, os.environ)
    assert status == 0, raw
    assert STATUS.search(raw), raw
    assert_intact(screen(raw), r"test_first\.py \.{6}", r"test_second\.py \.{6}")


def test_the_status_line_is_for_a_terminal_at_the_default_verbosity(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """The same session shows the status on a terminal, and not with ``-q`` (quiet), nor with ``-v`` (a line per
    test, with its own progress), nor when its output is not a terminal."""
    args = live_session(pytester, fake)
    status, raw = run_on_a_terminal(args, pytester.path, os.environ)
    assert status == 0 and STATUS.search(raw), raw
    for flag in ("-q", "-v"):
        status, raw = run_on_a_terminal([*args, flag], pytester.path, os.environ)
        assert status == 0 and "passed" in raw, raw
        assert not STATUS.search(raw), (flag, raw)
    piped = pytester.runpytest_subprocess(*args)
    assert piped.ret == 0, piped.stdout.str()
    assert not STATUS.search(piped.stdout.str() + piped.stderr.str())
