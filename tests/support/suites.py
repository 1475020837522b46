"""Source code of inner test suites whose outcomes follow a known pattern, for ``pytester``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import forkserver
import inner

ROOT = Path(__file__).resolve().parents[2]


def pattern_suite(
    patterns: dict[str, str],
    answers: dict[str, list[Any]] | None = None,
    marker: str = "",
) -> str:
    """One parametrized task per key; repetition i passes when ``patterns[task][i-1] == "P"``."""
    n = len(next(iter(patterns.values())))
    args = f"n={n}" + (f", {marker}" if marker else "")
    return f"""
import json
import pytest

PATTERNS = json.loads({json.dumps(json.dumps(patterns))})
ANSWERS = json.loads({json.dumps(json.dumps(answers or {}))})

@pytest.mark.parametrize("task", list(PATTERNS))
@pytest.mark.repeat_consistency({args})
def test_task(task, consistency):
    if task in ANSWERS:
        consistency.record(ANSWERS[task][consistency.repeat - 1])
    assert PATTERNS[task][consistency.repeat - 1] == "P"
"""


def published_patterns(all_pass: int = 89, successes: int = 650, tasks: int = 168) -> dict[str, str]:
    """AppWorld-shaped outcomes: ``all_pass`` tasks pass 5/5, the rest share the remaining successes."""
    patterns = {f"t{i:03d}": "PPPPP" for i in range(all_pass)}
    flaky = tasks - all_pass
    base, extra = divmod(successes - 5 * all_pass, flaky)
    for j in range(flaky):
        c = base + (1 if j < extra else 0)
        patterns[f"t{all_pass + j:03d}"] = "P" * c + "F" * (5 - c)
    return patterns


def run_recorded(pytester: Any, base_url: str, mode: str, *args: str) -> Any:
    """An inner session on the loopback route in cassette mode ``mode``, writing ``report.json``."""
    return pytester.runpytest(
        f"--consistency-base-url={base_url}",
        "--consistency-model=fake-model",
        f"--consistency-record={mode}",
        "--consistency-report=report.json",
        *args,
    )


#: A task of three repetitions making one chat call each, tolerant of one failure: for tests about its cassettes.
ONE_CALL_AGENT = """
import pytest

@pytest.mark.repeat_consistency(n=3, min_pass=0.5)
def test_task(pinned_client, consistency):
    reply = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "list the widgets"}])
    consistency.record(reply.choices[0].message.content)
