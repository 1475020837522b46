"""Trust, round three: a secret learned late is a secret everywhere.

A credential the session first sees in its last repetition (a gateway header the agent adds only then) was already
in the text of the earlier ones: their cassettes, their failure text and ``-l`` locals, their captured output and
log, their warnings, JUnit's file, the report. Each test runs a real inner session (in a subprocess, serial and
with ``-n 2``) whose secret arrives last, then greps every file the session left and everything it printed.
"""

from __future__ import annotations

import base64
import importlib
import json
import re

import pytest
from cassette_text import cassette_strings
from fake_openai import FakeOpenAI, Step
from suites import run_recorded

#: Read by the agent from its environment; no credential shape, never a route key: the session knows it only once
#: a repetition sends it as ``x-gateway-token``.
TOKEN = "vault-gw-7d3f9a21c4b8"
XDIST = [pytest.param((), id="serial"), pytest.param(("-p", "xdist", "-n", "2"), id="xdist")]
OUTPUTS = ("--consistency-html=page.html", "--consistency-md=summary.md", "--junitxml=junit.xml")

#: Repetitions 1 and 2 hold the token in their prompt and answer, print, log, warn and record it (2 fails, with
#: locals); only repetition 3 sends it as a credential. Under ``-n 2`` xdist deals the three round robin, so 1 and 3
#: share a worker (1 ran before the worker learned it) and 2 runs on a worker that never learns it.
AGENT = """
import logging, os, sys, warnings, pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_client, consistency, record_property):
    token = os.environ["VAULT_TOKEN"]
    if consistency.repeat == 3:
        client = pinned_client.with_options(default_headers={"x-gateway-token": token})
        reply = client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
        consistency.record(reply.choices[0].message.content.split()[0])
        return
    reply = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "remember " + token}])
    answer = reply.choices[0].message.content
    consistency.record(answer)
    print("stdout:", answer)
    print("stderr:", answer, file=sys.stderr)
    logging.getLogger("agent").warning("log: %s", answer)
    warnings.warn("warned: " + answer)
    record_property("answer", answer)
    assert consistency.repeat == 1, "failed with " + answer
"""


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode().rstrip("=")


def left_behind(pytester: pytest.Pytester, result: pytest.RunResult) -> dict[str, str]:
    """Everything the session printed, and every file it left under its directory (the agent's source aside)."""
    texts = {"stdout": result.stdout.str(), "stderr": result.stderr.str()}
    for path in sorted(pytester.path.rglob("*")):
        if path.is_file() and path.name != "test_agent.py" and "__pycache__" not in path.parts:
            texts[str(path.relative_to(pytester.path))] = path.read_bytes().decode("utf-8", "replace")
    return texts


def leaks(texts: dict[str, str], *secrets: str) -> list[tuple[str, str]]:
    return [(name, secret) for name, text in texts.items() for secret in secrets if secret in text]


def workers_of(stdout: str) -> dict[str, str]:
    """``rep<i>`` -> the xdist worker that ran it, from ``-v`` progress lines."""
    return {m.group(2): m.group(1) for m in re.finditer(r"\[(gw\d+)\].*test_task\[(rep\d)\]", stdout)}


