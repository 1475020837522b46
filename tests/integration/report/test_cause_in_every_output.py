"""One story of why repetitions part (issue 28): the same cause, step and gap by cause in the terminal, the JSON
report, the Markdown summary, the HTML page and pytest's JUnit XML of one session, and ``pytest-consistency
compare`` and ``show`` reading the same report; the key a clock's system prompt carries lies in the differing span
and is redacted in every output.

A real openai SDK agent against the loopback server, recorded live (``--consistency-record=once``), and replayed
from its cassettes by ``-n 2``: ``input`` (the system prompt holds the key, then a clock that differs by
repetition), ``environment`` (a tool result differs in repetition 2), ``sampling`` (the same request, another answer
in repetition 2), ``outside`` (the same calls and answers, a check after the last call fails in repetition 2) and
``steady``.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from markdown_it import MarkdownIt
from suites import cli, junit_props, load_report, run_recorded, validate_junit

AGENT = """
import os, pytest

@pytest.mark.parametrize("task", ["input", "environment", "sampling", "outside", "steady"])
@pytest.mark.repeat_consistency(n=3)
def test_agent(task, pinned_client, consistency):
    system = "You are a careful assistant."
    if task == "input":
        system += f" Use key {os.environ['OPENAI_API_KEY']} now: 2026-01-0{consistency.repeat}T00:00:00"
    messages = [{"role": "system", "content": system}, {"role": "user", "content": f"{task}: which colour?"}]
    answer = ask(pinned_client, messages)
    if task == "environment":
        result = "rain" if consistency.repeat == 2 else "sun"
        messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": "tool result: " + result}]
        answer = ask(pinned_client, messages)
    consistency.record(answer)
    if task == "outside":
        assert consistency.repeat != 2, "a check outside the model"
    assert answer == "red", answer


def ask(client, messages):
    return client.chat.completions.create(model="fake-model", messages=messages).choices[0].message.content
"""
TASKS = ("input", "environment", "sampling", "outside", "steady")
#: Per task, the cause and step every output must name.
EXPECTED: dict[str, tuple[str | None, int | None]] = {
    "input": ("input", 1),
    "environment": ("environment", 2),
    "sampling": ("sampling", 1),
    "outside": ("outside the model", None),
    "steady": (None, None),
}
#: The points of the gap each cause shows (rounded so that they add up to the gap printed).
SHOWN = {"input": "13.4", "environment": "13.3", "sampling": "13.3", "outside the model": "13.3"}
OUTPUTS = ("--consistency-md=summary.md", "--consistency-html=page.html", "--junitxml=junit.xml", "-p", "no:randomly")


def script() -> list[Step]:
    """The answers a serial session asks for, in order (tasks outer, repetitions inner)."""
    steps = []
    for task in TASKS:
        for repeat in (1, 2, 3):
            if task == "environment":
                steps.append(Step(text="check"))
            wrong = repeat == 2 and task in ("input", "environment", "sampling")
            steps.append(Step(text="blue" if wrong else "red"))
    return steps


def bracket(share: dict[str, Any], points: str) -> str:
    """`` [low, high]``: a cause's interval as the outputs print it, widened to hold its rounded points (13.4 beside
    an interval whose top is 13.33)."""
    low, high = min(share["interval"]["low"], float(points)), max(share["interval"]["high"], float(points))
    return f" [{low:.1f}, {high:.1f}]"


def task_of(task_id: str) -> str:
    return task_id.split("[")[1].rstrip("]")


def md_tables(text: str) -> dict[str, list[list[str]]]:
    """The Markdown's tables as rendered by a GFM parser, by their first header cell."""
    html = MarkdownIt("commonmark").enable("table").render(text)
    tables = {}
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        rows = [
            re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)
        ]
        tables[rows[0][0]] = rows
    return tables


def outputs(pytester: pytest.Pytester, result: pytest.RunResult) -> dict[str, str]:
    texts = {"terminal": result.stdout.str() + result.stderr.str()}
    for name in ("report.json", "summary.md", "page.html", "junit.xml"):
        texts[name] = (pytester.path / name).read_text(encoding="utf-8")
    for path in sorted(pytester.path.rglob("*.yaml")):
        texts[str(path.relative_to(pytester.path))] = path.read_text(encoding="utf-8")
    return texts