"""


def subprocess_session(pytester: Any, mode: str, *args: str, timeout: float = 300) -> Any:
    """An inner session in a fresh interpreter (what a CI job runs, environment and all), in cassette mode ``mode``,
    writing ``report.json``."""
    return pytester.runpytest_subprocess(*session_args(mode, *args), timeout=timeout)


def inprocess_session(pytester: Any, mode: str, *args: str) -> Any:
    """The same session in the test's own process (where the SDKs are imported already): for a run whose promise is
    not about a fresh interpreter, such as a recording with the key exported before the replay a test is about."""
    return pytester.runpytest(*session_args(mode, *args))


def session_args(mode: str, *args: str) -> tuple[str, ...]:
    return (f"--consistency-record={mode}", "--consistency-report=report.json", "-p", "no:cacheprovider", *args)


def replays_everywhere(pytester: Any, base_url: str, ret: int) -> dict[str, dict[str, Any]]:
    """Replay what was recorded serially, with ``-n 2``, and as two shards merged; each must exit ``ret``. The three
    reports, by name ("serial", "xdist", "merged"), for tests whose promise is the same answer everywhere."""
    reports = {}
    for name, args in (("serial", ("-p", "no:randomly")), ("xdist", ("-n", "2"))):
        result = run_recorded(pytester, base_url, "none", *args, f"--consistency-report={name}.json")
        assert result.ret == ret, result.stdout.str()
        reports[name] = load_report(pytester, f"{name}.json")
    for i in (1, 2):
        name = f"--consistency-report=shard{i}.json"
        shard = run_recorded(pytester, base_url, "none", f"--consistency-shard={i}/2", name)
        assert shard.ret in (0, 1), shard.stdout.str()
    merged = cli("merge", "shard1.json", "shard2.json", "-o", "merged.json", cwd=pytester.path)
    assert merged.returncode == ret, merged.stdout + merged.stderr
    reports["merged"] = load_report(pytester, "merged.json")
    return reports


#: What differs from one session to the next by design: wall-clock values and the run's id.
WALL_CLOCK_REPETITION = ("duration", "started", "stopped")
WALL_CLOCK_CALL = ("latency_ms", "started_at")


def without_timings(report: dict[str, Any]) -> dict[str, Any]:
    """The report without wall-clock figures (durations, latencies, start times) and the run's id, which differ run
    to run."""
    report.get("summary", {}).get("run", {}).pop("run_id", None)
    for task in report["tasks"]:
        for rep in task["repetitions"]:
            for name in WALL_CLOCK_REPETITION:
                rep.pop(name, None)
            for call in rep["calls"]:
                for name in WALL_CLOCK_CALL:
                    call.pop(name, None)
    return report


def records(
    patterns: dict[str, str],
    answers: dict[str, list[Any]] | None = None,
    k: int | None = None,
    min_pass: float = 1.0,
    min_rate: float | None = None,
) -> list[Any]:
    """Repetition records without a session: repetition i of a task passed when its pattern has "P" at i-1.

    "F" is a failure, "S" a skip and "-" a repetition that never ran; the record of what
    :func:`pattern_suite` gives through pytest, for the pure functions.
    """
    from pytest_consistency.model.records import RepetitionResult

    outcomes = {"P": "passed", "F": "failed", "S": "skipped", "-": "not run"}
    result = []
    for order, (task, pattern) in enumerate(patterns.items()):
        n = len(pattern)
        for i, mark in enumerate(pattern, start=1):
            given = (answers or {}).get(task)
            result.append(
                RepetitionResult(
                    task_id=task,
                    nodeid=f"test_task.py::test_task[{task}-rep{i}]",
                    repeat=i,
                    n=n,
                    k=k or n,
                    min_pass=min_pass,
                    order=order,
                    outcome=outcomes[mark],
                    answer_recorded=given is not None,
                    answer=given[i - 1] if given else None,
                    normalized=given[i - 1] if given else None,
                    min_rate=min_rate,
                )
            )
    return result


def load_report(pytester: Any, name: str = "report.json") -> dict[str, Any]:
    """The JSON report an inner session wrote, as plain data."""
    return json.loads((pytester.path / name).read_text())


def consistency_section(result: Any) -> list[str]:
    """The lines of the ``consistency`` section of an inner session's terminal output."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "= consistency =" in line)
    end = next((i for i, line in enumerate(lines) if i > start and line.startswith("=")), len(lines))
    return lines[start + 1 : end]


#: The command-line tool of the venv the tests run in.
COMMAND = str(Path(sys.executable).parent / "pytest-consistency")


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``pytest-consistency ARGS`` in ``cwd``, at 80 columns, as CI runs it."""
    env = {**os.environ, "COLUMNS": "80"}
    command = forkserver.command("pytest-consistency")  # the same script, forked from the warm server if one runs
    return subprocess.run([command, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout)


def replay_examples(
    report: Path, *args: str, root: Path = ROOT, suite: str = "examples"
) -> subprocess.CompletedProcess[str]:
    """Run the example suite as CI does, from ``root``: no key in the environment, the repository's cassettes only.

    ``suite`` is ``examples`` or a suite of its own below it (``examples/judges``), with its own consistency.yaml.

    The outputs ``examples/consistency.yaml`` asks for (the main job's Markdown and HTML beside it) go beside
    ``report`` instead, and none into a CI step summary: a test never rewrites what the main-job command wrote.
    ``args`` come last, so a test's own ``--consistency-html`` wins."""
    dropped = ("EXAMPLE_LLM_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "GITHUB_STEP_SUMMARY")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTEST_ADDOPTS"] = inner.addopts(env.get("PYTEST_ADDOPTS", ""))  # as the main job's venv: no other test tools
    command = [forkserver.interpreter(), "-m", "pytest", suite, "-p", "no:cacheprovider", "-p", "no:randomly"]
    command += [f"--consistency-config={suite}/consistency.yaml", f"--consistency-report={report}"]
    command += [f"--consistency-md={report.with_suffix('.md')}", f"--consistency-html={report.with_suffix('.html')}"]
    command += [f"--consistency-cassettes={ROOT / 'cassettes'}", *args]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600)