@pytest.mark.parametrize("xdist", XDIST)
@pytest.mark.parametrize("tb", [("-l", "--tb=long"), ("--tb=line",)], ids=["locals", "line"])
def test_a_secret_first_sent_by_the_last_repetition_is_in_no_output(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, xdist: tuple, tb: tuple
) -> None:
    monkeypatch.setenv("VAULT_TOKEN", TOKEN)
    fake.script(*[Step(text=f"widget {TOKEN}")] * 3)
    pytester.makepyfile(test_agent=AGENT)
    result = pytester.runpytest_subprocess(
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        "--consistency-record=once",
        "--consistency-report=report.json",
        *OUTPUTS,
        "-rA",
        "-v",
        *tb,
        *xdist,
    )
    out = result.stdout.str()
    assert result.ret == 1, out
    assert [r["headers"].get("x-gateway-token") for r in fake.requests].count(TOKEN) == 1  # sent once, by rep 3
    if xdist:
        ran = workers_of(out)
        assert ran["rep2"] != ran["rep3"], ran  # rep 2's worker never learns the token
    # What the session printed of repetitions 1 and 2, redacted (not merely missing).
    if "--tb=line" not in tb:
        assert "answer     = 'widget <redacted>'" in out  # -l
        assert "Captured log call" in out and "log: widget <redacted>" in out
    assert "stdout: widget <redacted>" in out  # -rA: the passing repetition 1's captured output
    assert "warned: widget <redacted>" in out
    texts = left_behind(pytester, result)
    for name in ("report.json", "page.html", "summary.md", "junit.xml"):
        assert name in texts, sorted(texts)
    cassettes = sorted((pytester.path / "cassettes").rglob("rep-*.yaml"))
    assert len(cassettes) == 3
    texts |= {f"{path.name} (as read back)": cassette_strings(path) for path in cassettes}
    assert not leaks(texts, TOKEN, b64(TOKEN)), leaks(texts, TOKEN, b64(TOKEN))
    junit = texts["junit.xml"]
    assert "widget &lt;redacted&gt;" in junit  # the captured output, the property, the failure: kept, redacted
    report = json.loads(texts["report.json"])
    assert report["tasks"][0]["answers"][:2] == ["widget <redacted>", "widget <redacted>"]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_the_rewritten_cassettes_still_replay(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """The request body that held the token is matched on the digest of what was sent, as before the rewrite."""
    monkeypatch.setenv("VAULT_TOKEN", TOKEN)
    fake.script(*[Step(text=f"widget {TOKEN}")] * 3)
    pytester.makepyfile(test_agent=AGENT.replace("assert consistency.repeat == 1, ", "assert True, "))
    form = f"--consistency-cassette-format={fmt}"
    recorded = run_recorded(pytester, fake.base_url, "once", form)
    assert recorded.ret == 0, recorded.stdout.str()
    rep1 = next((pytester.path / "cassettes").rglob(f"rep-1.{fmt}"))
    assert TOKEN not in rep1.read_text() and TOKEN not in cassette_strings(rep1)
    assert "remember <redacted>" in cassette_strings(rep1)
    fake.reset()
    replayed = run_recorded(pytester, fake.base_url, "none", form)
    assert replayed.ret == 0, replayed.stdout.str()
    assert fake.requests == []
    answers = json.loads((pytester.path / "report.json").read_text())["tasks"][0]["answers"]
    assert answers[:2] == ["widget <redacted>", "widget <redacted>"]


# --- the final pass, piece by piece ---------------------------------------------------------------------------


def test_a_cassette_that_cannot_be_made_clean_fails_its_repetition_as_the_setups(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a write refused for a secret: the repetition is an infrastructure error, its task ``error``, the run
    fails; the file is gone."""
    # From sys.modules, not the package's attribute: an earlier in-process session that first imported the module
    # dropped it from sys.modules, and the session below imports it again (the attribute is the dropped copy).
    late_secrets = importlib.import_module("pytest_consistency.cassette.rescrub")

    monkeypatch.setenv("VAULT_TOKEN", TOKEN)
    monkeypatch.setattr(late_secrets, "_redact_interaction", lambda interaction, redact: None)
    fake.script(*[Step(text=f"widget {TOKEN}")] * 3)
    pytester.makepyfile(test_agent=AGENT.replace("assert consistency.repeat == 1, ", "assert True, "))
    result = run_recorded(pytester, fake.base_url, "once")
    assert result.ret == 1, result.stdout.str()
    folder = pytester.path / "cassettes" / "test_agent" / "test_task"
    assert sorted(p.name for p in folder.iterdir()) == ["rep-3.yaml"]
    task = json.loads((pytester.path / "report.json").read_text())["tasks"][0]
    assert task["verdict"] == "error"
    for rep in task["repetitions"][:2]:
        assert rep["infrastructure"].startswith("cassette write refused (it still held a secret): "), rep
        assert "removed" in rep["infrastructure"]
    assert task["repetitions"][2]["infrastructure"] is None
    assert TOKEN not in result.stdout.str() + (pytester.path / "report.json").read_text()


HOOK_ORDER = """
import json

def pytest_unconfigure(config):
    impls = config.hook.pytest_sessionfinish.get_hookimpls()  # called last first; wrappers around the others
    names = [(impl.plugin_name, bool(impl.wrapper or impl.hookwrapper)) for impl in impls]
    with open("order.json", "w") as handle:
        json.dump(names, handle)
"""


def test_the_final_pass_runs_after_junit_is_written_and_before_the_terminal_summary(pytester: pytest.Pytester) -> None:
    """The order relied on: the pass is a wrapper of ``pytest_sessionfinish`` (so after every plain implementation:
    the controller's summary, pytest's LogXML writing JUnit's file, the plugin's annotation of it) and inside
    the terminal reporter's wrapper, which prints the terminal summary after its ``yield``."""
    pytester.makeconftest(HOOK_ORDER)
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    assert pytester.runpytest_subprocess("--junitxml=junit.xml", "--consistency-record=off").ret == 0
    order = json.loads((pytester.path / "order.json").read_text())
    wrappers = [name for name, wrapper in order if wrapper]
    plain = [name for name, wrapper in order if not wrapper]
    assert "consistency-secrets" in wrappers and "consistency-secrets" not in plain
    assert {"consistency-controller", "consistency-junit"} <= set(plain)
    assert wrappers.index("consistency-secrets") < wrappers.index("terminalreporter")  # inner: its end runs first


CRASH = AGENT.replace(
    "    if consistency.repeat == 3:\n",
    "    if consistency.repeat == 3:\n        os._exit(1)  # the worker dies: its cassettes are never handed over\n"
    "    if consistency.repeat == 2:\n",
).replace("assert consistency.repeat == 1, ", "assert True, ")


def test_the_cassettes_of_a_worker_that_died_are_rescanned_too(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repetitions 1 and 3 share a worker (round robin); 3 kills it, so its list of written cassettes is lost. The
    cassettes of the session's repetitions written since it started are searched instead."""
    monkeypatch.setenv("VAULT_TOKEN", TOKEN)
    fake.script(*[Step(text=f"widget {TOKEN}")] * 3)
    pytester.makepyfile(test_agent=CRASH)
    result = pytester.runpytest_subprocess(
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        "--consistency-record=once",
        "--consistency-report=report.json",
        "-v",
        "-p",
        "xdist",
        "-n",
        "2",
    )
    out = result.stdout.str()
    ran = workers_of(out)
    if ran.get("rep1") != ran.get("rep3"):
        pytest.skip(f"xdist did not deal repetitions 1 and 3 to one worker: {ran}")
    assert "crashed" in out, out
    rep1 = next((pytester.path / "cassettes").rglob("rep-1.yaml"))
    assert TOKEN not in rep1.read_text() and TOKEN not in cassette_strings(rep1)
    assert "remember <redacted>" in rep1.read_text()


def test_live_logging_is_the_only_text_printed_before_the_secret_was_known(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``log_cli`` prints each record as it is emitted, before the last repetition sends the token: those lines
    cannot be taken back (docs/secrets.md says so). Everything printed later, and every file, is redacted."""
    monkeypatch.setenv("VAULT_TOKEN", TOKEN)
    fake.script(*[Step(text=f"widget {TOKEN}")] * 3)
    pytester.makepyfile(test_agent=AGENT)
    result = pytester.runpytest_subprocess(
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        "--consistency-record=once",
        "--consistency-report=report.json",
        *OUTPUTS,
        "-rA",
        "-l",
        "-o",
        "log_cli=true",
        "--log-cli-level=WARNING",
    )
    assert result.ret == 1
    printed = [line for line in result.stdout.lines if TOKEN in line]
    assert printed == [f"WARNING  agent:test_agent.py:17 log: widget {TOKEN}"] * 2, printed  # rep 1's and 2's
    texts = left_behind(pytester, result)
    del texts["stdout"]
    assert not leaks(texts, TOKEN, b64(TOKEN)), leaks(texts, TOKEN, b64(TOKEN))
