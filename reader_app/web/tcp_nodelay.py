"""TCP_NODELAY on the server's listening sockets, so every connection it accepts has it.

Streamlit 1.67 binds its listening socket as ``socket.socket(family)``, protocol 0
(``streamlit/web/server/starlette/starlette_server.py: _bind_socket``), and asyncio
sets TCP_NODELAY only on sockets whose protocol is TCP (``base_events._set_nodelay``),
so every connection kept Nagle's algorithm: a reply's body, written after its headers,
could wait for the browser's delayed ACK (the transition benchmark's p95 fell from 87.9
to 58.7 ms with this, in an interleaved A/B: docs/performance.md). Linux copies the
option from a listening socket to each connection it accepts, so setting it once on the
listener, in the app's lifespan (after the bind, before the first accept), covers them
all.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

log = logging.getLogger(__name__)

Lifespan = Callable[[Any], AbstractAsyncContextManager[None]]
FD_DIR = "/proc/self/fd"  # Linux; elsewhere nothing is found and nothing changes


def _open_fds() -> list[int]:
    try:
        return [int(name) for name in os.listdir(FD_DIR)]
    except OSError:
        return []


def nodelay_on_listeners(fds: Iterable[int] | None = None) -> list[int]:
    """Set TCP_NODELAY on each listening TCP socket among ``fds`` (default: every open
    descriptor of this process); returns the descriptors it set it on. Anything else (a
    file, a pipe, a connected socket, a closed descriptor) is left as it is."""
    done = []
    for fd in _open_fds() if fds is None else fds:
        try:
            sock = socket.socket(fileno=fd)  # no new descriptor: detached below, never closed
        except OSError:
            continue  # not a socket, or closed since it was listed
        try:
            listening = (
                sock.family in (socket.AF_INET, socket.AF_INET6)
                and sock.type == socket.SOCK_STREAM
                and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 1
            )
            if listening:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                done.append(fd)
        except OSError:
            pass
        finally:
            sock.detach()
    return done


def with_nodelay(inner: Lifespan) -> Lifespan:
    """``inner`` (an ``st.App`` lifespan), after TCP_NODELAY is set on the listeners."""

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        done = nodelay_on_listeners()
        log.info("TCP_NODELAY set on %d listening socket(s)", len(done))
        async with inner(app):
            yield

    return lifespan