def route_settings(**changes: Any) -> Any:
    """A pinned route as the summary keeps it, for records made without a session; ``changes`` override fields."""
    from dataclasses import replace

    from pytest_consistency.model.result import RouteSettings

    route = RouteSettings(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        key_fingerprint="sha256:abcdef12",
        key_env="OPENAI_API_KEY",
        replay_only=False,
        timeout=60.0,
        max_retries=1,
        temperature=0.0,
        seed=None,
        retries_max=1,
    )
    return replace(route, **changes)


def session_only(line: str) -> bool:
    """Lines the session prints after the summary that a report cannot know: where it wrote, how to see more."""
    return line.startswith(("report: ", "wrote ", "(-v lists", "TOLERATED "))


JUNIT_SCHEMA = Path(__file__).parents[1] / "schemas" / "junit-10.xsd"


def strict_schema() -> Any:
    import xmlschema

    return xmlschema.XMLSchema(JUNIT_SCHEMA)


def relaxed_schema() -> Any:
    """junit-10.xsd plus the one thing pytest writes that it omits: ``<properties>`` in ``<testcase>``."""
    import xmlschema

    text = JUNIT_SCHEMA.read_text(encoding="utf-8")
    anchor = '<xs:element ref="skipped"/>\n                    <xs:element ref="error"/>'
    assert anchor in text
    return xmlschema.XMLSchema(text.replace(anchor, '<xs:element ref="properties"/>\n' + anchor))


def validate_junit(path: Path) -> None:
    """Valid against junit-10.xsd as is once testcase properties are removed, and with them allowed."""
    import xml.etree.ElementTree as ET

    relaxed_schema().validate(str(path))
    tree = ET.parse(path)
    for testcase in tree.iter("testcase"):
        for props in testcase.findall("properties"):
            testcase.remove(props)
    strict_schema().validate(tree)


def junit_props(element: Any) -> dict[str, str]:
    """The ``<properties>`` of a JUnit element as a dict."""
    node = element.find("properties")
    assert node is not None
    return {p.get("name", ""): p.get("value", "") for p in node.findall("property")}


def run_mode(pytester: Any, mode: str, *args: str) -> Any:
    """An inner session in cassette ``mode`` writing ``report.json``; the route comes from the environment."""
    return pytester.runpytest(
        f"--consistency-record={mode}", "--consistency-report=report.json", "-p", "no:randomly", *args
    )


def report_calls(pytester: Any) -> list[dict[str, Any]]:
    """Every call record of the last session's report, in task and repetition order."""
    return [c for t in load_report(pytester)["tasks"] for r in t["repetitions"] for c in r["calls"]]


#: A task that calls both pinned routes (the loopback OpenAI and Anthropic servers), once each per repetition.
BOTH_ROUTES_TASK = """
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, pinned_anthropic_client, consistency):
    a = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    b = pinned_anthropic_client.messages.create(
        model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    consistency.record([a.choices[0].message.content, b.content[0].text])
"""


def anthropic_suite(body: str) -> str:
    """A test module whose ``MODEL`` is the loopback Messages API's model."""
    from fake_anthropic import MODEL

    return f"MODEL = {MODEL!r}\n" + body


