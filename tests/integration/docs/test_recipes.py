"""The framework recipes of docs/recipes.md, run as they are written, against the loopback fakes.

Each ``file=`` block of the page is a test file; it runs as a real pytest session (a subprocess: the frameworks
keep process-wide caches, which is what some recipes are about), records cassettes from the loopback servers and
replays them, with ``--route-drift-max=0``. The page's own commands are the first sessions: its console blocks
carry ``by=`` this file, so the docs runner leaves them to it, and they run here as the page shows them (through
tests/docs/run.py, their exit status and shown lines checked), each also writing the report the checks read.
Every repetition must pass and no task may drift, and the replay must give each repetition the answer and the calls
its recording had (the newer recipes replay under ``-n 2`` too). Then
each recipe runs without its setting ("if you forget"), and the drift or failure the page promises must show up: a
recipe whose setting changed nothing would fail here. The instructor and LlamaIndex recipes need openai 2.x, which the
other frameworks do not install beside: their sessions run with the interpreter of ``.venv-openai2`` (the README's
test command makes it), against the same loopback servers, so they also show the plugin on openai 2.x (httpx).
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import os
import re
import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from docs.blocks import Block, console_commands
from docs.run import claimed, command_env, exported, run_each
from fake_anthropic import GOOD_KEY as ANTHROPIC_KEY
from fake_anthropic import MODEL as CLAUDE_MODEL
from fake_anthropic import FakeAnthropic
from fake_openai import GOOD_KEY, FakeOpenAI, Step
from loopback import LoopbackServer, QuietHandler
from suites import ROOT, load_report

PAGE = ROOT / "docs" / "recipes.md"
#: The page's console blocks, each the commands of one recipe as a reader runs them: run here, not by the docs runner.
PAGE_BLOCKS = claimed("docs/recipes.md", "tests/integration/docs/test_recipes.py")
#: What a page command's sessions add to the page's options, for the checks: the report they read, a fixed order.
PAGE_ADDOPTS = ("--consistency-report=report.json", "-p no:randomly")
#: A recipe's file; a ``skip="why"`` after its name keeps the docs runner from running it (``Recipe.requires``).
FILE_BLOCK = re.compile(r"<!-- docs: file=(\S+)(?: [^\n]*?)? -->\n```python\n(.*?)```", re.S)
LANGSMITH_KEY = "lsv2-test-langsmith-key-0123456789"
#: Importing litellm fetches its model price map from GitHub unless told to use the copy it ships.
LITELLM_OFFLINE = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}

#: A conftest for the Agents SDK's sessions, not part of the recipe: its trace exporter would post to
#: api.openai.com; here it posts to the loopback server, every 50 ms, as it does every few seconds in a long suite.
AGENTS_TRACES_TO_LOOPBACK = """
import os
from agents import set_trace_processors
from agents.tracing.processors import BackendSpanExporter, BatchTraceProcessor

exporter = BackendSpanExporter(endpoint=os.environ["RECIPE_TRACES_URL"], max_retries=1, base_delay=0.05)
set_trace_processors([BatchTraceProcessor(exporter, schedule_delay=0.05)])
"""

#: A conftest for Haystack's sessions, not part of the recipe: haystack's telemetry would post to eu.posthog.com from
#: a background thread; here it posts to a loopback server, and at once (posthog's sync mode), in the run that sends
#: it, as a background flush does whenever it falls inside a repetition.
HAYSTACK_TELEMETRY_TO_LOOPBACK = """
import os

import haystack.telemetry._telemetry  # noqa: F401  (with telemetry on, importing it points posthog at eu.posthog.com)
import posthog

posthog.host = os.environ["RECIPE_POSTHOG_URL"]
posthog.sync_mode = True
"""

#: What the loopback model answers for instructor's response model (a tool call, instructor's default mode).
INVOICE_TOOL_CALL = Step(tool_calls=(("Invoice", '{"number": 4121, "paid": true}'),))

#: A repetition's own work besides its model calls (which replay instantly), so that a replayed session lasts long
#: enough for a background exporter to wake up inside it.
AGENT_WORK_BETWEEN_CALLS = """
import time
import pytest

@pytest.fixture(autouse=True)
def _agent_work_between_calls():
    time.sleep(0.15)
"""


def recipes() -> dict[str, str]:
    """The page's ``file=`` blocks: file name -> source, as the page shows them."""
    found = dict(FILE_BLOCK.findall(PAGE.read_text(encoding="utf-8")))
    assert found, f"no <!-- docs: file=... --> python blocks in {PAGE}"
    return found


