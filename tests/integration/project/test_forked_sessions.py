"""The fork server (tests/support/forkserver.py): a process forked from it is the process a cold start gives, but
for the imports it finds done; what it cannot make so starts cold.

Each test runs the server's client as the suite does (``pytester``'s subprocess command, an xdist worker's
interpreter), and a cold start of the same command line beside it where the two are compared.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import forkserver
import pytest

#: A test file whose session prints what its process was given and what it had imported before collecting it.
PROBE = """
import json, os, sys

SEEN_AT_COLLECTION = {name: name in sys.modules for name in ("openai", "pytest_consistency.plugin")}


def test_probe():
    out = {
        "argv": sys.argv[1:],
        "orig_argv": sys.orig_argv[1:],
        "cwd": os.getcwd(),
        "path": [p for p in sys.path if "forked" not in p],
        "probe": os.environ.get("PROBE"),
        "executable": sys.executable,
        "stdin": sys.stdin.read() if not sys.stdin.closed else None,
        "dont_write_bytecode": sys.dont_write_bytecode,
        "encoding": [sys.__stdout__.encoding, sys.__stderr__.errors],
        "ppid": os.getppid(),
        "preloaded": SEEN_AT_COLLECTION,
    }
    with open(f"probe-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.json", "w") as file:
        json.dump(out, file)
"""


@pytest.fixture
def server(_fork_server: forkserver.Running | None) -> forkserver.Running:
    if _fork_server is None:
        pytest.skip(f"{forkserver.OFF_VARIABLE} is set: this run starts every session cold")
    return _fork_server


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    # not the variables of this run's own xdist worker, if it is one: the probe names its file by the worker's
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST_")}
    environment.update({"PYTEST_ADDOPTS": "-p no:cacheprovider -p no:randomly", **env})
    return subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=120, input="")


def probe(result: subprocess.CompletedProcess[str], cwd: Path, process: str = "main") -> dict[str, Any]:
    """What the probe's process saw (``process``: ``main``, or an xdist worker's id); the file is then removed."""
    path = cwd / f"probe-{process}.json"
    assert path.exists(), (sorted(p.name for p in cwd.iterdir()), result.stdout[-3000:] + result.stderr[-3000:])
    found: dict[str, Any] = json.loads(path.read_text())
    path.unlink()
    return found


def summary(result: subprocess.CompletedProcess[str]) -> str:
    """pytest's last line without its time."""
    return result.stdout.splitlines()[-1].split(" in ")[0]


@pytest.mark.parametrize(
    ("form", "env"),
    [("module", {}), ("module", {"PYTHONIOENCODING": "latin-1:replace"}), ("script", {"PYTHONUNBUFFERED": "1"})],
    ids=["python-m-pytest", "io-encoding", "venv-pytest-script"],
)
def test_a_forked_session_is_given_what_a_cold_one_is_and_finds_the_imports_done(
    server: forkserver.Running, tmp_path: Path, form: str, env: dict[str, str]
) -> None:
    """``python -m pytest`` (pytester's command, the example replays) and the venv's ``pytest`` (the docs' commands,
    through ``FORKSERVER_COMMANDS`` first on their PATH), with the variables a child applies itself."""
    (tmp_path / "test_probe.py").write_text(PROBE)
    args = ["-q", "-s", "test_probe.py"]
    if form == "module":
        cold_command, forked_command = [sys.executable, "-mpytest"], [server.client, "-mpytest"]
    else:
        cold_command = [str(Path(sys.executable).parent / "pytest")]
        forked_command = [str(Path(server.environment()[forkserver.COMMANDS_VARIABLE]) / "pytest")]
    cold = run([*cold_command, *args], tmp_path, PROBE="cold-and-forked", **env)
    seen_cold = probe(cold, tmp_path)
    forked = run([*forked_command, *args], tmp_path, PROBE="cold-and-forked", **env)
    seen_forked = probe(forked, tmp_path)
    assert cold.returncode == forked.returncode == 0, forked.stdout[-3000:] + forked.stderr[-3000:]
    assert seen_forked["ppid"] == server.process.pid and seen_cold["ppid"] == os.getpid()
    assert seen_cold["preloaded"] == {"openai": False, "pytest_consistency.plugin": True}
    assert seen_forked["preloaded"] == {"openai": True, "pytest_consistency.plugin": True}
    for what in ("ppid", "preloaded"):
        del seen_cold[what], seen_forked[what]
    assert seen_forked == seen_cold
    # and pytest's own words: nothing the cold session does not say (no warning about modules imported early)
    assert summary(forked) == summary(cold) == "1 passed"
    assert forked.stderr == cold.stderr


