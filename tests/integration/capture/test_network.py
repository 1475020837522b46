"""The replay network block against real loopback sockets: every way out is refused inside, and works again after.

Loopback is blocked like any other address, so a listener started here stands for the paid API.
"""

from __future__ import annotations

import _socket
import asyncio
import os
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.capture import network
from pytest_consistency.capture.network import NetworkBlocked, blocked

REASON = "cassettes are replayed only (test)"
Address = tuple[str, int]

# Taken before any block, as a library may do at import time: a patch of the class attribute would miss it.
EARLY_CONNECT = socket.socket.connect


@pytest.fixture
def tcp() -> Iterator[socket.socket]:
    """A loopback TCP listener; a connection that got through would wait in its accept queue."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        yield server


@pytest.fixture
def udp() -> Iterator[socket.socket]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver:
        receiver.bind(("127.0.0.1", 0))
        receiver.settimeout(5)
        yield receiver


def address(sock: socket.socket) -> Address:
    host, port = sock.getsockname()[:2]
    return host, port


def assert_refused(exc: pytest.ExceptionInfo[BaseException], target: Address) -> None:
    assert isinstance(exc.value, NetworkBlocked) and isinstance(exc.value, OSError)
    assert str(exc.value) == f"network access to {target!r} blocked: {REASON}"


def assert_nothing_connected(server: socket.socket) -> None:
    with pytest.raises(BlockingIOError):
        server.accept()[0].close()


def assert_connects(server: socket.socket) -> None:
    """Outside the block loopback is reachable again, and the first connection waiting is this one."""
    assert_nothing_connected(server)
    with socket.create_connection(address(server), timeout=5):
        pass
    server.setblocking(True)
    server.settimeout(5)
    server.accept()[0].close()
    server.setblocking(False)


def assert_only_later_datagram(receiver: socket.socket) -> None:
    """Send a datagram after the block: it must be the first one to arrive, so nothing went out during it."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        sender.sendto(b"after", address(receiver))
    assert receiver.recv(100) == b"after"


def assert_restored() -> None:
    assert getattr(network, "_reasons", []) == []  # no block left active
    uvloop = sys.modules.get("uvloop")
    if uvloop is not None:
        assert not {"create_connection", "create_datagram_endpoint", "sock_connect"} & set(vars(uvloop.Loop))


def test_socket_connect_and_connect_ex(tcp: socket.socket) -> None:
    target = address(tcp)
    with blocked(REASON):
        with socket.socket() as s, pytest.raises(OSError) as exc:
            s.connect(target)
        assert_refused(exc, target)
        with socket.socket() as s, pytest.raises(OSError) as exc:
            s.connect_ex(target)
        assert_refused(exc, target)
        with pytest.raises(OSError) as exc:
            socket.create_connection(target, timeout=5)
        assert_refused(exc, target)
    assert_restored()
    assert_connects(tcp)


def test_connect_taken_before_the_block(tcp: socket.socket) -> None:
    target = address(tcp)
    with blocked(REASON), socket.socket() as s, pytest.raises(OSError) as exc:
        EARLY_CONNECT(s, target)
    assert_refused(exc, target)
    assert_connects(tcp)


def test_raw_socket_module(tcp: socket.socket, udp: socket.socket) -> None:
    with blocked(REASON):
        s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        try:
            with pytest.raises(OSError) as exc:
                s.connect(address(tcp))
            assert_refused(exc, address(tcp))
        finally:
            s.close()
        s = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
        try:
            with pytest.raises(OSError) as exc:
                s.sendto(b"during", address(udp))
            assert_refused(exc, address(udp))
        finally:
            s.close()
    assert_connects(tcp)
    assert_only_later_datagram(udp)


def test_udp_sendto_and_sendmsg_without_connect(udp: socket.socket) -> None:
    target = address(udp)
    with blocked(REASON), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        with pytest.raises(OSError) as exc:
            sender.sendto(b"during", target)
        assert_refused(exc, target)
        with pytest.raises(OSError) as exc:
            sender.sendmsg([b"during"], [], 0, target)
        assert_refused(exc, target)
        with pytest.raises(OSError) as exc:
            sender.connect(target)
        assert_refused(exc, target)
    assert_only_later_datagram(udp)


