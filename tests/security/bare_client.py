"""A bare Streamlit client: the websocket and the upload route, as an attacker drives them.

No browser: an HTTP GET for the page's cookies, a websocket that sends one
``rerun_script`` BackMsg and reads the ForwardMsgs the server answers with
(the session id, and every element's text as JSON), and multipart PUTs to
``/_stcore/upload_file/<session>/<file>`` with the page's own XSRF pair.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any

from google.protobuf.json_format import MessageToDict
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

XSRF_COOKIE = "_streamlit_xsrf"


@dataclass
class Visit:
    """What one run of the app sent to a bare client."""

    session_id: str
    frames: list[str] = field(default_factory=list)  # each ForwardMsg as JSON

    @property
    def text(self) -> str:
        return "\n".join(self.frames)


def page_cookies(url: str, cookies: dict[str, str] | None = None) -> dict[str, str]:
    """GET the page as a browser would and keep the cookies it sets (XSRF, browser proof)."""
    jar = dict(cookies or {})
    for path in ("/", "/_stcore/health"):
        status, headers, _ = http_request(url, "GET", path, cookies=jar)
        assert status == 200, (path, status)
        for name, value in headers:
            if name.lower() == "set-cookie":
                parsed: SimpleCookie = SimpleCookie()
                parsed.load(value)
                jar.update({k: m.value for k, m in parsed.items()})
    return jar


def http_request(
    url: str,
    method: str,
    path: str,
    *,
    body: bytes | Iterator[bytes] | None = None,
    headers: dict[str, str] | None = None,
    cookies: dict[str, str] | None = None,
) -> tuple[int, list[tuple[str, str]], bytes]:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
    try:
        all_headers = dict(headers or {})
        if cookies:
            all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        conn.request(method, path, body=body, headers=all_headers)
        resp = conn.getresponse()
        return resp.status, resp.getheaders(), resp.read()
    finally:
        conn.close()


@contextmanager
def live_visit(
    url: str,
    *,
    cookies: dict[str, str] | None = None,
    query: str = "",
    page: str = "",
    resume: str | None = None,
    origin: str | None = None,
    headers: dict[str, str] | None = None,
    settle: float = 1.5,
    timeout: float = 60,
) -> Iterator[Visit]:
    """Open the websocket (resuming session ``resume`` if given), run the app once, read;
    the session stays live (connected) until the block ends.

    Reads until a script run has finished and nothing more came for ``settle``
    seconds (a page may switch pages or rerun once).
    """
    jar = cookies or {}
    xsrf = jar.get(XSRF_COOKIE, "")
    ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
    headers = dict(headers or {})
    if jar:
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in jar.items())
    # the browser's positional subprotocol list: name, XSRF token, session to resume
    protocols = ["streamlit", xsrf or "-", resume or "-"]
    back = BackMsg()
    back.rerun_script.query_string = query
    back.rerun_script.page_name = page
    out = Visit(session_id="")
    with connect(
        ws_url,
        additional_headers=headers,
        origin=origin,  # type: ignore[arg-type]
        subprotocols=protocols,  # type: ignore[arg-type]
        open_timeout=timeout,
        max_size=None,
    ) as ws:
        ws.send(back.SerializeToString())
        deadline = time.monotonic() + timeout
        finished = False
        while time.monotonic() < deadline:
            try:
                raw = ws.recv(timeout=settle if finished else max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                if finished:
                    break
                continue
            if isinstance(raw, str):
                continue
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                out.session_id = msg.new_session.initialize.session_id
            if kind == "script_finished":
                finished = True
            out.frames.append(json.dumps(MessageToDict(msg)))
        yield out


def visit(url: str, **kw: Any) -> Visit:
    """``live_visit``, and the websocket closed again (the tab closed)."""
    with live_visit(url, **kw) as out:
        return out


def refused_upgrade(url: str, *, origin: str, cookies: dict[str, str] | None = None) -> int:
    """The HTTP status of a refused websocket upgrade (0 if it was accepted)."""
    try:
        visit(url, cookies=cookies, origin=origin, timeout=10)
    except InvalidStatus as exc:
        return exc.response.status_code
    return 0


def put_file(
    url: str,
    session_id: str,
    data: bytes | int,
    *,
    cookies: dict[str, str],
    name: str = "study.zip",
    file_id: str | None = None,
) -> int:
    """PUT one file as the browser's uploader does (multipart, the XSRF header); its status.

    ``data``: the file's bytes, or a size: that many bytes streamed in 1 MiB chunks
    (so a large upload costs this client no memory either).
    """
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    size = data if isinstance(data, int) else len(data)
    body = _streamed(head, data, tail) if isinstance(data, int) else head + data + tail
    status, _, _ = http_request(
        url,
        "PUT",
        f"/_stcore/upload_file/{session_id}/{file_id or uuid.uuid4()}",
        body=body,
        headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Content-Length": str(len(head) + size + len(tail)),
            "X-Xsrftoken": cookies.get(XSRF_COOKIE, ""),
        },
        cookies=cookies,
    )
    return status


def _streamed(head: bytes, size: int, tail: bytes) -> Iterator[bytes]:
    yield head
    chunk = b"z" * (1024 * 1024)
    for start in range(0, size, len(chunk)):
        yield chunk[: min(len(chunk), size - start)]
    yield tail


def rss_kib(pid: int) -> int:
    """The process's resident memory (VmRSS) in KiB, from /proc."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")