@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_one_story_of_the_cause_in_every_output(pytester: pytest.Pytester, fake: FakeOpenAI, xdist: tuple) -> None:
    fake.script(*script())
    pytester.makepyfile(test_agent=AGENT)
    if xdist:  # recorded serially (the fake answers in order), replayed from the cassettes by two workers
        assert run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly").ret == 1
        fake.reset()
        result = run_recorded(pytester, fake.base_url, "none", *OUTPUTS, *xdist)
        assert fake.requests == []
    else:
        result = run_recorded(pytester, fake.base_url, "once", *OUTPUTS)
    assert result.ret == 1, result.stdout.str()
    texts = outputs(pytester, result)
    leaks = [name for name, text in texts.items() if GOOD_KEY in text]
    assert not leaks, leaks

    # JSON: each task's cause and step, the gap by cause (adding up to the gap), the key redacted in the span
    report = load_report(pytester)
    found = {task_of(t["task_id"]): (t.get("cause"), (t.get("why") or {}).get("step")) for t in report["tasks"]}
    assert found == EXPECTED
    summary = report["summary"]
    causes = {c: s for c, s in summary["causes"].items() if s["tasks"]}
    assert list(causes) == ["input", "environment", "sampling", "outside the model"]
    assert sum(s["gap_pp"] for s in summary["causes"].values()) == pytest.approx(summary["consistency_gap_pp"])
    clock = next(t for t in report["tasks"] if t["task_id"].endswith("[input]"))
    sides = [side["text"] for side in clock["why"]["sides"]]
    assert all("<redacted>" in text for text in sides), sides  # the key was in the differing span
    # each task's share is 66.7 / 5 = 13.3 pp, four of them 53.3: the rounding gives the first cause the 0.1 left
    assert f"{summary['consistency_gap_pp']:.1f}" == "53.3"

    # terminal: the gap by cause, each share with its interval, and one cause line per inconsistent task
    terminal = re.sub(r"\s+", " ", texts["terminal"])
    by_cause = ", ".join(
        f"{cause} {points} pp{bracket(causes[cause], points)} (1 task)" for cause, points in SHOWN.items()
    )
    assert f"gap by cause: {by_cause}; intervals conditional on the causes named" in terminal
    for task, (cause, step) in EXPECTED.items():
        if cause is not None:
            where = "after the last step" if step is None else f"at step {step}"
            assert f"cause {cause} {where}:" in terminal, task
    assert "<redacted> now: 2026-01-01" in terminal

    # Markdown: the table of causes, the task table's cause column, the cause lines
    tables = md_tables(texts["summary.md"])
    assert tables["cause"][1:] == [
        *([cause, "1", f"{points} pp", bracket(causes[cause], points).strip()] for cause, points in SHOWN.items()),
        ["<strong>all causes</strong>", "4", f"<strong>{summary['consistency_gap_pp']:.1f} pp</strong>", ""],
    ]
    column = tables["task"][0].index("cause")
    in_table = {re.sub(r".*\[(\w+)\]", r"\1", row[0]): row[column] for row in tables["task"][1:]}
    assert in_table == {
        "input": "input, step 1",
        "environment": "environment, step 2",
        "sampling": "sampling, step 1",
        "outside": "outside the model",
    }
    assert "cause input at step 1: the first requests differ in the system message" in texts["summary.md"]

    # HTML: the table of causes, the grid's cause column, the finding with its two sides
    page = texts["page.html"]
    assert '<section id="causes">' in page and page.count('<div class="cause" id="cause-') == 4
    for cause, step in (("input", 1), ("environment", 2), ("sampling", 1)):
        assert f">{cause} @{step}</a>" in page
    assert "&lt;redacted&gt; now: 2026-01-0<mark>1</mark>" in page

    # JUnit: the task's cause and step on each repetition, the gap by cause on the suite; valid
    validate_junit(pytester.path / "junit.xml")
    root = ET.parse(pytester.path / "junit.xml").getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    props = junit_props(suite)
    for cause in causes:
        name = cause.replace(" ", "_")
        assert props[f"consistency.cause.{name}.gap_pp"] == repr(float(causes[cause]["gap_pp"]))
        low, high = causes[cause]["interval"]["low"], causes[cause]["interval"]["high"]
        assert (props[f"consistency.cause.{name}.gap_pp.low"], props[f"consistency.cause.{name}.gap_pp.high"]) == (
            repr(float(low)),
            repr(float(high)),
        )
        assert props[f"consistency.cause.{name}.tasks"] == "1"
    assert "consistency.cause.route.tasks" not in props
    for case in (c for c in root.iter("testcase") if c.get("name", "").startswith("test_agent[")):
        mine = junit_props(case)
        cause, step = EXPECTED[task_of(mine["consistency.task_id"])]
        assert mine.get("consistency.task.cause") == cause
        if cause is not None:
            assert mine["consistency.task.cause.step"] == ("n/a" if step is None else str(step))

    # show and compare read the same report
    shown_md = cli("show", "report.json", "--format", "markdown", cwd=pytester.path).stdout
    assert shown_md == texts["summary.md"]
    table = json.loads(cli("compare", "report.json", "report.json", "--format", "json", cwd=pytester.path).stdout)
    assert [row["causes"] for row in table["rows"]] == [
        {"route": 0.0, **{cause: float(points) for cause, points in SHOWN.items()}, "judge": 0.0}
    ] * 2


def test_a_report_without_causes_compares_with_dashes(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """A report written before causes were named (no ``summary.causes``, no ``tasks[].cause``) still compares."""
    fake.script(*script())
    pytester.makepyfile(test_agent=AGENT)
    run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly")
    data: dict[str, Any] = json.loads((pytester.path / "report.json").read_text())
    data["summary"].pop("causes", None)
    for task in data["tasks"]:
        task.pop("cause", None)
        task.pop("why", None)
    Path(pytester.path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    text = cli("compare", "report.json", "old.json", "--labels", "now,before", cwd=pytester.path).stdout
    head, now, before = text.splitlines()[:3]
    at = head.index("route pp")
    shares = re.findall(r"(\d+\.\d)(?: \[\d+\.\d, \d+\.\d\])?", now[at:])  # each share, its interval beside
    assert shares[:5] == ["0.0", *SHOWN.values()]
    assert before[at:].split()[:5] == ["-"] * 5