def run_on(new_loop: Callable[[], asyncio.AbstractEventLoop], main: Coroutine[Any, Any, None]) -> None:
    loop = new_loop()
    try:
        loop.run_until_complete(main)
    finally:
        loop.close()


class Received(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.errors: list[Exception] = []

    def error_received(self, exc: Exception) -> None:
        self.errors.append(exc)


def test_asyncio_default_loop(tcp: socket.socket, udp: socket.socket) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with blocked(REASON):
            with pytest.raises(OSError) as exc:
                await asyncio.open_connection(*address(tcp))
            assert_refused(exc, address(tcp))
            # A local-only endpoint, then sendto: the transport reports the refusal to its protocol, sends nothing.
            transport, protocol = await loop.create_datagram_endpoint(Received, local_addr=("127.0.0.1", 0))
            transport.sendto(b"during", address(udp))
            transport.close()
            assert [str(e) for e in protocol.errors] == [f"network access to {address(udp)!r} blocked: {REASON}"]
        _, writer = await asyncio.open_connection(*address(tcp))
        writer.close()
        await writer.wait_closed()

    run_on(asyncio.new_event_loop, main())
    assert_restored()
    tcp.setblocking(True)
    tcp.accept()[0].close()
    tcp.setblocking(False)
    assert_nothing_connected(tcp)
    assert_only_later_datagram(udp)


def test_uvloop(tcp: socket.socket, udp: socket.socket) -> None:
    uvloop = pytest.importorskip("uvloop")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, uvloop.Loop)
        with blocked(REASON):
            with pytest.raises(OSError) as exc:
                await asyncio.open_connection(*address(tcp))
            assert_refused(exc, address(tcp))
            with pytest.raises(OSError) as exc:
                await loop.create_connection(asyncio.Protocol, *address(tcp))
            assert_refused(exc, address(tcp))
            with socket.socket() as s, pytest.raises(OSError) as exc:
                s.setblocking(False)
                await loop.sock_connect(s, address(tcp))
            assert_refused(exc, address(tcp))
            with pytest.raises(OSError) as exc:
                await loop.create_datagram_endpoint(Received, remote_addr=address(udp))
            assert_refused(exc, address(udp))
            with pytest.raises(OSError) as exc:  # local only: its transport would send through libuv, unseen
                await loop.create_datagram_endpoint(Received, local_addr=("127.0.0.1", 0))
            assert_refused(exc, ("127.0.0.1", 0))
        assert_restored()
        _, writer = await asyncio.open_connection(*address(tcp))
        writer.close()
        await writer.wait_closed()
        transport, _ = await loop.create_datagram_endpoint(Received, remote_addr=address(udp))
        transport.sendto(b"after")
        transport.close()

    run_on(uvloop.new_event_loop, main())
    tcp.setblocking(True)
    tcp.accept()[0].close()
    tcp.setblocking(False)
    assert_nothing_connected(tcp)
    assert udp.recv(100) == b"after"


def test_uvloop_unix_connection_is_allowed(tmp_path: Path) -> None:
    uvloop = pytest.importorskip("uvloop")
    path = str(tmp_path / "s")

    async def main() -> None:
        server = await asyncio.start_unix_server(lambda r, w: w.close(), path)
        with blocked(REASON):
            reader, writer = await asyncio.open_unix_connection(path)
            assert await reader.read() == b""
            writer.close()
        server.close()
        await server.wait_closed()

    run_on(uvloop.new_event_loop, main())


def test_a_thread_started_inside_is_blocked(tcp: socket.socket, udp: socket.socket) -> None:
    errors: list[BaseException] = []

    def reach_out() -> None:
        for attempt in (
            lambda: socket.create_connection(address(tcp), timeout=5).close(),
            lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"during", address(udp)),
        ):
            try:
                attempt()
            except NetworkBlocked as exc:
                errors.append(exc)

    with blocked(REASON):
        thread = threading.Thread(target=reach_out)
        thread.start()
        thread.join(10)
    assert [str(e) for e in errors] == [
        f"network access to {address(tcp)!r} blocked: {REASON}",
        f"network access to {address(udp)!r} blocked: {REASON}",
    ]
    assert_connects(tcp)
    assert_only_later_datagram(udp)