@dataclass
class Recipe:
    tasks: int
    env: dict[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    #: Tasks whose framework builds its own client on the route: observed, ``pinned: false``.
    unpinned: tuple[str, ...] = ()
    #: Loopback paths a tracer must have posted to, so the setting that silences its drift was really needed.
    traced: str | None = None
    #: What the loopback model answers while recording, and the answer every repetition must then record.
    reply: str | None = None
    answer: object = None
    #: A scripted answer other than text (a tool call), for every call while recording.
    step: Step | None = None
    #: Replayed under ``-n 2`` too, and compared with the recording there as well.
    xdist: bool = False
    #: A conftest for the sessions (not part of the recipe), and whether HOME is the test's directory.
    conftest: str | None = None
    home: bool = False


def langsmith_env(fake: FakeOpenAI) -> dict[str, str]:
    endpoint = fake.base_url.removesuffix("/v1") + "/langsmith"
    return {"LANGSMITH_TRACING": "true", "LANGSMITH_ENDPOINT": endpoint, "LANGSMITH_API_KEY": LANGSMITH_KEY}


def langsmith_ignore(fake: FakeOpenAI) -> str:
    return f"--consistency-ignore-url=^{langsmith_env(fake)['LANGSMITH_ENDPOINT']}/"


def cases(fake: FakeOpenAI) -> dict[str, Recipe]:
    return {
        "test_openai_sdk.py": Recipe(tasks=2),
        "test_anthropic_sdk.py": Recipe(tasks=2),
        "test_openai_agents.py": Recipe(tasks=3, env={"OPENAI_AGENTS_DISABLE_TRACING": "1"}),
        "test_langchain.py": Recipe(
            tasks=4, unpinned=("test_chat_openai_own_http_client", "test_chat_anthropic_session_loop")
        ),
        "test_langgraph.py": Recipe(tasks=2, unpinned=("test_graph_anthropic",)),
        "test_litellm.py": Recipe(
            tasks=2,
            env={**LITELLM_OFFLINE, "DISABLE_AIOHTTP_TRANSPORT": "True"},
            unpinned=("test_completion", "test_acompletion"),
        ),
        "test_litellm_module.py": Recipe(
            tasks=1, env={**LITELLM_OFFLINE, "DISABLE_AIOHTTP_TRANSPORT": "True"}, unpinned=("test_module_wide",)
        ),
        "test_pydantic_ai.py": Recipe(tasks=2),
        "test_smolagents.py": Recipe(
            tasks=1, reply='Thought: it is paid.\n<code>\nfinal_answer("paid")\n</code>', answer="paid"
        ),
        "test_langsmith.py": Recipe(
            tasks=1, env=langsmith_env(fake), args=(langsmith_ignore(fake),), traced="/langsmith/runs/multipart"
        ),
        "test_instructor.py": Recipe(
            tasks=2,
            step=INVOICE_TOOL_CALL,
            answer={"number": 4121, "paid": True},
            xdist=True,
        ),
        "test_llama_index.py": Recipe(tasks=2, xdist=True),
        "test_haystack.py": Recipe(
            tasks=2,
            env={"HAYSTACK_TELEMETRY_ENABLED": "False"},
            xdist=True,
            conftest=HAYSTACK_TELEMETRY_TO_LOOPBACK,
            home=True,
        ),
        "test_autogen.py": Recipe(tasks=2, xdist=True),
    }


#: The venv of the recipes whose frameworks need openai 2.x (instructor, LlamaIndex): no release of them installs
#: beside the recipes extra (docs/recipes.md says why). The README's test command makes it with this command, as
#: .ci/run does; where it is missing these recipes skip, naming it (in CI, where it must exist, they fail).
OPENAI2_VENV = ROOT / ".venv-openai2"
OPENAI2_INSTALL = "python3 -m venv .venv-openai2 && .venv-openai2/bin/pip install -e '.[recipes-openai2]'"
#: The recipes whose framework needs openai 2.x: their sessions run in ``.venv-openai2``.
OPENAI2_RECIPES = ("test_instructor.py", "test_llama_index.py")
#: The tier of the tests that need it (tests/support/tiers.py): without it they skip, naming the README's command.
NEEDS_OPENAI2 = pytest.mark.extra_venv(".venv-openai2")


def openai2_python() -> str:
    """The interpreter of ``.venv-openai2``, or a skip (a failure in CI) that says which command creates it."""
    python = OPENAI2_VENV / "bin" / "python"
    if not python.is_file():
        message = (
            f"{OPENAI2_VENV} does not exist (instructor and LlamaIndex with openai 2.x, which do not install beside "
            f"the recipes extra); create it from the repository's root with: {OPENAI2_INSTALL}"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return str(python)


#: Every working recipe; ``test_langchain_forgot.py`` is the page's example of the mistake.
WORKING = [
    "test_openai_sdk.py",
    "test_anthropic_sdk.py",
    "test_openai_agents.py",
    "test_langchain.py",
    "test_langgraph.py",
    "test_litellm.py",
    "test_litellm_module.py",
    "test_pydantic_ai.py",
    "test_smolagents.py",
    "test_langsmith.py",
    "test_instructor.py",
    "test_llama_index.py",
    "test_haystack.py",
    "test_autogen.py",
]


@pytest.fixture
def both(fake: FakeOpenAI, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    """Both loopback routes, and none of the variables the recipes set: each test sets its own."""
    for name in ("OPENAI_AGENTS_DISABLE_TRACING", "DISABLE_AIOHTTP_TRANSPORT", "LANGSMITH_TRACING"):
        monkeypatch.delenv(name, raising=False)
    for name in ("LANGSMITH_ENDPOINT", "LANGSMITH_API_KEY", "LANGCHAIN_TRACING_V2", "LANGCHAIN_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("HAYSTACK_TELEMETRY_ENABLED", raising=False)
    monkeypatch.setenv("RECIPE_TRACES_URL", fake.base_url + "/traces/ingest")
    return fake


class PostHogSink(LoopbackServer):
    """Where haystack's telemetry posts in these tests (``posthog.host``): every event is accepted and kept."""

    def __init__(self) -> None:
        self.steps: deque[Any] = deque()
        self.lock = threading.Lock()
        self.events: list[str] = []
        sink = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                sink.events.append(f"{self.path} {body.decode(errors='replace')}")
                data = b'{"status": 1}'
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.serve(Handler, 0)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def posthog_sink(monkeypatch: pytest.MonkeyPatch) -> Iterator[PostHogSink]:
    sink = PostHogSink().start()
    monkeypatch.setenv("RECIPE_POSTHOG_URL", sink.url)
    yield sink
    sink.stop()


def session(
    pytester: pytest.Pytester, fake: FakeOpenAI, mode: str, *args: str, python: str | None = None
) -> pytest.RunResult:
    """The recipe's pytest session on the loopback routes, in cassette mode ``mode``, writing report.json; with
    ``python``, run by that interpreter (another venv's) as ``runpytest_subprocess`` runs it with this one's."""
    options = (
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        f"--consistency-anthropic-model={CLAUDE_MODEL}",
        f"--consistency-record={mode}",
        "--consistency-report=report.json",
        "-p",
        "no:randomly",
        *args,
    )
    if python is None:
        return pytester.runpytest_subprocess(*options, timeout=300)
    basetemp = tempfile.mkdtemp(prefix="runpytest-", dir=pytester.path)
    return pytester.run(python, "-mpytest", f"--basetemp={basetemp}", *options, timeout=300)


def write(pytester: pytest.Pytester, name: str, source: str | None = None) -> None:
    pytester.makepyfile(**{name.removesuffix(".py"): source if source is not None else recipes()[name]})
    if name == "test_openai_agents.py":
        pytester.makeconftest(AGENTS_TRACES_TO_LOOPBACK)
    if name == "test_haystack.py":
        pytester.makeconftest(HAYSTACK_TELEMETRY_TO_LOOPBACK)


#: What a replay changes in a call record by design: how long it took, that it was replayed, and the recording's
#: route key (``route_key``, set on replayed calls only: drift compares with it); the start a replay reports is the
#: recording's, to the microsecond the cassette keeps.
REPLAY_CHANGES = ("latency_ms", "wait_ms", "replayed", "route_key", "started_at")


def transcript(pytester: pytest.Pytester) -> dict[str, list[tuple[object, list[dict[str, object]]]]]:
    """Per task, each repetition's answer and calls, as the report has them, but for what a replay changes."""
    found = {}
    for name, task in tasks_of(pytester).items():
        repetitions = sorted(cast(list[dict[str, Any]], task["repetitions"]), key=lambda r: int(r["repeat"]))
        found[name] = [
            (r["answer"], [{k: v for k, v in c.items() if k not in REPLAY_CHANGES} for c in r["calls"]])
            for r in repetitions
        ]
    return found


def differences(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[tuple[object, ...]]:
    """Where a replay's transcript departs from the recording's: (task, repetition, what, recorded, replayed)."""
    found: list[tuple[object, ...]] = []
    for task in sorted(set(recorded) | set(replayed)):
        before, after = recorded.get(task, []), replayed.get(task, [])
        if len(before) != len(after):
            found.append((task, None, "repetitions", len(before), len(after)))
        for repeat, ((answer, calls), (answer_again, calls_again)) in enumerate(zip(before, after, strict=False), 1):
            if answer != answer_again:
                found.append((task, repeat, "answer", answer, answer_again))
            if len(calls) != len(calls_again):
                found.append((task, repeat, "calls", len(calls), len(calls_again)))
            for call, call_again in zip(calls, calls_again, strict=False):
                for key in sorted(set(call) | set(call_again)):
                    if call.get(key) != call_again.get(key):
                        found.append((task, repeat, key, call.get(key), call_again.get(key)))
    return found


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def tasks_of(pytester: pytest.Pytester) -> dict[str, dict[str, object]]:
    return {t["task_id"].split("::")[-1]: t for t in load_report(pytester)["tasks"]}


def block_keys(block: Block) -> tuple[str, ...]:
    """The keys a page's block sets itself (``env="..._API_KEY=..."``)."""
    pairs = (pair.partition("=") for pair in block.options.get("env", "").split())
    return tuple(value for name, _, value in pairs if name.endswith("_KEY"))


def assert_no_secret(pytester: pytest.Pytester, output: str, *keys: str) -> None:
    """No key of the session (the routes', LangSmith's, ``keys``) in its output, its report or its cassettes."""
    texts = [output, (pytester.path / "report.json").read_text()]
    texts += [p.read_text() for p in Path(pytester.path, "cassettes").rglob("*.yaml")]
    for text in texts:
        for secret in (GOOD_KEY, ANTHROPIC_KEY, LANGSMITH_KEY, *keys):
            assert secret not in text and secret[8:24] not in text


#: The import each recipe needs, and the distribution of the ``recipes`` extra that provides it.
FRAMEWORKS = {
    "agents": "openai-agents",
    "langchain_openai": "langchain-openai",
    "langchain_anthropic": "langchain-anthropic",
    "langgraph": "langgraph",
    "litellm": "litellm",
    "pydantic_ai": "pydantic-ai-slim[openai,anthropic]",
    "smolagents": "smolagents",
    "langsmith": "langsmith",
    "haystack": "haystack-ai",
    "autogen_ext.models.openai": "autogen-ext[openai]",
    "autogen_agentchat": "autogen-agentchat",
}


def test_the_frameworks_of_the_recipes_are_installed() -> None:
    """Said once, by name, rather than as an ImportError inside every recipe's session."""
    missing = [dist for module, dist in FRAMEWORKS.items() if not installed(module)]
    assert not missing, f"not installed: {', '.join(missing)}; install the test extra: pip install -e '.[test]'"


#: What ``.venv-openai2`` must hold for its recipes, as its interpreter finds it: module -> distribution.
OPENAI2_FRAMEWORKS = {
    "instructor": "instructor",
    "llama_index.core": "llama-index-core",
    "llama_index.llms.openai": "llama-index-llms-openai",
    "llama_index.llms.openai_like": "llama-index-llms-openai-like",
    "pytest_asyncio": "pytest-asyncio",
    "xdist": "pytest-xdist",
}

#: Run by ``.venv-openai2``'s interpreter (outside the checkout, which would otherwise be first on its path).
OPENAI2_PROBE = """
import importlib.util, json, sys
import openai, pytest_consistency
found = {m: importlib.util.find_spec(m) is not None for m in json.loads(sys.argv[1])}
print(json.dumps({"openai": openai.__version__, "plugin": pytest_consistency.__file__, "found": found}))
"""


@NEEDS_OPENAI2
def test_the_openai2_venv_holds_openai_2_and_the_plugin_of_this_checkout(tmp_path: Path) -> None:
    """Its recipes test this working tree's plugin on openai 2.x: not an installed copy, not openai 3."""
    python = openai2_python()
    command = [python, "-c", OPENAI2_PROBE, json.dumps(sorted(OPENAI2_FRAMEWORKS))]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    probe = json.loads(result.stdout)
    assert probe["openai"].startswith("2."), f"{probe['openai']}: recreate it with {OPENAI2_INSTALL}"
    assert Path(probe["plugin"]).parent == ROOT / "pytest_consistency", f"{probe['plugin']}: install it with -e"
    missing = [OPENAI2_FRAMEWORKS[m] for m, found in probe["found"].items() if not found]
    assert not missing, f"not in {OPENAI2_VENV}: {', '.join(missing)}; recreate it with {OPENAI2_INSTALL}"


def test_the_page_holds_every_recipe() -> None:
    assert sorted(recipes()) == sorted([*WORKING, "test_langchain_forgot.py"])


def page_block(name: str) -> Block | None:
    """The page's console block whose commands run the recipe ``name``; None where the page shows no command for
    it (instructor's, whose file is skipped by the docs runner, and the module-wide LiteLLM recipe's)."""
    found = [b for b in PAGE_BLOCKS if any(name in c.line.split() for c in console_commands(b.source))]
    assert len(found) <= 1, [b.id for b in found]
    return found[0] if found else None


def test_every_command_of_the_page_is_run_here() -> None:
    """The blocks the page leaves to this file (``by=``) are each the commands of one recipe this file runs."""
    run_here = [page_block(name) for name in [*WORKING, "test_langchain_forgot.py"]]
    assert sorted(b.id for b in run_here if b is not None) == sorted(b.id for b in PAGE_BLOCKS)
    assert len(PAGE_BLOCKS) == 13


def run_page_block(
    pytester: pytest.Pytester, block: Block, fake: FakeOpenAI, claude: FakeAnthropic
) -> Iterator[tuple[str, str]]:
    """The block's commands as the page shows them (its files, its environment, its exit statuses and shown lines),
    each also writing report.json: after each, its cassette mode (``--consistency-record``) and its output."""
    env = command_env(block, exported(block, fake, claude), *PAGE_ADDOPTS)
    for command, result in run_each(block, pytester.path, env):
        modes = [w.partition("=")[2] for w in command.line.split() if w.startswith("--consistency-record=")]
        yield (modes[-1] if modes else "none"), result.stdout + result.stderr


@pytest.mark.parametrize("name", [pytest.param(n, marks=NEEDS_OPENAI2) if n in OPENAI2_RECIPES else n for n in WORKING])
def test_recipe_records_and_replays_every_repetition_without_drift(
    pytester: pytest.Pytester,
    both: FakeOpenAI,
    claude: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    name: str,
) -> None:
    """The page's commands first (the recording, and the replay where it shows one), then the replays it does not
    show: serially, and under ``-n 2`` for the newer recipes."""
    recipe = cases(both)[name]
    python = openai2_python() if name in OPENAI2_RECIPES else None
    block = page_block(name)
    if recipe.home:
        monkeypatch.setenv("HOME", str(pytester.path))
    sink = request.getfixturevalue("posthog_sink") if recipe.conftest == HAYSTACK_TELEMETRY_TO_LOOPBACK else None
    write(pytester, name)
    if recipe.reply is not None:
        both.script(*[Step(text=recipe.reply)] * 20)
    if recipe.step is not None:
        both.script(*[recipe.step] * 20)
    recorded: dict[str, Any] | None = None

    def check(mode: str, workers: tuple[str, ...], output: str) -> None:
        nonlocal recorded
        cassettes = sorted(p.name for p in (pytester.path / "cassettes").rglob("*.yaml"))
        assert cassettes == sorted(["rep-1.yaml", "rep-2.yaml", "rep-3.yaml"] * recipe.tasks), (mode, output)
        tasks = tasks_of(pytester)
        assert len(tasks) == recipe.tasks, (mode, sorted(tasks))
        for task_name, task in tasks.items():
            repetitions = task["repetitions"]
            assert isinstance(repetitions, list)
            assert [r["outcome"] for r in repetitions] == ["passed"] * 3, (mode, task_name)
            assert task["drift"] == {**task["drift"], "kinds": []}, (mode, task_name, task["drift"])  # type: ignore[dict-item]
            calls = [c for r in repetitions for c in r["calls"]]
            assert all(r["calls"] for r in repetitions), (mode, task_name)  # every repetition's call was observed
            assert {c["pinned"] for c in calls} == {task_name not in recipe.unpinned}, (mode, task_name)
            assert {c["replayed"] for c in calls} == {mode == "none"}, (mode, task_name)
            if recipe.answer is not None:
                assert [r["answer"] for r in repetitions] == [recipe.answer] * 3, (mode, task_name)
        assert_no_secret(pytester, output, *(block_keys(block) if block else ()))
        # The replay gives every repetition the answer and the calls (URL, model, status, tokens, ...) it recorded.
        if recorded is None:
            recorded = transcript(pytester)
        else:
            replayed = transcript(pytester)
            assert replayed == recorded, (mode, workers, differences(recorded, replayed))

    shown = []  # the page's commands, each checked before the next one runs (they share report.json)
    for mode, output in run_page_block(pytester, block, both, claude) if block is not None else ():
        check(mode, (), output)
        shown.append(mode)
    # The sessions the page does not show, with the variables its commands set (the test sets them from here on).
    for variable, value in recipe.env.items():
        monkeypatch.setenv(variable, value)
    runs = [] if block is not None else [("once", ())]
    runs += [] if "none" in shown else [("none", ())]
    runs += [("none", ("-n", "2"))] if recipe.xdist else []
    for mode, workers in runs:
        # the recipe's file alone: the page's block may have written the next recipe's file beside it
        result = session(pytester, both, mode, name, "--route-drift-max=0", *recipe.args, *workers, python=python)
        assert result.ret == 0, (mode, result.stdout.str()[-3000:], result.stderr.str()[-3000:])
        result.stdout.fnmatch_lines(["gate --route-drift-max: route drift 0.0 pp <= 0.0 pp  ok"])
        check(mode, workers, result.stdout.str() + result.stderr.str())
    if sink is not None:  # the setting kept haystack's telemetry off: nothing posted, no user id written
        assert sink.events == [] and not (pytester.path / ".haystack").exists()
    if recipe.traced:
        assert any(r["path"] == recipe.traced for r in both.requests), "the tracer never posted: nothing was ignored"


def test_agents_tracing_forgotten_is_drift_when_recording_and_a_mismatch_when_replaying(
    pytester: pytest.Pytester, both: FakeOpenAI
) -> None:
    """Without OPENAI_AGENTS_DISABLE_TRACING the exporter posts into whichever repetition runs; the model calls
    take a while, as real ones do, so the exporter's thread posts the previous repetition's trace meanwhile.

    On replay the calls are instant: nine repetitions can end inside one of the exporter's 0.2-s sleeps, and then
    its post leaves after the session, unseen (CI saw that once). So each repetition here takes 0.15 s of the
    agent's own work, as a real agent's does, and the session outlasts several wake-ups. Where the post lands is
    still a race: in the test's own thread (its repetition fails, the failure naming the mismatch) or in the
    exporter's (the test passes; the call record has the mismatch and the drift line says so). Either way the post
    is a replay mismatch that fails the run."""
    write(pytester, "test_openai_agents.py")
    pytester.makeconftest(AGENTS_TRACES_TO_LOOPBACK + AGENT_WORK_BETWEEN_CALLS)
    both.script(*[Step(delay=0.4)] * 9)
    recorded = session(pytester, both, "once", "--route-drift-max=0")
    assert recorded.ret == 1, recorded.stdout.str()
    assert any(r["path"] == "/v1/traces/ingest" for r in both.requests)
    drifted = [t for t in tasks_of(pytester).values() if "base_url" in t["drift"]["kinds"]]  # type: ignore[index]
    assert drifted, recorded.stdout.str()
    recorded.stdout.fnmatch_lines(["*ingest base URL: */v1/traces/ingest, not the pinned */v1"])
    replayed = session(pytester, both, "none", "--route-drift-max=0")
    assert replayed.ret == 1
    calls = [c for t in tasks_of(pytester).values() for r in t["repetitions"] for c in r["calls"]]  # type: ignore[attr-defined]
    mismatched = [c for c in calls if c["url"].endswith("/v1/traces/ingest") and c["error"] == "replay_mismatch"]
    assert mismatched, replayed.stdout.str()
    text = replayed.stdout.str()
    assert fnmatch.fnmatch(
        text, "*replay mismatch (no recorded response): POST */v1/traces/ingest*"
    ) or fnmatch.fnmatch(text, "*ingest base URL: */v1/traces/ingest, not the pinned */v1*replay_mismatch x*"), text


def test_agents_traces_ignored_by_url_are_neither_recorded_nor_drift(
    pytester: pytest.Pytester, both: FakeOpenAI
) -> None:
    write(pytester, "test_openai_agents.py")
    both.script(*[Step(delay=0.4)] * 9)
    ignore = "--consistency-ignore-url=/traces/ingest"
    recorded = session(pytester, both, "once", "--route-drift-max=0", ignore)
    assert recorded.ret == 0, recorded.stdout.str()
    assert any(r["path"] == "/v1/traces/ingest" for r in both.requests), "no trace was posted: nothing to ignore"
    cassettes = "\n".join(p.read_text() for p in (pytester.path / "cassettes").rglob("*.yaml"))
    assert "/v1/responses" in cassettes and "traces" not in cassettes
    replayed = session(pytester, both, "none", "--route-drift-max=0", ignore)
    assert replayed.ret == 0, replayed.stdout.str()


def test_langchain_chat_model_per_repetition_fails_on_the_second(
    pytester: pytest.Pytester, both: FakeOpenAI, claude: FakeAnthropic
) -> None:
    """The page's command for its example of the mistake: exit status 1 and the closed loop it shows; the report
    says where: the first repetition passes, the second fails."""
    block = page_block("test_langchain_forgot.py")
    assert block is not None
    ((mode, output),) = run_page_block(pytester, block, both, claude)
    assert mode == "off", mode
    outcomes = [r["outcome"] for r in tasks_of(pytester)["test_chat_openai_per_repetition"]["repetitions"]]  # type: ignore[index]
    assert outcomes[:2] == ["passed", "failed"], outcomes
    assert "FAILED test_langchain_forgot.py::test_chat_openai_per_repetition[rep2]" in output, output[-3000:]


def test_chat_anthropic_without_the_session_loop_meets_a_closed_loop(
    pytester: pytest.Pytester, both: FakeOpenAI
) -> None:
    source = recipes()["test_langchain.py"]
    assert '@pytest.mark.asyncio(loop_scope="session")' in source
    write(
        pytester,
        "test_langchain.py",
        source.replace('@pytest.mark.asyncio(loop_scope="session")', "@pytest.mark.asyncio"),
    )
    result = session(pytester, both, "once", "--route-drift-max=0", "-k", "anthropic")
    assert result.ret == 1, result.stdout.str()
    task = tasks_of(pytester)["test_chat_anthropic_session_loop"]
    assert task["drift"]["kinds"] == ["errors"], task["drift"]  # type: ignore[index]
    second = task["repetitions"][1]["calls"]  # type: ignore[index]
    assert [(c["error"], c["retry_index"]) for c in second][:2] == [("connection", 0), (None, 1)], second


def test_litellm_async_without_the_httpx_transport_is_unobserved(
    pytester: pytest.Pytester, both: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    write(pytester, "test_litellm.py")
    for mode in ("once", "none"):
        result = session(pytester, both, mode, "--route-drift-max=0")
        assert result.ret == 1, (mode, result.stdout.str())
        tasks = tasks_of(pytester)
        assert tasks["test_acompletion"]["drift"]["kinds"] == ["unobserved"]  # type: ignore[index]
        assert tasks["test_acompletion"]["drift"]["unobserved"] == 3  # type: ignore[index]
        assert tasks["test_completion"]["drift"]["kinds"] == []  # type: ignore[index]
        result.stdout.fnmatch_lines(["*3 HTTP exchange(s) in the cassettes were made by a client the plugin does not*"])


def test_langsmith_tracing_without_ignoring_its_endpoint_is_unobserved(
    pytester: pytest.Pytester, both: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable, value in langsmith_env(both).items():
        monkeypatch.setenv(variable, value)
    write(pytester, "test_langsmith.py")
    result = session(pytester, both, "once", "--route-drift-max=0")
    assert result.ret == 1, result.stdout.str()
    assert tasks_of(pytester)["test_traced_chain"]["drift"]["kinds"] == ["unobserved"]  # type: ignore[index]
    assert_no_secret(pytester, result.stdout.str() + result.stderr.str())


def test_haystack_telemetry_forgotten_posts_each_pipeline_run_into_its_repetition(
    pytester: pytest.Pytester, both: FakeOpenAI, posthog_sink: PostHogSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without HAYSTACK_TELEMETRY_ENABLED=False each Pipeline run posts an event with requests (here to the
    loopback sink, at once): recording, it lands in the repetition's cassette and is ``unobserved`` drift; replaying,
    the network block refuses it and haystack drops the error. A generator run outside a pipeline sends nothing."""
    monkeypatch.setenv("HOME", str(pytester.path))
    write(pytester, "test_haystack.py")
    recorded = session(pytester, both, "once", "--route-drift-max=0")
    assert recorded.ret == 1, recorded.stdout.str()[-3000:]
    tasks = tasks_of(pytester)
    assert tasks["test_pipeline"]["drift"]["kinds"] == ["unobserved"], tasks["test_pipeline"]["drift"]  # type: ignore[index]
    assert tasks["test_generator_async"]["drift"]["kinds"] == []  # type: ignore[index]
    recorded.stdout.fnmatch_lines(["*3 HTTP exchange(s) in the cassettes were made by a client the plugin does not*"])
    assert len(posthog_sink.events) == 3 and all(e.startswith("/batch/ ") for e in posthog_sink.events)
    assert all('"Pipeline run' in e for e in posthog_sink.events), posthog_sink.events[0][:500]
    pipeline_cassettes = sorted((pytester.path / "cassettes").rglob("test_pipeline/rep-*.yaml"))
    assert len(pipeline_cassettes) == 3 and all("/batch/" in p.read_text() for p in pipeline_cassettes)
    assert (pytester.path / ".haystack" / "config.yaml").is_file()  # the anonymous user id, written at import
    replayed = session(pytester, both, "none", "--route-drift-max=0")
    assert replayed.ret == 0, replayed.stdout.str()[-3000:]
    assert len(posthog_sink.events) == 3  # refused by the network block, not sent
    assert_no_secret(pytester, replayed.stdout.str() + replayed.stderr.str())


def test_autogen_without_model_info_refuses_a_model_name_that_is_not_openais(
    pytester: pytest.Pytester, both: FakeOpenAI
) -> None:
    source = recipes()["test_autogen.py"]
    assert source.count(", model_info=MODEL_INFO") == 1
    write(pytester, "test_autogen.py", source.replace(", model_info=MODEL_INFO", ""))
    result = session(pytester, both, "off")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["E * ValueError: model_info is required when model name is not a valid OpenAI model"])
    assert both.requests == []


@pytest.mark.parametrize(
    ("model", "outcome"),
    [("fake-model", "ValueError: Unknown model 'fake-model'"), ("gpt-4o-mini", "model_requested")],
    ids=["unknown-name", "known-name"],
)
@NEEDS_OPENAI2
def test_llama_index_openai_class_rejects_an_unknown_name_and_a_known_one_is_drift(
    pytester: pytest.Pytester, both: FakeOpenAI, model: str, outcome: str
) -> None:
    """``llama_index.llms.openai.OpenAI`` instead of ``OpenAILike``: the route's model is refused by name, and a
    name it knows is sent as it is, another model than the route's."""
    python = openai2_python()
    source = recipes()["test_llama_index.py"]
    pinned = "OpenAILike(\n        model=model, is_chat_model=True, context_window=8192, "
    assert source.count(pinned) == 1
    source = source.replace(pinned, f"OpenAI(\n        model={model!r}, ").replace(
        "from llama_index.llms.openai_like import OpenAILike", "from llama_index.llms.openai import OpenAI"
    )
    write(pytester, "test_llama_index.py", source)
    result = session(pytester, both, "once", "--route-drift-max=0", python=python)
    assert result.ret == 1, result.stdout.str()[-3000:]
    if outcome.startswith("ValueError"):
        result.stdout.fnmatch_lines([f"E * {outcome}. Please provide a valid OpenAI model name in:*"])
        assert both.requests == []
    else:
        kinds = {name: task["drift"]["kinds"] for name, task in tasks_of(pytester).items()}  # type: ignore[index]
        assert kinds == {"test_chat": [outcome], "test_achat": [outcome]}, kinds
        assert {r["body"]["model"] for r in both.requests} == {model}


def test_a_replay_that_differs_from_its_recording_is_named_by_the_comparison(
    pytester: pytest.Pytester, both: FakeOpenAI
) -> None:
    """The comparison the recipes' test makes has teeth: a cassette whose answer was changed after recording (the
    replay then answers otherwise: the call's decision too) is named, task, repetition and field."""
    write(pytester, "test_autogen.py")
    assert session(pytester, both, "once").ret == 0
    recorded = transcript(pytester)
    cassette = pytester.path / "cassettes" / "test_autogen" / "test_model_client" / "rep-2.yaml"
    text = cassette.read_text()
    assert text.count('"content": "OK"') == 1
    cassette.write_text(text.replace('"content": "OK"', '"content": "NO"'))
    assert session(pytester, both, "none").ret == 0
    found = differences(recorded, transcript(pytester))
    assert found[0] == ("test_model_client", 2, "answer", "OK", "NO")
    assert [f[:3] for f in found] == [("test_model_client", 2, "answer"), ("test_model_client", 2, "decision")]