#: A multi-step ReAct-style agent task on the loopback server: each step one chat completion whose reply names its
#: action (``Action: tool[argument]``), a tool result sent back as the next user turn, until ``answer[...]``.
#: ``REACT_SYSTEM`` in the environment replaces the system prompt (one byte of it changes every request).
REACT_SUITE = """
import os
import re

import pytest

def react(client):
    messages = [
        {"role": "system", "content": os.environ.get("REACT_SYSTEM", "Use tools. Reply: Action: tool[argument]")},
        {"role": "user", "content": "Question: who sent the invoice?"},
    ]
    actions = []
    for _ in range(4):
        reply = client.chat.completions.create(model="fake-model", messages=messages, temperature=0.9, max_tokens=16)
        text = reply.choices[0].message.content
        messages.append({"role": "assistant", "content": text})
        found = re.search(r"Action: (\\w+)\\[([^\\]]*)\\]", text)
        if found is None:
            messages.append({"role": "user", "content": "Observation: reply with Action: tool[argument]"})
            continue
        tool, argument = found.groups()
        actions.append(tool)
        if tool == "answer":
            return actions, argument
        messages.append({"role": "user", "content": f"Observation: {tool} found: from Alice: Invoice 1042"})
    return actions, None

@pytest.mark.repeat_consistency(n=3, min_pass=0)
def test_react(pinned_client, consistency):
    actions, answer = react(pinned_client)
    consistency.record(answer)
    assert answer == "Alice", actions
"""


#: An agent that calls the pinned Anthropic client and its own client on $AGENT_ANTHROPIC_KEY (the route tests of
#: drift and of the doctor share it).
OWN_AND_PINNED_TASK = """
import os

import anthropic
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_anthropic_client, consistency):
    ask = dict(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    a = pinned_anthropic_client.messages.create(**ask)
    own = anthropic.Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], api_key=os.environ["AGENT_ANTHROPIC_KEY"])
    b = own.messages.create(**ask)
    consistency.record([a.content[0].text, b.content[0].text])
"""


#: Tasks whose answers are odd (the gating tests of merge and of the report's round trip share it).
ODD_SUITE = """
import pytest

TASKS = {
    "br[a]ck": "PPSPP",
    "two words": "PXPXP",
    "ünïcødé ✓": "FPPFP",
    "plain": "PPPPP",
}
ANSWERS = {
    "br[a]ck": [{"k": [1, {"x": "ü"}]}, {"k": [1, {"x": "ü"}]}, None, {"k": [1, {"x": "ü"}]}, {"k": [2]}],
    "two words": ["  a  b ", "a b", "ä", "a b", "a\\tb"],
    "ünïcødé ✓": [1e308, -0.0, 2**70, "", None],
}

@pytest.mark.parametrize("task", list(TASKS))
@pytest.mark.repeat_consistency(n=5, min_pass=0.6)
def test_task(task, consistency):
    mark = TASKS[task][consistency.repeat - 1]
    if task in ANSWERS:
        consistency.record(ANSWERS[task][consistency.repeat - 1])
    if mark == "S":
        pytest.skip("not this time")
    if mark == "X":
        pytest.xfail("known")
    assert mark == "P"
"""


#: A conftest that retries a failed call phase as pytest-retry does: from its own ``tryfirst`` makereport wrapper, it
#: logs the failed attempt under an outcome of its own (``{outcome}``), then runs the test again in the same report.
RETRY_PLUGIN = """
import pytest

@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or not report.failed or getattr(item, "_retried", False):
        return
    item._retried = True
    hook = item.ihook
    hook.pytest_runtest_teardown(item=item, nextitem=None)
    report.outcome = "{outcome}"
    hook.pytest_runtest_logreport(report=report)
    item._initrequest()
    hook.pytest_runtest_setup(item=item)
    again = pytest.CallInfo.from_call(lambda: hook.pytest_runtest_call(item=item), when="call")
    retry = pytest.TestReport.from_item_and_call(item, again)
    report.outcome, report.longrepr = retry.outcome, retry.longrepr
"""