def test_nested_and_overlapping_blocks(tcp: socket.socket) -> None:
    target = address(tcp)

    def refused(reason: str) -> None:
        with socket.socket() as s, pytest.raises(NetworkBlocked, match=reason):
            s.connect(target)

    with blocked("outer"):
        with blocked("inner"):
            refused("inner")
        refused("outer")
    assert_connects(tcp)

    # Two repetitions in two threads, whose blocks end in the order they began: the later one still blocks.
    first, second = blocked("first"), blocked("second")
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    try:
        refused("second")
    finally:
        second.__exit__(None, None, None)
    assert_restored()
    assert_connects(tcp)


def test_restored_when_the_body_raises(tcp: socket.socket) -> None:
    with pytest.raises(ZeroDivisionError), blocked(REASON):
        1 / 0  # noqa: B018
    assert_restored()
    assert_connects(tcp)


def test_unix_sockets_still_work(tmp_path: Path) -> None:
    with blocked(REASON):
        a, b = socket.socketpair()
        with a, b:
            a.sendall(b"pair")
            a.sendmsg([b"msg"])
            assert b.recv(100) == b"pairmsg"
        path = str(tmp_path / "dgram")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as receiver:
            receiver.bind(path)
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
                sender.sendto(b"unix", path)
                sender.connect(path)
                sender.send(b"connected")
            assert receiver.recv(100) == b"unix"
            assert receiver.recv(100) == b"connected"

        async def main() -> None:  # the default loop's self-pipe is a socketpair too
            await asyncio.sleep(0)

        run_on(asyncio.new_event_loop, main())


def test_fails_loudly_when_the_hook_cannot_be_added() -> None:
    script = textwrap.dedent(
        """
        import sys

        def deny(event, args):
            if event == "sys.addaudithook":
                raise RuntimeError("no more hooks")

        sys.addaudithook(deny)
        from pytest_consistency.capture.network import blocked
        try:
            with blocked("r"):
                pass
        except RuntimeError as exc:
            print("refused:", exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.startswith("refused: cannot block the network"), out.stdout + out.stderr


CARRIED = """
import os
import socket

import pytest

from pytest_consistency.capture.network import NetworkBlocked

PORT = int(os.environ["LISTENER_PORT"])


def outside():
    assert "OPENAI_API_KEY" not in os.environ
    socket.create_connection(("127.0.0.1", PORT), timeout=5).close()


def inside():
    assert os.environ["OPENAI_API_KEY"]  # the stand-in key a replay gives an agent's own client
    with pytest.raises(NetworkBlocked):
        socket.create_connection(("127.0.0.1", PORT), timeout=5)


def test_before():
    outside()


@pytest.mark.repeat_consistency(n=3)
def test_first(consistency):
    inside()
    consistency.record("a")
    assert consistency.repeat != FAIL_AT


def test_between():
    outside()


@pytest.mark.repeat_consistency(n=2)
def test_second(consistency):
    inside()
    consistency.record("b")
"""


@pytest.mark.parametrize("fail_at", [0, 2], ids=["all-run", "stopped-by-x"])
def test_a_replay_only_scope_kept_across_a_tasks_repetitions_never_covers_another_test(
    pytester: pytest.Pytester, tcp: socket.socket, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    """Repetitions of one task without cassettes keep one network block, observer and stand-in key from the first
    to the last (a cost per repetition saved, issue 30); a test before, between or after them is never blocked and
    never sees the stand-in key, and a session stopped between two repetitions (``-x``) leaves nothing behind."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LISTENER_PORT", str(address(tcp)[1]))
    pytester.makepyfile(test_agent=CARRIED.replace("FAIL_AT", str(fail_at)))
    args = ["--consistency-record=none", "-p", "no:randomly", *(["-x"] if fail_at else [])]
    result = pytester.runpytest_inprocess(*args)
    if fail_at:
        result.assert_outcomes(passed=2, failed=1)
    else:
        result.assert_outcomes(passed=7)
    # Nothing outlives the session in this process: no block, no stand-in key.
    assert "OPENAI_API_KEY" not in os.environ
    assert not network._reasons
    socket.create_connection(address(tcp), timeout=5).close()
