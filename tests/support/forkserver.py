"""Inner pytest sessions started as processes, forked from a warm server instead of started cold.

Most integration tests run a pytest session in another process (``pytester.runpytest_subprocess``, or an inner
session's ``-n 2`` xdist workers). Each such process spent most of its life importing what every one of them imports:
pytest and its plugins, the OpenAI and Anthropic SDKs, httpx, vcrpy and this package (about 1 s of CPU each; 750 of
them in a full run). The server here imports those once, then forks a child per request; the child is a new process
with the caller's argv, working directory, environment, standard streams and exit status, in which those modules are
already imported, as they would be after its own imports, and nothing else has happened.

What a fresh interpreter would do differently is refused, not imitated: the server runs a request only when the
child's environment agrees with the server's on every variable the interpreter reads at start (``PYTHON*``, locale,
time zone, OpenSSL's) and on every variable the preloaded modules read while importing (watched as they import);
any other request, and any command line but ``-m pytest`` and ``-c CODE`` (xdist's worker bootstrap), is run by
the real interpreter (``exec``): the same process a test would have started without this module.

Three parts:

- the server, ``python forkserver.py SOCKET`` (a single thread: ``fork`` copies only the calling one);
- the client, an executable script that stands where ``sys.executable`` would (``pytester``'s subprocess command and
  xdist's ``popen//python=``): it hands the server its three standard streams (``SCM_RIGHTS``), forwards signals to
  the child, and exits as the child did; when the caller kills it, the server kills the child;
- ``forked_sessions.py`` (an inner sessions' plugin): an inner session's ``-n N`` workers start through the client.

A test that is about what a fresh process imports, or about its start, runs with ``FORKSERVER_OFF=1`` in its
environment (the client then always execs the interpreter) or calls ``sys.executable`` itself.
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import importlib
import io
import json
import os
import runpy
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: Where the client finds the server (the socket's path); unset, every process starts cold.
SOCKET_VARIABLE = "FORKSERVER_SOCKET"
#: Set (to anything) in a process's environment, its sessions start cold.
OFF_VARIABLE = "FORKSERVER_OFF"
#: Set (to anything), the client says on stderr why a command started cold.
VERBOSE_VARIABLE = "FORKSERVER_VERBOSE"
#: A file the test run's servers log each request to, with whether it was forked (for measuring; unset, none).
LOG_VARIABLE = "FORKSERVER_LOG"
#: The client, and the interpreter it stands for: for ``forked_sessions.py``, the inner sessions' plugin.
CLIENT_VARIABLE = "FORKSERVER_CLIENT"
PYTHON_VARIABLE = "FORKSERVER_PYTHON"
#: The directory of the commands that stand for the venv's (``COMMANDS``): first on a shell's PATH, they start forked.
COMMANDS_VARIABLE = "FORKSERVER_COMMANDS"
#: Where ``forked_sessions.py`` is: on ``PYTHONPATH`` while a server runs, so that every inner session finds it.
PLUGIN_DIRECTORY = str(Path(__file__).parent / "forked")
#: What the server imports once, for every child: what nearly every inner session imports, and nothing whose
#: import depends on the environment beyond what the watch below sees.
PRELOAD = (
    "pytest",
    "_pytest.pytester",
    "xdist.plugin",
    "xdist.looponfail",
    "xdist.remote",
    "execnet",
    "pytest_asyncio.plugin",
    "pytest_split.plugin",
    "pytest_repeat",
    "platformdirs",
    "httpx",
    "httpcore",
    "openai",
    "anthropic",
    "vcr",
    "yaml",
    "pytest_consistency",
)
#: Variables the interpreter reads at start, outside ``os.environ``: a child whose value differs starts cold.
START_VARIABLES = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "OPENSSL_CONF", "SSL_CERT_FILE", "SSL_CERT_DIR")
#: ``PYTHON*`` variables a child may set otherwise than the server: each is applied in the child.
APPLIED = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING")
#: Interpreter options a child's command line may hold before ``-m``/``-c`` (xdist's ``-u``, execnet's ``-B``).
FLAGS = ("-u", "-B")


@dataclass
class Request:
    """One child to start: its command line after the interpreter, working directory and environment."""

    argv: list[str]
    cwd: str
    env: dict[str, str]


@dataclass
class Plan:
    """How a child runs: ``-m pytest``, ``-c CODE`` or a script of the server's venv (its ``bin/pytest``), with
    the interpreter options given."""

    kind: str  # "module", "code" or "script"
    target: str  # the module's name, the code, the script's path
    args: list[str]
    unbuffered: bool
    no_bytecode: bool


#: The commands of the server's venv a child may run (the docs' commands and the CLI's tests run them by name).
COMMANDS = ("pytest", "pytest-consistency")
#: Their scripts, as the server's interpreter finds them.
SCRIPTS = tuple(str(Path(sys.executable).parent / name) for name in COMMANDS)


def plan(argv: list[str]) -> Plan | None:
    """The command line ``argv`` (after the interpreter) as a plan, or None where only the interpreter can run it."""
    flags: list[str] = []
    rest = list(argv)
    while rest and rest[0] in FLAGS:
        flags.append(rest.pop(0))
    if not rest:
        return None
    first = rest.pop(0)
    if first in ("-m", "-c") and rest:
        kind, target = ("module" if first == "-m" else "code"), rest.pop(0)
    elif first.startswith("-m") and len(first) > 2:
        kind, target = "module", first[2:]
    elif first in SCRIPTS:
        kind, target = "script", first
    else:
        return None
    if kind == "module" and target != "pytest":
        return None
    return Plan(kind, target, rest, "-u" in flags, "-B" in flags)


def start_variables(env: dict[str, str]) -> dict[str, str | None]:
    """The variables a fresh interpreter reads at its start, as ``env`` has them (``PYTHON*`` but those applied)."""
    names = {n for n in env if n.startswith("PYTHON") and n != "PYTHON" and n not in APPLIED} | set(START_VARIABLES)
    return {name: env.get(name) for name in names}


#: Reads at import whose value no test's process uses, by variable and reading module, with why: the variable
#: may differ between the server and a child (``pytester`` gives each test's sessions a HOME of their own).
HARMLESS_READS = {
    ("HOME", "botocore.utils"): "JSONFileCache.CACHE_DIR, AWS SSO's credential cache (vcrpy imports botocore)",
    ("HOME", "sysconfig"): "the user base, whose existence alone it keeps (a venv has no user site)",
    ("HOME", "zoneinfo._tzpath"): "sysconfig's user base again, through get_config_var",
}


class WatchedEnviron(type(os.environ)):  # type: ignore[misc]
    """``os.environ`` while the server imports: every name a module's import reads is kept, with its value and the
    modules that read it (a read by code that runs later, as pytest's own reads of ``PYTEST_ADDOPTS`` at each
    session's start are, is not kept)."""

    def __init__(self, environ: os._Environ[str], read: dict[str, tuple[str | None, set[str]]]) -> None:
        super().__init__(
            environ._data,  # type: ignore[attr-defined]
            environ.encodekey,  # type: ignore[attr-defined]
            environ.decodekey,  # type: ignore[attr-defined]
            environ.encodevalue,  # type: ignore[attr-defined]
            environ.decodevalue,  # type: ignore[attr-defined]
        )
        self._read = read

    def __getitem__(self, key: str) -> str:
        try:
            value: str | None = super().__getitem__(key)
        except KeyError:
            value = None
        module = importing(sys._getframe(1))
        if module is not None:
            self._read.setdefault(key, (value, set()))[1].add(module)
        if value is None:
            raise KeyError(key)
        return value


def importing(frame: types.FrameType | None) -> str | None:
    """The module whose import (its top-level code) ``frame`` runs in, innermost first; None outside an import."""
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if frame.f_code.co_name == "<module>" and name not in ("__main__", __name__):
            return str(name)
        frame = frame.f_back
    return None


def preload() -> dict[str, str | None]:
    """Import what every inner session imports, as one would: the entry-point plugins through a pytest
    configuration with an inner session's options (``inner.LEFT_OUT`` left out), so that pytest's import hook
    rewrites their asserts as it does in a session; then ``PRELOAD`` and every module of the package, with that
    hook still in place. Returns the environment variables those imports read that matter (``HARMLESS_READS``
    left out), with the values they read."""
    import inner
    from _pytest.config import _prepareconfig

    read: dict[str, tuple[str | None, set[str]]] = {}
    plain = os.environ
    addopts = plain.pop("PYTEST_ADDOPTS", None)
    os.environ = WatchedEnviron(plain, read)  # noqa: B003 - the same variables, read through the watch
    try:
        config = _prepareconfig(["-p", "no:cacheprovider", *inner.addopts().split()])
        try:
            for name in PRELOAD:
                with contextlib.suppress(ImportError):
                    importlib.import_module(name)
            with contextlib.suppress(ImportError):
                import pkgutil

                import pytest_consistency

                for found in pkgutil.walk_packages(pytest_consistency.__path__, "pytest_consistency."):
                    if not found.name.endswith(".__main__"):
                        with contextlib.suppress(ImportError):
                            importlib.import_module(found.name)
        finally:
            config._ensure_unconfigure()
    finally:
        os.environ = plain  # noqa: B003 - the process's own mapping back
        if addopts is not None:
            plain["PYTEST_ADDOPTS"] = addopts
    return {
        name: value for name, (value, modules) in read.items() if any((name, m) not in HARMLESS_READS for m in modules)
    }


# --- the wire: a length-prefixed JSON message; the request carries the client's three standard streams -----------


def send(sock: socket.socket, message: object, fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    header = struct.pack("!I", len(data))
    if fds:
        socket.send_fds(sock, [header], fds)
        sock.sendall(data)
    else:
        sock.sendall(header + data)


def receive(sock: socket.socket, fds: int = 0) -> tuple[object, list[int]]:
    got: list[int] = []
    try:
        if fds:
            header, got, _, _ = socket.recv_fds(sock, 4, fds)
        else:
            header = sock.recv(4, socket.MSG_WAITALL)
        if len(header) < 4:
            raise EOFError("the peer closed the connection")
        (size,) = struct.unpack("!I", header)
        data = sock.recv(size, socket.MSG_WAITALL) if size else b""
        if len(data) < size:
            raise EOFError("the peer closed the connection mid-message")
        return json.loads(data), got
    except BaseException:
        for fd in got:  # a broken request leaves none of its descriptors open in the server
            os.close(fd)
        raise


# --- the server ---------------------------------------------------------------------------------------------------


@dataclass
class Child:
    pid: int
    conn: socket.socket
    pidfd: int


@dataclass
class Server:
    path: str
    read: dict[str, str | None]
    #: The server's threads after its imports: one, or ``fork`` would copy a process whose other threads are gone.
    threads: int
    #: Whether this kernel gives a child's exit as a descriptor (``pidfd_open``, Linux 5.3), which the server waits on.
    pidfds: bool
    children: dict[int, Child] = field(default_factory=dict)

    def refusal(self, request: Request) -> str | None:
        """Why the interpreter must run ``request`` itself, or None where a fork is that process."""
        if request.env.get(OFF_VARIABLE):
            return f"{OFF_VARIABLE} is set"
        if not self.pidfds:
            return "pidfd_open does not work here"
        if self.threads != 1:
            return f"a preloaded module started a thread ({self.threads} running)"
        if plan(request.argv) is None:
            return f"not -m pytest or -c: {request.argv[:2]}"
        mine = start_variables(dict(os.environ))
        theirs = start_variables(request.env)
        for name in sorted(set(mine) | set(theirs)):
            if mine.get(name) != theirs.get(name):
                return f"{name} differs"
        for name, value in self.read.items():
            if request.env.get(name) != value:
                return f"{name} (read while preloading) differs"
        return None


def pidfds_work() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


def serve(path: str, log: str | None = None) -> tuple[Request, list[int]]:
    """Run the server on ``path``; returns only in a forked child: its request and standard streams. With ``log``,
    a line per request there: ``forked ARGV`` or ``cold (WHY) ARGV``."""
    read = preload()
    # what the imports made stays out of the children's collections: each would otherwise walk it all (and, touching
    # every object, copy the pages fork shares), as tests/conftest.py keeps the run's own imports out of them
    gc.collect()
    gc.freeze()
    server = Server(path, read, threading.active_count(), pidfds_work())
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    # its stdin is a pipe its starter holds open: at its end (the starter gone, even killed) the server ends too
    selector.register(sys.stdin, selectors.EVENT_READ, "starter")
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # its starter stops reading: nothing more of the server's goes there
    os.close(devnull)
    owner = os.getpid()
    try:
        while True:
            for key, _ in selector.select():
                if key.data == "starter":
                    if os.read(0, 4096):
                        continue
                    for pid in server.children:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
                    raise SystemExit(0)
                if key.data == "accept":
                    conn, _ = listener.accept()
                    conn.settimeout(30)
                    try:
                        message, fds = receive(conn, fds=3)
                    except (OSError, EOFError, ValueError):
                        conn.close()
                        continue
                    conn.settimeout(None)
                    assert isinstance(message, dict)
                    request = Request(message["argv"], message["cwd"], message["env"])
                    why = server.refusal(request)
                    if log:
                        with open(log, "a", encoding="utf-8") as file:
                            file.write(f"{'forked' if why is None else f'cold ({why})'} {request.argv[:3]}\n")
                    if why is not None:
                        send(conn, {"fallback": why})
                        conn.close()
                        for fd in fds:
                            os.close(fd)
                        continue
                    sys.stdout.flush()
                    sys.stderr.flush()
                    pid = os.fork()
                    if pid == 0:
                        # the child: nothing of the server's stays open
                        for child in server.children.values():
                            child.conn.close()
                            os.close(child.pidfd)
                        selector.close()
                        listener.close()
                        conn.close()
                        server.children.clear()
                        return request, fds
                    for fd in fds:
                        os.close(fd)
                    pidfd = os.pidfd_open(pid)
                    server.children[pid] = Child(pid, conn, pidfd)
                    send(conn, {"pid": pid})
                    selector.register(conn, selectors.EVENT_READ, ("conn", pid))
                    selector.register(pidfd, selectors.EVENT_READ, ("exit", pid))
                else:
                    what, pid = key.data
                    child = server.children.get(pid)
                    if child is None:
                        continue
                    if what == "conn":
                        with contextlib.suppress(OSError):
                            if child.conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                                continue  # not the end of the connection (a client sends nothing more)
                        # the client went away (killed by its caller's timeout): so does the child
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
                        selector.unregister(child.conn)
                        continue
                    _, status = os.waitpid(pid, 0)
                    selector.unregister(child.pidfd)
                    os.close(child.pidfd)
                    with contextlib.suppress(KeyError, ValueError):
                        selector.unregister(child.conn)
                    with contextlib.suppress(OSError):
                        send(child.conn, {"status": os.waitstatus_to_exitcode(status)})
                    child.conn.close()
                    del server.children[pid]
    finally:
        if os.getpid() == owner:
            with contextlib.suppress(OSError):
                os.unlink(path)


def standard_stream(fd: int, unbuffered: bool, io_encoding: str) -> io.TextIOWrapper:
    """A standard stream on ``fd`` as the interpreter makes one at its start (``io_encoding``: PYTHONIOENCODING's
    ``encoding[:errors]``, which the errors of stderr do not take)."""
    mode = "rb" if fd == 0 else "wb"
    raw = io.FileIO(fd, mode, closefd=False)
    tty = raw.isatty()
    buffer: io.RawIOBase | io.BufferedIOBase
    if fd == 0:
        buffer = io.BufferedReader(raw)
    elif unbuffered:
        buffer = raw
    else:
        buffer = io.BufferedWriter(raw)
    previous = (sys.__stdin__, sys.__stdout__, sys.__stderr__)[fd]
    assert previous is not None
    chosen, _, chosen_errors = io_encoding.partition(":")
    encoding = codecs.lookup(chosen).name if chosen else previous.encoding  # as the interpreter names it
    errors = "backslashreplace" if fd == 2 else (chosen_errors or previous.errors)
    return io.TextIOWrapper(
        buffer,  # type: ignore[arg-type]
        encoding=encoding,
        errors=errors,
        line_buffering=fd == 2 or (fd == 1 and tty),
        write_through=unbuffered and fd != 0,
    )


def become(request: Request, fds: list[int], base_path: list[str]) -> Plan:
    """In the forked child: take the request's streams, directory, environment, path and arguments."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request.cwd)
    os.environ.clear()
    os.environ.update(request.env)
    time.tzset()
    tempfile.tempdir = None  # as a fresh process has it: read from TMPDIR at first use
    how = plan(request.argv)
    assert how is not None
    sys.orig_argv = [sys.executable, *request.argv]
    unbuffered = how.unbuffered or bool(request.env.get("PYTHONUNBUFFERED"))
    io_encoding = request.env.get("PYTHONIOENCODING", "")
    sys.stdin, sys.stdout, sys.stderr = (standard_stream(fd, unbuffered, io_encoding) for fd in (0, 1, 2))
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    sys.dont_write_bytecode = how.no_bytecode or bool(request.env.get("PYTHONDONTWRITEBYTECODE"))
    extra = [p for p in request.env.get("PYTHONPATH", "").split(os.pathsep) if p]
    first = {"module": os.getcwd(), "code": "", "script": os.path.dirname(os.path.realpath(how.target))}[how.kind]
    sys.path[:] = [first, *extra, *base_path]
    # the copy of the path xdist takes at its import (the server's import), which it gives this process's local workers
    xdist_plugin = sys.modules.get("xdist.plugin")
    if xdist_plugin is not None:
        xdist_plugin._sys_path[:] = sys.path
    return how


def run(how: Plan) -> None:
    """Run the child's command as the interpreter would (its exit is this process's)."""
    if how.kind == "module":
        sys.argv = ["-m", *how.args]
        runpy.run_module(how.target, run_name="__main__", alter_sys=True)
        return
    if how.kind == "script":
        sys.argv = [how.target, *how.args]
        runpy.run_path(how.target, run_name="__main__")
        return
    sys.argv = ["-c", *how.args]
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    exec(compile(how.target, "<string>", "exec"), main.__dict__)  # the command line's own -c code


# --- the client -----------------------------------------------------------------------------------------------------

CLIENT = '''#!{python} -IS
"""Start this command line forked from the warm server (tests/support/forkserver.py), or with the interpreter."""
import json, os, signal, socket, struct, sys

PYTHON = {python!r}
#: What this client runs before its own arguments: nothing (it is the interpreter), or a script (it is the script).
PREFIX = {prefix!r}


def cold():
    os.execv(PYTHON, [PYTHON, *PREFIX, *sys.argv[1:]])


path = os.environ.get({socket_variable!r})
if not path or os.environ.get({off_variable!r}):
    cold()
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    sock.connect(path)
except OSError:
    cold()


def receive():
    header = sock.recv(4, socket.MSG_WAITALL)
    if len(header) < 4:
        return None
    (size,) = struct.unpack("!I", header)
    return json.loads(sock.recv(size, socket.MSG_WAITALL))


data = json.dumps({{"argv": [*PREFIX, *sys.argv[1:]], "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
socket.send_fds(sock, [struct.pack("!I", len(data))], [0, 1, 2])
sock.sendall(data)
answer = receive()
if answer is None or "fallback" in answer:
    sock.close()
    if os.environ.get({verbose_variable!r}):
        sys.stderr.write(f"forkserver: started cold: {{answer and answer['fallback']}}\\n")
    cold()
pid = answer["pid"]
for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
    signal.signal(number, lambda signum, frame: os.kill(pid, signum))
answer = receive()
status = 1 if answer is None else answer["status"]
sys.stdout.flush()
if status < 0:
    signal.signal(-status, signal.SIG_DFL)
    os.kill(os.getpid(), -status)
os._exit(status)
'''


@dataclass
class Running:
    """A server started for this process's tests: its socket and the client that stands for the interpreter."""

    process: subprocess.Popen[bytes]
    socket: str
    client: str
    directory: str
    python: str

    def environment(self) -> dict[str, str]:
        """The variables that send this process's inner sessions to the server (``PYTHONPATH``: their plugin)."""
        path = os.pathsep.join(filter(None, [PLUGIN_DIRECTORY, os.environ.get("PYTHONPATH", "")]))
        return {
            SOCKET_VARIABLE: self.socket,
            CLIENT_VARIABLE: self.client,
            PYTHON_VARIABLE: self.python,
            COMMANDS_VARIABLE: os.path.join(self.directory, "bin"),
            "PYTHONPATH": path,
        }

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        if self.process.stdin is not None:
            self.process.stdin.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def start(python: str = sys.executable, log: str | None = None) -> Running:
    """A server for ``python``'s children, and its clients (executables), in a directory of their own: ``python``,
    which stands for the interpreter, and in ``bin/`` one for each of the venv's ``COMMANDS``."""
    directory = tempfile.mkdtemp(prefix="forkserver-")
    path = os.path.join(directory, "socket")
    client = os.path.join(directory, "python")
    os.mkdir(os.path.join(directory, "bin"))
    scripts = {client: [], **{os.path.join(directory, "bin", n): [str(Path(python).parent / n)] for n in COMMANDS}}
    for name, prefix in scripts.items():
        text = CLIENT.format(
            python=python,
            prefix=prefix,
            socket_variable=SOCKET_VARIABLE,
            off_variable=OFF_VARIABLE,
            verbose_variable=VERBOSE_VARIABLE,
        )
        Path(name).write_text(text, encoding="utf-8")
        os.chmod(name, 0o755)
    # its own path is the interpreter's (a child's PYTHONPATH is the child's), and a server of an outer run is not its
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("FORKSERVER_")}
    process = subprocess.Popen(
        [python, __file__, path, *([log] if log else [])],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        env=env,
        cwd=directory,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if line.strip() != b"ready":
        process.kill()
        raise RuntimeError(f"the fork server did not start: {line!r}")
    process.stdout.close()
    return Running(process, path, client, directory, python)


def serving_here() -> bool:
    """Whether a server runs for this process's interpreter (its variables set, for ``sys.executable``)."""
    return bool(os.environ.get(CLIENT_VARIABLE)) and os.environ.get(PYTHON_VARIABLE) == sys.executable


def interpreter() -> str:
    """What a test runs for ``sys.executable -m pytest``: the client where a server runs for this interpreter."""
    return os.environ[CLIENT_VARIABLE] if serving_here() else sys.executable


def worker_options() -> list[str]:
    """The options that start a session's ``-n N`` workers forked too (``inner.addopts`` adds them), where a server
    runs for this interpreter; none where none does."""
    return ["-p", "forked_sessions"] if serving_here() else []


def command(name: str) -> str:
    """The venv's command ``name`` (one of ``COMMANDS``) as a test runs it: the server's client for it, if one runs
    for this interpreter."""
    if serving_here():
        return os.path.join(os.environ[COMMANDS_VARIABLE], name)
    return str(Path(sys.executable).parent / name)


def shell_path(path: str) -> str:
    """``PATH`` for a shell whose ``pytest`` is this interpreter's venv's: the server's ``pytest`` first, if it runs."""
    return os.pathsep.join([os.environ[COMMANDS_VARIABLE], path]) if serving_here() else path


@contextlib.contextmanager
def running(python: str = sys.executable, log: str | None = None) -> Iterator[Running]:
    server = start(python, log)
    try:
        yield server
    finally:
        server.stop()


def main(path: str, log: str | None = None) -> None:
    sys.stdout.flush()
    request, fds = serve(path, log)
    base = sys.path  # the server's, before the child's own
    how = become(request, fds, list(base[1:]) if base else [])
    run(how)


if __name__ == "__main__":
    main(*sys.argv[1:3])