def test_an_inner_sessions_xdist_workers_are_forked_too(server: forkserver.Running, tmp_path: Path) -> None:
    """With ``-p forked_sessions`` (tests/support/inner.py adds it), as from a session run in the test's process."""
    for name in ("test_probe_a.py", "test_probe_b.py"):
        (tmp_path / name).write_text(PROBE)
    addopts = "-p no:cacheprovider -p no:randomly -p forked_sessions"
    for command in ([server.client, "-mpytest"], [sys.executable, "-mpytest"]):
        result = run([*command, "-q", "-s", "-n", "2", "--dist", "each"], tmp_path, PYTEST_ADDOPTS=addopts)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert summary(result) == "4 passed"
        for worker in ("gw0", "gw1"):
            seen = probe(result, tmp_path, worker)
            assert seen["ppid"] == server.process.pid and seen["preloaded"]["openai"], (command, worker, seen)


#: What a process says of its start: its parent, and whether the SDK was imported before its own code ran.
STARTED = "import json, os, sys; print(json.dumps([os.getppid(), 'openai' in sys.modules]))"


@pytest.mark.parametrize(
    ("options", "env", "why"),
    [
        ([], {forkserver.OFF_VARIABLE: "1"}, "FORKSERVER_OFF"),
        ([], {"PYTHONHASHSEED": "7"}, "a variable the interpreter reads at start"),
        ([], {"OPENAI_LOG": "debug"}, "a variable openai reads at its import"),
        (["-X", "utf8"], {}, "an interpreter option"),
    ],
    ids=["off", "hash-seed", "openai-log", "option"],
)
def test_what_a_fork_cannot_be_starts_cold(
    server: forkserver.Running, tmp_path: Path, options: list[str], env: dict[str, str], why: str
) -> None:
    forked = run([server.client, "-c", STARTED], tmp_path)
    assert json.loads(forked.stdout) == [server.process.pid, True], forked.stderr  # the same command, forked
    result = run([server.client, *options, "-c", STARTED], tmp_path, **env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout) == [os.getpid(), False], why  # the client became the interpreter


def test_exit_statuses_and_signals_are_the_childs(server: forkserver.Running, tmp_path: Path) -> None:
    assert run([server.client, "-c", "import sys; sys.exit(3)"], tmp_path).returncode == 3
    killed = run([server.client, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"], tmp_path)
    assert killed.returncode == -signal.SIGTERM
    failed = run([server.client, "-c", "raise ValueError('from the child')"], tmp_path)
    assert failed.returncode == 1 and "ValueError: from the child" in failed.stderr
    echoed = subprocess.run(
        [server.client, "-c", "import sys; print(sys.stdin.read().upper(), sys.argv)", "x"],
        input="over stdin",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert echoed.stdout == "OVER STDIN ['-c', 'x']\n"


def ends(pid: int, within: float = 30) -> bool:
    """Whether process ``pid`` ends (is gone, or a zombie no one reaps) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_a_client_killed_by_its_caller_takes_its_child_with_it(server: forkserver.Running, tmp_path: Path) -> None:
    """As ``pytester``'s timeout kills the process it started: the child must not run on unseen."""
    pid_file = tmp_path / "pid"
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    client = subprocess.Popen([server.client, "-c", code], stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    child = int(pid_file.read_text())
    client.kill()
    client.wait()
    assert ends(child), "the child outlived its client"


#: A test process that starts a server, says its pid, and waits to be killed.
STARTER = """
import sys, time
sys.path.insert(0, {support!r})
import forkserver
server = forkserver.start()
print(server.process.pid, server.directory, flush=True)
time.sleep(120)
"""


def test_a_server_whose_test_process_is_killed_ends_too(tmp_path: Path) -> None:
    """A worker killed mid-run (a CI timeout, a crash) leaves no server behind, waiting forever."""
    code = STARTER.format(support=str(Path(forkserver.__file__).parent))
    starter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    assert starter.stdout is not None
    pid, _ = starter.stdout.readline().split()
    starter.kill()
    starter.wait()
    assert ends(int(pid)), "the server outlived the process that started it"


def test_a_server_that_cannot_wait_on_its_children_or_holds_a_thread_forks_nothing() -> None:
    """Its refusals, asked directly: a fork of a process with other threads loses them; without ``pidfd_open`` the
    server could not see a child end."""
    env = {k: v for k, v in os.environ.items() if k != forkserver.OFF_VARIABLE}
    request = forkserver.Request(["-mpytest", "-q"], "/", env)
    assert forkserver.Server("socket", {}, threads=1, pidfds=True).refusal(request) is None
    assert "pidfd_open" in str(forkserver.Server("socket", {}, threads=1, pidfds=False).refusal(request))
    assert "thread" in str(forkserver.Server("socket", {}, threads=2, pidfds=True).refusal(request))
