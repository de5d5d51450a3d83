"""TCP_NODELAY on the listening socket reaches every connection it accepts (Linux).

The listener is bound the way Streamlit 1.67 binds its own (``socket.socket(family)``,
protocol 0, which asyncio never gives TCP_NODELAY), then accepted from for real.
"""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from reader_app.web.tcp_nodelay import nodelay_on_listeners, with_nodelay
from tests.e2e.conftest import served_env, start_app, stop_app
from tests.support.asgi_call import run_call

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="Linux only")


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET)  # as Streamlit binds it: protocol 0
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield sock
    sock.close()


def _accepted_nodelay(listener: socket.socket) -> int:
    """TCP_NODELAY of a connection the listener accepts now."""
    with socket.create_connection(listener.getsockname(), timeout=5) as client:
        conn, _ = listener.accept()
        with conn:
            client.sendall(b"x")
            assert conn.recv(1) == b"x"  # a working connection, not just a descriptor
            return conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_streamlits_binding_leaves_nagle_on_and_ours_turns_it_off(
    listener: socket.socket,
) -> None:
    assert listener.proto == 0
    assert _accepted_nodelay(listener) == 0  # the bug: asyncio skips protocol-0 sockets
    assert nodelay_on_listeners([listener.fileno()]) == [listener.fileno()]
    assert _accepted_nodelay(listener) == 1  # inherited from the listener


def test_only_listening_tcp_sockets_are_touched_and_every_descriptor_stays_open(
    listener: socket.socket, tmp_path: Path
) -> None:
    with socket.create_connection(listener.getsockname(), timeout=5) as client:
        conn, _ = listener.accept()
        with conn, (tmp_path / "f").open("w") as file:
            read_end, write_end = os.pipe()
            try:
                udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                fds = [client.fileno(), file.fileno(), read_end, udp.fileno(), 999_999]
                assert nodelay_on_listeners(fds) == []
                assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
                # every descriptor is still open and works (detached, never closed)
                client.sendall(b"ok")
                assert conn.recv(2) == b"ok"
                os.write(write_end, b"p")
                assert os.read(read_end, 1) == b"p"
                file.write("still open")
                udp.close()
            finally:
                os.close(read_end)
                os.close(write_end)
    # with no list, every open descriptor of the process is looked at: ours is found
    assert listener.fileno() in nodelay_on_listeners()
    assert _accepted_nodelay(listener) == 1


def test_the_lifespan_sets_it_before_the_apps_own_lifespan_runs(
    listener: socket.socket,
) -> None:
    seen: list[str] = []

    @asynccontextmanager
    async def inner(_app: Any) -> AsyncIterator[None]:
        seen.append(f"start {listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)}")
        yield
        seen.append("end")

    async def run() -> None:
        async with with_nodelay(inner)(object()):
            seen.append("serving")

    run_call(run())  # in a thread: Playwright may hold this worker's event loop
    assert seen == ["start 1", "serving", "end"]
    assert _accepted_nodelay(listener) == 1


def test_the_served_app_sets_it_on_its_own_listener(sqlite_url: str, tmp_path: Path) -> None:
    """The real server: its lifespan found Streamlit's listening socket (one) at start."""
    env = served_env(sqlite_url, tmp_path / "data", READERSTUDY_LOG_LEVEL="INFO")
    app = start_app(env, tmp_path / "app.log")
    try:
        log = app.log.read_text()
    finally:
        stop_app(app)
    assert "reader_app.web.tcp_nodelay: TCP_NODELAY set on 1 listening socket(s)" in log, log
